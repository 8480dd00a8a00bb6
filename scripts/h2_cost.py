#!/usr/bin/env python3
"""Server CPU per request, HTTP/2 against HTTP/1.1, with h2load (Debian's nghttp2-client) as the
client of both.

`muxlab serve --proto h2` (which answers HTTP/1.1 on the same port) runs on CPU 0, h2load on
CPU 1; the server's CPU is read from /proc/PID/task/*/schedstat (ns) around each run. Cases: h2
with 10 connections x 10 streams, HTTP/1.1 keep-alive on 10 connections, HTTP/1.1 pipelined 10
deep, h2 with 100 connections x 1 stream; each ROUNDS times, a warm-up of 20,000 requests first.

Usage: scripts/h2_cost.py [--model epoll] [--requests 300000] [--rounds 2] [--json FILE]

With --json, writes the figures (and the binary's commit and dirty flag, from `muxlab --version`,
as `build_commit` and `build_dirty`) for `muxlab docs` to render: docs/results/h2-cost.json is such a file.
"""
import argparse, json, os, re, subprocess, sys, time

BIN = os.environ.get("MUXLAB") or os.path.join(os.path.dirname(__file__), "..", "target", "release", "muxlab")
CASES = [
    ("h2, 10 connections x 10 streams", ["-c", "10", "-m", "10"]),
    ("HTTP/1.1 keep-alive, 10 connections", ["--h1", "-c", "10", "-m", "1"]),
    ("HTTP/1.1 pipelined 10 deep, 10 connections", ["--h1", "-c", "10", "-m", "10"]),
    ("h2, 100 connections x 1 stream", ["-c", "100", "-m", "1"]),
]


def build():
    """The binary's commit and whether its tree was dirty (`muxlab --version`)."""
    v = subprocess.run([BIN, "--version"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"commit ([0-9a-f]+)(, dirty)?", v)
    return (m.group(1), bool(m.group(2))) if m else (None, None)


def schedstat(pid):
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def h2load(url, args, n):
    out = subprocess.run(["taskset", "-c", "1", "h2load", *args, "-n", str(n), url],
                         capture_output=True, text=True).stdout
    ok = re.search(r"(\d+) succeeded", out)
    rps = re.search(r"^finished in .*?, ([\d.]+) req/s", out, re.M)
    return int(ok.group(1)) if ok else 0, float(rps.group(1)) if rps else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="epoll")
    ap.add_argument("--requests", type=int, default=300000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    if subprocess.run(["which", "h2load"], capture_output=True).returncode != 0:
        sys.exit("h2load is not installed (apt-get install nghttp2-client)")
    commit, dirty = build()
    srv = subprocess.Popen([BIN, "serve", "--model", a.model, "--proto", "h2", "--port", "0", "--cpus", "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(json.loads(srv.stdout.readline())["addr"].rsplit(":", 1)[1])
        url = f"http://127.0.0.1:{port}/"
        rows = []
        for r in range(1, a.rounds + 1):
            for case, args in CASES:
                h2load(url, args, 20000)
                before = schedstat(srv.pid)
                ok, rps = h2load(url, args, a.requests)
                ns = (schedstat(srv.pid) - before) / a.requests
                rows.append({"round": r, "case": case, "h2load_args": " ".join(args),
                             "server_ns_per_request": ns, "succeeded": ok, "rps": rps})
                print(f"round {r}: {case:<44} {ns:7.0f} ns/request  ({ok} succeeded, {rps} req/s)", flush=True)
    finally:
        srv.terminate()
        srv.wait()
    doc = {"command": " ".join(["scripts/h2_cost.py", *sys.argv[1:]]), "model": a.model,
           "requests": a.requests, "rounds": a.rounds, "build_commit": commit, "build_dirty": dirty,
           "date": time.strftime("%Y-%m-%d"), "rows": rows}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
        print(a.json)


main()
