#!/usr/bin/env bash
# System calls and wake-ups per request of a whole server (every thread and child), counted by
# strace: `muxlab serve --model M` (or `floor`, scripts/floor/floor.c) runs under `strace -f -c`
# twice, serving N and then 2N keep-alive requests from `muxlab load` (c=10), and the difference
# divided by N leaves out start-up, accepting and shutdown. Wake-ups are the waiting calls'
# returns (epoll_wait, epoll_pwait, io_uring_enter, poll, select, futex). strace slows every
# system call, so a server batches more under it than without: read the counts as what a
# request asks of the kernel, beside the floor's measured the same way.
# Usage: scripts/syscalls_serve.sh [MODEL...]   (default: floor epoll; with MUXLAB_PROTO=resp,
# redis-server reactor)
# MUXLAB_PROTO=resp: redis's protocol, the load generator's default keyed plan (GET and SET).
# MUXLAB_BIN=PATH: that binary (default target/release/muxlab, built).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v strace >/dev/null || { echo "strace is missing: apt-get install strace"; exit 2; }
bin=${MUXLAB_BIN:-target/release/muxlab}
[ -n "${MUXLAB_BIN:-}" ] || cargo build --release 2>&1 | tail -n 1
n=${MUXLAB_BENCH_REQUESTS:-20000}
models=("$@")
. scripts/peer_server.sh
proto=${MUXLAB_PROTO:-http}
case "$proto" in
  http) url=http://127.0.0.1 ;;
  resp) url=resp://127.0.0.1 ;;
  *) echo "MUXLAB_PROTO is http or resp"; exit 2 ;;
esac
if [ ${#models[@]} -eq 0 ]; then
  if [ "$proto" = resp ]; then models=(redis-server reactor); else models=(floor epoll); fi
fi
for m in "${models[@]}"; do peer_check "$m" "$proto"; done
# Prints "TOTAL WAITS" for a run of `requests` against `model`.
counts() {
  local model=$1 requests=$2 out log pid port
  out=$(mktemp); log=$(mktemp)
  local server=("$bin" serve --model "$model" --proto "$proto" --port 0)
  peer_command "$model" || true
  strace -f -c -o "$out" "${server[@]}" >"$log" 2>/dev/null &
  pid=$!
  port=$(peer_listening "$log" "$pid")
  if ! target/release/muxlab load "$url:$port/" -c 10 -n "$requests" -t 1 >/dev/null; then
    pkill -TERM -P "$pid" || true; wait "$pid" || true; rm -f "$out" "$log"
    echo "the load against $model failed" >&2; exit 1
  fi
  # The server, not strace (which outlives a SIGTERM of its own): strace ends with it.
  kill -TERM "$(pgrep -P "$pid" | head -n 1)"; wait "$pid" || true
  awk '$NF == "total" {t = $4} $NF ~ /^(epoll_wait|epoll_pwait|epoll_pwait2|io_uring_enter|poll|ppoll|select|pselect6|futex)$/ {w += $4} END {print t + 0, w + 0}' "$out"
  rm -f "$out" "$log"
}
for m in "${models[@]}"; do
  read -r ta wa < <(counts "$m" "$n")
  read -r tb wb < <(counts "$m" $((2 * n)))
  awk -v m="$m" -v n="$n" -v ta="$ta" -v tb="$tb" -v wa="$wa" -v wb="$wb" \
    'BEGIN {printf "%s: %.2f system calls, %.2f wake-ups per keep-alive request\n", m, (tb - ta) / n, (wb - wa) / n}'
done
