#!/usr/bin/env python3
"""Client CPU per request: muxlab load vs wrk (keep-alive) and ab (short connections).

Target: nginx with one worker pinned to CPU 0 (or a muxlab model with --model); every client
pinned to CPU 1 with one thread; CPU time from wait4() rusage of the client process.
Then 128-byte echo over 150 connections against `muxlab serve --model epoll` on CPU 0:
server CPU utilisation vs client CPU utilisation over the same run.
Usage: scripts/client_cost.py [--d 5] [--n 100000]
"""
import argparse, json, os, re, signal, subprocess, sys, time

sys.path.insert(0, os.path.dirname(__file__))
from peer_matrix import BIN, start_nginx, start_muxlab, cpu  # noqa: E402


def run(cmd):
    """Runs cmd pinned to CPU 1; returns (stdout, cpu seconds of the client)."""
    p = subprocess.Popen(["taskset", "-c", "1"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, _, ru = os.wait4(p.pid, 0)
    return out, ru.ru_utime + ru.ru_stime


def wrk_n(out):
    return int(re.search(r"(\d+) requests in", out).group(1))


def ab_n(out):
    return int(re.search(r"Complete requests:\s+(\d+)", out).group(1))


def mux_n(out):
    return json.loads(out)["requests"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--n", type=int, default=100000)
    a = ap.parse_args()
    port = 18090
    ng = start_nginx(port)
    url = f"http://127.0.0.1:{port}/"
    rows = []
    try:
        cases = [
            ("keep-alive c=100", "wrk", ["wrk", "-t1", "-c100", f"-d{a.d}s", url], wrk_n),
            ("keep-alive c=100", "muxlab", [BIN, "load", url, "-t1", "-c100", "-d", f"{a.d}s", "--json"], mux_n),
            ("short c=10", "ab", ["ab", "-q", "-n", str(a.n), "-c", "10", url], ab_n),
            ("short c=10", "muxlab", [BIN, "load", url, "-t1", "-c10", "-n", str(a.n), "--close", "--json"], mux_n),
            ("short c=100", "ab", ["ab", "-q", "-n", str(a.n), "-c", "100", url], ab_n),
            ("short c=100", "muxlab", [BIN, "load", url, "-t1", "-c100", "-n", str(a.n), "--close", "--json"], mux_n),
        ]
        for case, tool, cmd, count in cases:
            out, used = run(cmd)
            n = count(out)
            rows.append((case, tool, n, used, used / n * 1e6))
            print(f"{case:<18} {tool:<7} {n:>9} requests  client CPU {used:6.2f}s  {used / n * 1e6:6.2f} us/request", flush=True)
    finally:
        ng.send_signal(signal.SIGQUIT)
        ng.wait()
    for case in ("keep-alive c=100", "short c=10", "short c=100"):
        base = [r for r in rows if r[0] == case and r[1] != "muxlab"][0]
        mine = [r for r in rows if r[0] == case and r[1] == "muxlab"][0]
        print(f"ratio muxlab/{base[1]} ({case}): {mine[4] / base[4]:.2f}x client CPU per request")
    # Echo: does the server's core saturate before the client's?
    srv, sport = start_muxlab("epoll", None, ["--proto", "echo"])
    try:
        s0, t0 = cpu(srv.pid), time.time()
        out, used = run([BIN, "load", f"echo://127.0.0.1:{sport}", "--size", "128", "-c", "150", "-t1", "-d", f"{a.d}s", "--json"])
        s1, t1 = cpu(srv.pid), time.time()
        doc = json.loads(out)
        dur = t1 - t0
        print(f"echo 128B c=150 vs epoll: {doc['throughput_rps']:.0f} msg/s, errors {doc['errors']}, "
              f"server CPU {100 * (s1 - s0) / dur:.0f}% of its core, client CPU {100 * used / dur:.0f}% of its core")
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait()


if __name__ == "__main__":
    main()
