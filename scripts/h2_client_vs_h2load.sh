#!/bin/bash
# The HTTP/2 load generator against h2load (Debian's nghttp2-client), both loading the same
# nginx (one worker, `http2` on its listener, pinned to CPU 0) from CPU 1, one client at a time,
# alternating, in one sitting:
#  1. client CPU per request (user + sys from /usr/bin/time, over the whole process) with the same
#     connections and streams, closed loop, -n requests each;
#  2. latency at fixed rates below nginx's capacity: muxlab's open loop (p50, p99) beside
#     h2load's --rps (mean and sd; h2load reports no percentiles).
#
# Usage: scripts/h2_client_vs_h2load.sh [CONNS] [STREAMS] [REQUESTS] [ROUNDS]   (default 10 10 400000 3)
set -euo pipefail
B=${MUXLAB:-target/release/muxlab}
C=${1:-10}; S=${2:-10}; N=${3:-400000}; R=${4:-3}
PORT=${PORT:-18590}
D=$(mktemp -d)
cat > "$D/nginx.conf" <<CONF
worker_processes 1; daemon off; master_process on; pid $D/nginx.pid; error_log $D/error.log;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000000;
  server { listen 127.0.0.1:$PORT http2; location / { return 200 "<html>hello</html>"; } } }
CONF
taskset -c 0 nginx -c "$D/nginx.conf" -p "$D" &
NGX=$!
trap 'kill -QUIT $NGX 2>/dev/null; wait $NGX 2>/dev/null; rm -rf "$D"' EXIT
sleep 0.5
U=http://127.0.0.1:$PORT/
cpu_of() { awk '{print $1 + $2}' "$1"; }
echo "client CPU per request, $C connections x $S streams, $N requests, nginx http2 on CPU 0:"
for r in $(seq 1 "$R"); do
  /usr/bin/time -f '%U %S' -o "$D/h2load.t" taskset -c 1 h2load -n "$N" -c "$C" -m "$S" -t 1 "$U" > "$D/h2load.out" 2>&1
  /usr/bin/time -f '%U %S' -o "$D/muxlab.t" taskset -c 1 "$B" load "h2c://127.0.0.1:$PORT/" -c "$C" --streams "$S" -n "$N" -t 1 --json > "$D/muxlab.json" 2>/dev/null
  h=$(cpu_of "$D/h2load.t"); m=$(cpu_of "$D/muxlab.t")
  hr=$(awk '/^finished/ {print $4}' "$D/h2load.out"); mr=$(python3 -c "import json; d=json.load(open('$D/muxlab.json')); print(round(d['throughput_rps']), d['requests'], d['error_total'])")
  python3 -c "print(f'  round $r: h2load {$h*1e6/$N:.2f} us/req ({\"$hr\"} req/s), muxlab {$m*1e6/$N:.2f} us/req (req/s, requests, errors: $mr): muxlab/h2load = {$m/$h:.2f}')"
done
echo "latency at fixed rates ($C connections x $S streams; muxlab corrected p50/p99, h2load mean +/- sd):"
for rate in 2000 20000 60000; do
  for r in $(seq 1 "$R"); do
    taskset -c 1 h2load -D 3 --rps $((rate / C)) -c "$C" -m "$S" -t 1 "$U" > "$D/h2load.out" 2>&1
    hl=$(awk '/^time for request/ {print "mean " $6 " sd " $7}' "$D/h2load.out")
    ml=$(taskset -c 1 "$B" load "h2c://127.0.0.1:$PORT/" -c "$C" --streams "$S" --rate "$rate" -d 3s -t 1 --json 2>/dev/null |
      python3 -c "import json,sys; d=json.load(sys.stdin); l=d['latency_us']; print(f\"p50 {l['p50']:.0f}us p99 {l['p99']:.0f}us mean {l['mean']:.0f}us sd {l['stdev']:.0f}us\")")
    echo "  $rate req/s round $r: h2load $hl | muxlab $ml"
  done
done
