#!/usr/bin/env python3
"""Server CPU per request, paired: every server runs at once (pinned to one CPU, idle until its
turn), and short load bursts alternate between them round after round (the order reversed every
other round), so a change in the machine's state between rounds hits every server alike. The
figure per burst is the server tree's user + system CPU over the burst divided by the requests
the client counted; each server is compared with the first one burst by burst (paired ratios).

A neutral client can drive the load: wrk (HTTP) or rust_echo_bench's echo_bench (echo, one
thread per connection; build it from github.com/haraldh/rust_echo_bench and pass --echo-bench).

    scripts/paired_cost.py --proto http -c 100 --client wrk nginx epoll uring
    scripts/paired_cost.py --proto echo -c 500 --client echo_bench --echo-bench PATH epoll uring
    scripts/paired_cost.py --proto http -c 100 --close nginx "nginx deferred" "epoll --defer-accept"
    scripts/paired_cost.py --proto echo -c 500 epoll uring "uring --batch-wait 0" \\
        "old uring=@/tmp/muxlab-old uring"

A target is a model with its flags, `nginx`, `nginx deferred`, `floor` (the frozen floor
server of scripts/floor/floor.c, HTTP keep-alive only), or `NAME=@BINARY MODEL [FLAGS]`
to run a model from another muxlab binary (a before/after). Needs 2 CPUs (server on the first,
client on the second; --server-cpu / --client-cpu to change) and taskset.
"""
import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid):
    """User + system seconds of a process and its children (nginx's master and worker)."""
    total = 0
    pids = [pid]
    try:
        pids += [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(f[11]) + int(f[12])
    return total / TICK


def start(target, port, a, tmp):
    """Starts one target on `port`; returns (label, Popen)."""
    label, spec = target, target
    if "=" in target:
        label, spec = target.split("=", 1)
    words = shlex.split(spec)
    pin = ["taskset", "-c", a.server_cpu]
    if words[0] == "nginx":
        if not shutil.which("nginx"):
            sys.exit("nginx is not installed (apt-get install nginx-light)")
        d = os.path.join(tmp, f"nginx{port}")
        os.makedirs(d)
        deferred = " deferred" if "deferred" in words[1:] else ""
        with open(f"{d}/nginx.conf", "w") as f:
            f.write(
                f"worker_processes 1; daemon off; master_process on; pid {d}/nginx.pid; error_log {d}/error.log;\n"
                f"events {{ worker_connections 20000; }}\n"
                f"http {{ access_log off; keepalive_requests 100000000; keepalive_timeout 60s;\n"
                f'  server {{ listen 127.0.0.1:{port} backlog=1024 reuseport{deferred}; location / {{ default_type text/html; return 200 "<html>hello</html>"; }} }} }}\n'
            )
        cmd = pin + ["nginx", "-c", f"{d}/nginx.conf", "-p", d]
    elif words[0] == "floor":
        if a.proto != "http" or a.close:
            sys.exit("floor serves HTTP keep-alive only")
        built = subprocess.run([os.path.join(HERE, "floor", "build.sh")], capture_output=True, text=True)
        if built.returncode != 0:
            sys.exit(f"building the floor server failed: {built.stderr.strip()}")
        cmd = pin + [os.path.join(HERE, "..", built.stdout.strip()), str(port)]
    else:
        binary = a.bin
        if words[0].startswith("@"):
            binary, words = words[0][1:], words[1:]
        cmd = pin + [binary, "serve", "--model", words[0], "--proto", a.proto, "--port", str(port)]
        # Pinned to one CPU, a model with workers runs one (the default: the CPUs available).
        cmd += words[1:]
    return label, subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def burst(a, port, source):
    """One load burst against `port`; returns the requests completed (or None and the reason)."""
    pin = ["taskset", "-c", a.client_cpu]
    if a.client == "wrk":
        url = f"http://127.0.0.1:{port}/"
        hdr = ["-H", "Connection: close"] if a.close else []
        out = subprocess.run(pin + ["wrk", "-t1", "-c", str(a.c), "-d", f"{max(1, round(a.secs))}s"] + hdr + [url],
                             capture_output=True, text=True)
        m = re.search(r"(\d+) requests in", out.stdout)
        return (int(m.group(1)), None) if m else (None, (out.stdout + out.stderr)[-300:])
    if a.client == "echo_bench":
        out = subprocess.run(pin + [a.echo_bench, "-a", f"127.0.0.1:{port}", "-l", "128", "-c", str(a.c),
                                    "-t", str(max(1, round(a.secs)))], capture_output=True, text=True)
        m = re.search(r"Responses: (\d+)", out.stdout)
        return (int(m.group(1)), None) if m else (None, (out.stdout + out.stderr)[-300:])
    url = f"echo://127.0.0.1:{port}" if a.proto == "echo" else f"http://127.0.0.1:{port}/"
    cmd = pin + [a.bin, "load", url, "-c", str(a.c), "-d", f"{round(a.secs * 1000)}ms", "--json"]
    if a.proto == "echo":
        cmd += ["--size", "128"]
    if a.close:
        # A fresh source address per burst: TIME_WAIT left by one burst does not slow the next.
        cmd += ["--close", "--bind", source]
    out = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r'"requests":\s*(\d+)', out.stdout)
    return (int(m.group(1)), None) if m else (None, out.stderr[-300:])


