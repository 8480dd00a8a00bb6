#!/usr/bin/env bash
# Instructions per request of the load generator (user space: its engine, client connection,
# session and books), which do not move with a noisy machine's load: `muxlab load` runs under
# callgrind twice against a fresh server outside valgrind (muxlab's epoll model), sending N and
# then 2N requests, counting only inside the engine's handling of what a wait brought
# (`Engine::dispatch`: reading, answering, sending the next, writing), so timer turns and the
# idle loop, whose number follows the wall clock, are not counted; the difference divided by N
# leaves out connecting.
# Usage: scripts/callgrind_load.sh [PROTO...]   (default: http h2 resp echo)
# PROTO: http (keep-alive, like wrk), close (one request per connection, like ab), h2 (like
# h2load), resp (the default keyed plan, like redis-benchmark), echo (128-byte messages).
# MUXLAB_CONNS=C connections (default 1: each request a round trip of its own, so a run's
# count does not depend on how many answers each read happens to bring; with more, h2 gets 10
# streams each and the count moves by a few per cent between runs). MUXLAB_BIN=PATH measures
# that binary (not built: an older build for a before/after); the server is always
# target/release/muxlab.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind"; exit 2; }
[ -n "${MUXLAB_BIN:-}" ] || cargo build --release 2>&1 | tail -n 1
bin=${MUXLAB_BIN:-target/release/muxlab}
n=${MUXLAB_BENCH_REQUESTS:-20000}
c=${MUXLAB_CONNS:-1}
streams=1
[ "$c" = 1 ] || streams=10
protos=("$@")
[ ${#protos[@]} -gt 0 ] || protos=(http h2 resp echo)
# A fresh server for each run (a keyed store filled by the first run would give the second
# hits to check where the first had misses).
instructions() {
  local requests=$1 out log pid port target
  shift
  out=$(mktemp); log=$(mktemp)
  target/release/muxlab serve --model epoll --proto "$sproto" --port 0 >"$log" 2>/dev/null &
  pid=$!
  for _ in $(seq 1 200); do grep -q listening "$log" && break; sleep 0.1; done
  port=$(sed -n 's/.*"addr":"[^"]*:\([0-9]*\)".*/\1/p' "$log" | head -n 1)
  target="$url://127.0.0.1:$port"
  [ "$url" != http ] && [ "$url" != h2c ] || target="$target/"
  doc=$(valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='*load::engine::thread::Engine::dispatch*' "$bin" load "$target" -n "$requests" -t 1 --json "$@" 2>/dev/null || true)
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  # A run that did not complete its requests cleanly measured something else: it fails.
  if ! grep -q "\"requests\":$requests," <<<"$doc" || ! grep -q '"error_total":0,' <<<"$doc"; then
    echo "load $target -n $requests did not complete cleanly: ${doc:0:300}" >&2
    rm -f "$out" "$log"; return 1
  fi
  local counted
  counted=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
  rm -f "$out" "$log"
  # Nothing counted: this build has no Engine::dispatch of its own (inlined), not a free run.
  if [ -z "$counted" ] || [ "$counted" = 0 ]; then
    echo "nothing counted inside Engine::dispatch in $bin: is it inlined in this build?" >&2; return 1
  fi
  echo "$counted"
}
for p in "${protos[@]}"; do
  case "$p" in
    http) sproto=http; url=http; more=(-c "$c") ;;
    close) sproto=http; url=http; more=(-c "$c" --close) ;;
    h2) sproto=h2; url=h2c; more=(-c "$c" --streams "$streams") ;;
    resp) sproto=resp; url=resp; more=(-c "$c") ;;
    echo) sproto=echo; url=echo; more=(-c "$c") ;;
    *) echo "PROTO is http, close, h2, resp or echo"; exit 2 ;;
  esac
  a=$(instructions "$n" "${more[@]}") || exit 1
  b=$(instructions $((2 * n)) "${more[@]}") || exit 1
  echo "load $p: $(( (b - a) / n )) instructions per request"
done
