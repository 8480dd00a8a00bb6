#!/usr/bin/env python3
"""Soak: every kind of client at once against a model, for minutes, and what the server keeps.

For each model (default: reactor, uring, procs-accept) one `muxlab serve --proto http` runs while,
at the same time:
  - keep-alive clients (muxlab load, closed loop),
  - short connections (muxlab load --close),
  - uploads whose echoed bodies are verified byte for byte (muxlab load --body-size),
  - slow readers (pipelined requests, read a little at a time),
  - dribblers (a request head one byte every 200 ms: answered 408 by --header-timeout),
  - resets (a connection reset mid-request).
It reports the server's RSS after the warm-up and at the end (growth must stay under 1 %), its
open descriptors before and after the run (must come back to the baseline), and the errors of
the well-behaved clients (must be zero). Not part of CI: run it by hand.

    python3 scripts/soak.py [--minutes-per-model 3.4] [--models reactor,uring,procs-accept]
"""

import argparse
import json
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

BIN = os.environ.get("MUXLAB", "target/release/muxlab")


def tree(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def rss_kib(pid, field="Pss:"):
    """A field of /proc/PID/smaps_rollup summed over the tree: Pss (shared pages divided among
    the processes sharing them) or Anonymous (heap and stacks: what a leak grows)."""
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith(field):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def fds(pid):
    n = 0
    for p in tree(pid):
        try:
            n += len(os.listdir(f"/proc/{p}/fd"))
        except OSError:
            pass
    return n


def slow_reader(addr, stop, errors):
    while not stop.is_set():
        try:
            s = socket.create_connection(addr, timeout=10)
            s.sendall(b"GET / HTTP/1.1\r\nHost: s\r\n\r\n" * 2000)
            got = bytearray()
            while got.count(b"<html>hello</html>") < 2000:
                chunk = s.recv(2048)
                if not chunk:
                    break
                got += chunk
                time.sleep(0.002)
            if got.count(b"<html>hello</html>") != 2000:
                errors.append(f"slow reader got {got.count(b'<html>hello</html>')} of 2000 replies")
            s.close()
        except OSError as e:
            errors.append(f"slow reader: {e}")
            time.sleep(0.5)


def dribbler(addr, stop, counts):
    while not stop.is_set():
        s = None
        try:
            s = socket.create_connection(addr, timeout=10)
            for b in b"GET / HTTP/1.1\r\nHost: d\r\nX-Slow: " + b"a" * 100:
                if stop.is_set():
                    break
                s.sendall(bytes([b]))
                time.sleep(0.2)
        except OSError:
            counts["dribbler_cut"] = counts.get("dribbler_cut", 0) + 1
        finally:
            if s is not None:
                s.close()


def resetter(addr, stop, counts):
    while not stop.is_set():
        try:
            s = socket.create_connection(addr, timeout=10)
            s.sendall(b"POST / HTTP/1.1\r\nHost: r\r\nContent-Length: 100000\r\n\r\n" + os.urandom(random.randint(0, 5000)))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            counts["resets"] = counts.get("resets", 0) + 1
        except OSError:
            pass
        time.sleep(0.05)


def soak(model, minutes):
    args = [BIN, "serve", "--model", model, "--port", "0", "--cpus", "0", "--header-timeout", "2s"]
    if model != "reactor":
        args += ["--workers", "2"]
    srv = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    listening = json.loads(srv.stdout.readline())
    host, port = listening["addr"].rsplit(":", 1)
    addr = (host, int(port))
    url = f"http://{listening['addr']}/"
    time.sleep(1)  # workers set up their loops, rings and listeners
    fd_base = fds(srv.pid)
    secs = int(minutes * 60)
    common = ["--cpus", "1", "-t", "1", "--json", "-d", f"{secs}s"]
    loads = {
        "keep-alive": [BIN, "load", url, "-c", "50", "--think", "1ms"] + common,
        "short": [BIN, "load", url, "--close", "-c", "4", "--think", "5ms"] + common,
        "uploads": [BIN, "load", url, "--body-size", "32KiB", "-c", "8", "--think", "5ms"] + common,
    }
    procs = {k: subprocess.Popen(v, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k, v in loads.items()}
    stop = threading.Event()
    errors, counts = [], {}
    threads = [threading.Thread(target=slow_reader, args=(addr, stop, errors)) for _ in range(2)]
    threads += [threading.Thread(target=dribbler, args=(addr, stop, counts)) for _ in range(4)]
    threads += [threading.Thread(target=resetter, args=(addr, stop, counts)) for _ in range(2)]
    for t in threads:
        t.start()
    warmup = min(120, secs // 2)
    time.sleep(warmup)
    rss_warm, anon_warm = rss_kib(srv.pid), rss_kib(srv.pid, "Anonymous:")
    samples, anon = [], []
    # Samples while every client still runs: the clients run the same binary, so when they
    # exit the server's proportional share of the shared text pages (its PSS) rises.
    while all(p.poll() is None for p in procs.values()):
        pss, a = rss_kib(srv.pid), rss_kib(srv.pid, "Anonymous:")
        if any(p.poll() is not None for p in procs.values()):
            break
        samples.append(pss)
        anon.append(a)
        time.sleep(5)
    rss_end = samples[-1] if samples else rss_kib(srv.pid)
    anon_end = anon[-1] if anon else rss_kib(srv.pid, "Anonymous:")
    stop.set()
    for t in threads:
        t.join()
    time.sleep(3)  # dribblers' last connections reach their header timeout
    fd_after = fds(srv.pid)
    results = {}
    for k, p in procs.items():
        out, err = p.communicate()
        doc = json.loads(out)
        results[k] = {"requests": doc["requests"], "errors": doc["errors"], "rps": round(doc["throughput_rps"])}
    srv.terminate()
    out, _ = srv.communicate(timeout=30)
    stats = json.loads(out.strip().splitlines()[-1])["totals"]
    growth = 100.0 * (rss_end - rss_warm) / max(rss_warm, 1)
    anon_growth = 100.0 * (anon_end - anon_warm) / max(anon_warm, 1)
    ok = growth < 1.0 and anon_growth < 1.0 and fd_after == fd_base and not errors and all(not r["errors"] for r in results.values())
    print(json.dumps({
        "model": model, "minutes": minutes, "ok": ok,
        "rss_kib_after_warmup": rss_warm, "rss_kib_end": rss_end, "rss_growth_pct": round(growth, 3),
        "rss_kib_max": max(samples) if samples else rss_end,
        "rss_kib_every_20s": samples[::4],
        "anon_kib_after_warmup": anon_warm, "anon_kib_end": anon_end, "anon_growth_pct": round(anon_growth, 3),
        "anon_kib_every_20s": anon[::4],
        "fds_before": fd_base, "fds_after": fd_after,
        "clients": results, "slow_reader_errors": errors[:5], "counts": counts,
        "server": {k: stats[k] for k in ["accepted", "closed", "requests", "closed_header_timeout",
                                         "closed_send_timeout", "closed_idle", "output_paused"]},
    }))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes-per-model", type=float, default=3.4)
    ap.add_argument("--models", default="reactor,uring,procs-accept")
    a = ap.parse_args()
    if not os.path.exists(BIN):
        sys.exit(f"{BIN} not found: run cargo build --release first (or set MUXLAB)")
    ok = all([soak(m, a.minutes_per_model) for m in a.models.split(",")])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