def quartiles(v):
    v = sorted(v)
    return v[len(v) // 4], statistics.median(v), v[(3 * len(v)) // 4]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="targets: " + __doc__.split("\n\n")[-1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("targets", nargs="+", help="models (with flags), nginx, 'nginx deferred', floor, NAME=@BIN MODEL")
    p.add_argument("--proto", choices=["http", "echo"], default="http")
    p.add_argument("-c", type=int, default=100, help="connections (default 100)")
    p.add_argument("--close", action="store_true", help="HTTP, one request per connection")
    p.add_argument("--rounds", type=int, default=8, help="bursts per target (default 8)")
    p.add_argument("--secs", type=float, default=1.0, help="seconds per burst (default 1; wrk and echo_bench: whole seconds)")
    p.add_argument("--client", choices=["muxlab", "wrk", "echo_bench"], default="muxlab")
    p.add_argument("--echo-bench", default=shutil.which("echo_bench") or "echo_bench", help="rust_echo_bench's binary")
    p.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "muxlab"), help="muxlab binary")
    p.add_argument("--server-cpu", default="0")
    p.add_argument("--client-cpu", default="1")
    a = p.parse_args()
    if a.client == "wrk" and a.proto != "http" or a.client == "echo_bench" and a.proto != "echo":
        sys.exit(f"--client {a.client} does not speak {a.proto}")
    if a.client == "echo_bench" and a.close:
        sys.exit("--close is for HTTP")
    for tool in ["taskset", a.client if a.client != "muxlab" else None]:
        if tool == "echo_bench":
            tool = a.echo_bench
        if tool and not shutil.which(tool):
            sys.exit(f"{tool} not found")
    if not os.path.exists(a.bin):
        sys.exit(f"{a.bin} not found: cargo build --release first, or pass --bin")
    tmp = tempfile.mkdtemp(prefix="paired-cost-")
    servers = []
    try:
        for i, t in enumerate(a.targets):
            servers.append((*start(t, 19900 + i, a, tmp), 19900 + i))
        time.sleep(1.0)
        for label, proc, _ in servers:
            if proc.poll() is not None:
                sys.exit(f"{label} did not start: {proc.stderr.read().decode()[-300:]}")
        cost = {label: [] for label, _, _ in servers}
        burst_no = 0
        for r in range(a.rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            for label, proc, port in order:
                burst_no += 1
                source = f"127.0.{1 + burst_no // 240}.{10 + burst_no % 240}"
                before = tree_cpu(proc.pid)
                n, why = burst(a, port, source)
                spent = tree_cpu(proc.pid) - before
                if not n:
                    sys.exit(f"{label}: the load failed: {why}")
                cost[label].append(spent / n * 1e6)
            print(f"round {r + 1}/{a.rounds}: " + "  ".join(f"{k} {v[-1]:.2f}" for k, v in cost.items()), file=sys.stderr)
    finally:
        for _, proc, _ in servers:
            proc.terminate()
        for _, proc, _ in servers:
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    base = servers[0][0]
    print(f"{a.proto} c={a.c}{' close' if a.close else ''}, client {a.client}, {a.rounds} bursts of {a.secs}s each")
    print(f"{'target':28} {'us/req median [IQR]':>24} {'/ ' + base + ' (paired) median [IQR]':>34}")
    for label, v in cost.items():
        lo, med, hi = quartiles(v)
        ratio = ""
        if label != base:
            rlo, rmed, rhi = quartiles([b / a for a, b in zip(cost[base], v)])
            ratio = f"{rmed:.3f} [{rlo:.3f}-{rhi:.3f}]"
        print(f"{label:28} {med:10.2f} [{lo:.2f}-{hi:.2f}] {ratio:>34}")


if __name__ == "__main__":
    main()
