#!/usr/bin/env bash
# Instructions per request of the load generator (user space: its engine, client connection,
# session and books), which do not move with a noisy machine's load: `muxlab load` runs under
# callgrind twice against a server outside valgrind (muxlab's epoll model, pinned apart),
# sending N and then 2N requests, and the difference divided by N leaves out start-up,
# connecting and the report.
# Usage: scripts/callgrind_load.sh [PROTO...]   (default: http h2 resp echo)
# PROTO: http (keep-alive, like wrk), close (one request per connection, like ab), h2
# (10 connections x 10 streams, like h2load), resp (the default keyed plan, like
# redis-benchmark), echo (128-byte messages). MUXLAB_BIN=PATH measures that binary (not built:
# an older build for a before/after); the server is always target/release/muxlab.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind"; exit 2; }
[ -n "${MUXLAB_BIN:-}" ] || cargo build --release 2>&1 | tail -n 1
bin=${MUXLAB_BIN:-target/release/muxlab}
n=${MUXLAB_BENCH_REQUESTS:-20000}
protos=("$@")
[ ${#protos[@]} -gt 0 ] || protos=(http h2 resp echo)
instructions() {
  local url=$1 requests=$2 out
  shift 2
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" load "$url" -n "$requests" -t 1 "$@" >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}'
  rm -f "$out"
}
for p in "${protos[@]}"; do
  case "$p" in
    http) sproto=http; url=http; more=(-c 10) ;;
    close) sproto=http; url=http; more=(-c 10 --close) ;;
    h2) sproto=h2; url=h2c; more=(-c 10 --streams 10) ;;
    resp) sproto=resp; url=resp; more=(-c 10) ;;
    echo) sproto=echo; url=echo; more=(-c 10) ;;
    *) echo "PROTO is http, close, h2, resp or echo"; exit 2 ;;
  esac
  log=$(mktemp)
  target/release/muxlab serve --model epoll --proto "$sproto" --port 0 >"$log" 2>/dev/null &
  pid=$!
  for _ in $(seq 1 200); do grep -q listening "$log" && break; sleep 0.1; done
  port=$(sed -n 's/.*"addr":"[^"]*:\([0-9]*\)".*/\1/p' "$log" | head -n 1)
  target="$url://127.0.0.1:$port/"
  [ "$url" = http ] || [ "$url" = h2c ] || target="$url://127.0.0.1:$port"
  a=$(instructions "$target" "$n" "${more[@]}"); b=$(instructions "$target" $((2 * n)) "${more[@]}")
  kill -TERM "$pid"; wait "$pid" || true
  rm -f "$log"
  echo "load $p: $(( (b - a) / n )) instructions per request"
done
