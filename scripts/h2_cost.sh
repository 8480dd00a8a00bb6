#!/bin/bash
# Server CPU per request, HTTP/2 against HTTP/1.1, with h2load (Debian's nghttp2-client) as the
# client of both: `muxlab serve --proto h2` (which answers HTTP/1.1 on the same port) on CPU 0,
# h2load on CPU 1; the server's CPU is read from /proc/PID/task/*/schedstat (ns) around each
# run. Cases: h2 with 10 connections x 10 streams, HTTP/1.1 keep-alive on 10 connections, HTTP/1.1
# pipelined 10 deep, h2 with 100 connections x 1 stream. Two rounds.
#
# Usage: scripts/h2_cost.sh [MODEL] [REQUESTS]    (default: epoll 300000)
set -euo pipefail
B=${MUXLAB:-target/release/muxlab}
MODEL=${1:-epoll}
N=${2:-300000}
PORT=${PORT:-8555}
$B serve --model "$MODEL" --proto h2 --port "$PORT" --cpus 0 > /dev/null &
SRV=$!
trap 'kill $SRV 2>/dev/null' EXIT
sleep 0.7
cpu() { local t=0 a b c; for f in /proc/$SRV/task/*/schedstat; do read -r a b c < "$f"; t=$((t + a)); done; echo $t; }
run() {
  local label=$1; shift
  taskset -c 1 h2load "$@" -n 20000 "http://127.0.0.1:$PORT/" > /dev/null 2>&1
  local before after out
  before=$(cpu)
  out=$(taskset -c 1 h2load "$@" -n "$N" "http://127.0.0.1:$PORT/" 2>&1)
  after=$(cpu)
  printf '%-28s %6d ns/request  (%s, %s req/s)\n' "$label" $(( (after - before) / N )) \
    "$(echo "$out" | grep -o '[0-9]* succeeded')" "$(echo "$out" | awk '/^finished/ {print $4}')"
}
for _ in 1 2; do
  run "h2 10 conns x 10 streams" -c 10 -m 10
  run "http/1.1 keep-alive 10" --h1 -c 10 -m 1
  run "http/1.1 pipelined 10x10" --h1 -c 10 -m 10
  run "h2 100 conns x 1 stream" -c 100 -m 1
done
