#!/usr/bin/env python3
"""Keeps a bench run's figures small enough to commit: docs/results/NAME.json.

Usage: scripts/keep_results.py RESULTS_DIR NAME

Writes the run's scenario, environment, verdicts and every cell with its status and figures;
the load generator's full document and the server's stats line (histograms, per-second series)
are dropped (set to null). `muxlab report docs/results/NAME.json`'s directory form is not
needed: the figures and verdicts are what README's tables quote.
"""
import json, os, sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
src, name = sys.argv[1], sys.argv[2]
with open(os.path.join(src, "results.json")) as f:
    doc = json.load(f)
for c in doc["cells"]:
    c["load"] = None
    c["server_stats"] = None
doc["source"] = os.path.basename(os.path.normpath(src))
out = os.path.join(os.path.dirname(__file__), "..", "docs", "results", name + ".json")
with open(out, "w") as f:
    json.dump(doc, f, separators=(",", ":"))
print(out)
