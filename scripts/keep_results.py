#!/usr/bin/env python3
"""Keeps a bench run's figures small enough to commit: docs/results/NAME.json.

Usage: scripts/keep_results.py RESULTS_DIR NAME

Writes the run's scenario, environment, verdicts and every cell with its status and figures
(the raw figures behind each cell's card, `why`, included); the load generator's full document
and the server's stats line (histograms, per-second series) are dropped (set to null).
`muxlab report docs/results/NAME.json`'s directory form is not needed: the figures and verdicts
are what README's tables quote.

A result is kept only from a run of a committed tree: one whose git revision says "-dirty" (or
says nothing) is refused, so every committed figure can be reproduced from its commit, which is
recorded as `commit`.
"""
import json, os, sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
src, name = sys.argv[1], sys.argv[2]
with open(os.path.join(src, "results.json")) as f:
    doc = json.load(f)
rev = (doc.get("environment") or {}).get("git_revision") or ""
if not rev or rev.endswith("-dirty") or rev == "unknown":
    sys.exit(f"{src}: run from a tree with uncommitted changes (git revision '{rev}'): "
             "commit, run again, then keep it")
doc["commit"] = rev
for c in doc["cells"]:
    c["load"] = None
    c["server_stats"] = None
doc["source"] = os.path.basename(os.path.normpath(src))
out = os.path.join(os.path.dirname(__file__), "..", "docs", "results", name + ".json")
with open(out, "w") as f:
    json.dump(doc, f, separators=(",", ":"))
print(out)
