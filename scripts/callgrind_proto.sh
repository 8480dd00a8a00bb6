#!/usr/bin/env bash
# Instructions per request of the proto layer (benches/proto.rs under callgrind), which do not
# move with a noisy machine's load: each case runs twice, with N and 2N requests, and the
# difference divided by N leaves out start-up and warm-up.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind"; exit 2; }
cargo bench --bench proto --no-run 2>&1 | tail -n 1
bench=$(ls -t target/release/deps/proto-* | grep -v '\.d$' | head -n 1)
n=${MUXLAB_BENCH_REQUESTS:-20000}
names=("http GET" "http POST 64 B echoed" "http 16 pipelined GETs" "echo 128 B")
instructions() {
  local out; out=$(mktemp)
  MUXLAB_BENCH_CASE=$1 MUXLAB_BENCH_REQUESTS=$2 valgrind --tool=callgrind --callgrind-out-file="$out" "$bench" >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}'
  rm -f "$out"
}
for c in 0 1 2 3; do
  a=$(instructions "$c" "$n"); b=$(instructions "$c" $((2 * n)))
  echo "${names[$c]}: $(( (b - a) / n )) instructions per request"
done
