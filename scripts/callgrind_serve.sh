#!/usr/bin/env bash
# Instructions per request of a whole server (user space: the model's loop, the session, the
# counters), which do not move with a noisy machine's load: `muxlab serve --model M` runs under
# callgrind twice, serving N and then 2N keep-alive requests from `muxlab load`, and the
# difference divided by N leaves out start-up, accepting and shutdown.
# Usage: scripts/callgrind_serve.sh [MODEL...]   (default: epoll reactor; `floor`: the frozen
# floor server of scripts/floor/floor.c, built here, HTTP only; `redis-server`: Debian's, with
# MUXLAB_PROTO=resp)
# MUXLAB_PROTO=h2: HTTP/2, 10 connections x 10 streams; MUXLAB_PROTO=resp: redis's protocol,
# the load generator's default keyed plan (GET and SET over its keys); MUXLAB_CLOSE=1: one request per
# connection (ab's way: accepting and closing counted in); MUXLAB_BIN=PATH: that binary (not
# built: an older build for a before/after); MUXLAB_METRICS=1: the server runs with
# `--metrics 127.0.0.1:0` and is scraped every second while it serves (what live metrics cost;
# MUXLAB_METRICS=quiet: not scraped, the request path's cost alone).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind"; exit 2; }
bin=${MUXLAB_BIN:-target/release/muxlab}
[ -n "${MUXLAB_BIN:-}" ] || cargo build --release 2>&1 | tail -n 1
proto=${MUXLAB_PROTO:-http}
case "$proto" in
  http) scheme=http; more=() ;;
  h2) scheme=h2c; more=(--streams 10) ;;
  resp) scheme=resp; more=() ;;
  *) echo "MUXLAB_PROTO is http, h2 or resp"; exit 2 ;;
esac
kind=keep-alive
if [ -n "${MUXLAB_CLOSE:-}" ]; then more+=(--close); kind=close; fi
n=${MUXLAB_BENCH_REQUESTS:-20000}
models=("$@")
. scripts/peer_server.sh
for m in "${models[@]}"; do peer_check "$m" "$proto" "${MUXLAB_CLOSE:-}"; done
[ ${#models[@]} -gt 0 ] || models=(epoll reactor)
instructions() {
  local model=$1 requests=$2 out log pid port
  out=$(mktemp); log=$(mktemp)
  local metrics=() scraper=
  [ -z "${MUXLAB_METRICS:-}" ] || metrics=(--metrics 127.0.0.1:0)
  # One file per process (%p): a forked child's (a connection's, a worker's, the metrics
  # endpoint's) instructions are counted too, summed below.
  local server=("$bin" serve --model "$model" --proto "$proto" --port 0 ${metrics[@]+"${metrics[@]}"})
  peer_command "$model" || true
  valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$out.%p" "${server[@]}" >"$log" 2>/dev/null &
  pid=$!
  # (Inside this function's $(...), bash does not stop at a failure: the empty port is checked.)
  port=$(peer_listening "$log" "$pid") || true
  [ -n "$port" ] || { rm -f "$out" "$out".* "$log"; echo "the server for $model did not listen" >&2; exit 1; }
  if [ -n "${MUXLAB_METRICS:-}" ] && [ "$MUXLAB_METRICS" != quiet ]; then
    local at; at=$(sed -n 's/.*"metrics":"\([^"]*\)".*/\1/p' "$log" | head -n 1)
    (while curl -s -o /dev/null "http://$at/metrics"; do sleep 1; done) &
    scraper=$!
  fi
  target/release/muxlab load "$scheme://127.0.0.1:$port/" -c 10 -n "$requests" -t 1 ${more[@]+"${more[@]}"} >/dev/null \
    || { kill -TERM "$pid"; wait "$pid" || true; rm -f "$out" "$out".* "$log"; echo "the load against $model failed" >&2; exit 1; }
  [ -z "$scraper" ] || kill "$scraper" 2>/dev/null || true
  kill -TERM "$pid"; wait "$pid" || true
  for f in "$out".*; do callgrind_annotate "$f" 2>/dev/null; done | awk '/PROGRAM TOTALS/ {gsub(",","",$1); s += $1} END {print s}'
  rm -f "$out" "$out".* "$log"
}
for m in "${models[@]}"; do
  a=$(instructions "$m" "$n"); b=$(instructions "$m" $((2 * n)))
  echo "$m ($proto): $(( (b - a) / n )) instructions per $kind request"
done
