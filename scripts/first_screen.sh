#!/bin/bash
# Makes docs/first-screen.png, the picture on README's first screen: the first 1,280 x 800
# pixels of the bench report of the committed quick run, docs/results/quick.json, in headless
# Chromium. README's caption (a `muxlab docs` block) names that run; run this again whenever
# the file or the report changes, then `muxlab docs`.
#
# Usage: scripts/first_screen.sh        (needs chromium and a release build: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${MUXLAB:-target/release/muxlab}
IN=docs/results/quick.json
OUT=docs/first-screen.png
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$CHROME" ] || { echo "chromium is not installed (apt-get install chromium)" >&2; exit 1; }
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
cp "$IN" "$D/run.json"
"$B" report "$D/run.json" > /dev/null
"$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$D/profile" --window-size=1280,800 --screenshot="$D/shot.png" \
  "file://$D/run.report.html" > /dev/null 2>&1
cp "$D/shot.png" "$OUT"
echo "$OUT: the first screen of the report of $IN"
