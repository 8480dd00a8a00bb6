#!/usr/bin/env python3
"""Keeps a bench run's figures small enough to commit: docs/results/NAME.json.

Usage: scripts/keep_results.py RESULTS_DIR NAME [OUT_DIR]

OUT_DIR defaults to the repository's docs/results.

Writes the run's scenario, environment, verdicts and every cell with its status and figures
(the raw figures behind each cell's card, `why`, included); the load generator's full document
and the server's stats line (histograms, per-second series) are dropped (set to null).
`muxlab report docs/results/NAME.json` and `muxlab explain docs/results/NAME.json` read the
kept file directly.

A result is kept only from a binary built from a committed tree that is in this branch's
history: the binary's own commit and dirty flag, fixed into it at build time
(`environment.build_commit`, `environment.build_dirty`; `muxlab --version` says them), not the
git state of the directory it ran in. A run whose binary was dirty, whose commit is not an
ancestor of HEAD, or that does not say (written before builds recorded it), is refused. The
binary's commit is recorded as `commit`.
"""
import json, os, subprocess, sys

if len(sys.argv) not in (3, 4):
    sys.exit(__doc__)
src, name = sys.argv[1], sys.argv[2]
path = src if os.path.isfile(src) else os.path.join(src, "results.json")
with open(path) as f:
    doc = json.load(f)
env = doc.get("environment") or {}
commit, dirty = env.get("build_commit"), env.get("build_dirty")
if not commit:
    sys.exit(f"{src}: the binary that made it did not record its commit (built outside a git "
             "checkout, or before builds recorded it): build from a commit, run again, then keep it")
if dirty is not False:
    sys.exit(f"{src}: made by a binary built from a tree with uncommitted changes "
             f"(commit {commit[:12]}, dirty): commit, build, run again, then keep it")
top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
known = subprocess.run(["git", "-C", top, "merge-base", "--is-ancestor", commit, "HEAD"],
                       capture_output=True)
if known.returncode != 0:
    sys.exit(f"{src}: made by a binary built from {commit[:12]}, which is not in this branch's "
             "history (HEAD does not contain it): run it from a build of this branch")
doc["commit"] = commit
for c in doc["cells"]:
    c["load"] = None
    c["server_stats"] = None
doc["source"] = os.path.basename(os.path.normpath(src))
out_dir = sys.argv[3] if len(sys.argv) == 4 else os.path.join(top, "docs", "results")
out = os.path.join(out_dir, name + ".json")
with open(out, "w") as f:
    json.dump(doc, f, separators=(",", ":"))
print(out)
