#!/usr/bin/env python3
"""Runs ab and wrk from Debian's packages against muxlab models and nginx (one worker).

Server pinned to CPU 0, client to CPU 1. For each cell: throughput and the server's CPU time
per request (user + sys of its whole process tree, from /proc, over the client's run).
Usage: scripts/peer_matrix.py [--models a,b] [--n 100000] [--conc 1,10,100,1000] [--wrk-d 5]
Needs: ab (apache2-utils), wrk, nginx (nginx-light), a release build of muxlab.
"""
import argparse, json, os, re, shutil, signal, subprocess, sys, tempfile, time

BIN = os.path.join(os.path.dirname(__file__), "..", "target", "release", "muxlab")
HZ = os.sysconf("SC_CLK_TCK")


def tree(pid):
    out, i = [pid], 0
    while i < len(out):
        p = out[i]
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    out += [int(x) for x in f.read().split()]
        except OSError:
            pass
        i += 1
    return out


def cpu(pid):
    """user+sys seconds of pid's tree, including reaped children (cutime/cstime)."""
    total = 0.0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / HZ
        except OSError:
            pass
    return total


def start_muxlab(model, workers, extra=()):
    args = [BIN, "serve", "--model", model, "--port", "0", "--cpus", "0", *extra]
    if workers:
        args += ["--workers", str(workers)]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = json.loads(p.stdout.readline())
    return p, int(line["addr"].rsplit(":", 1)[1])


def start_nginx(port):
    d = tempfile.mkdtemp(prefix="muxlab-nginx-")
    conf = f"""worker_processes 1; worker_cpu_affinity 1; daemon off; master_process on;
pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 20000; }}
http {{ access_log off; keepalive_requests 1000000;
  server {{ listen 127.0.0.1:{port} backlog=1024; location / {{ default_type text/html; return 200 "<html>hello</html>"; }} }} }}
"""
    with open(f"{d}/nginx.conf", "w") as f:
        f.write(conf)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    p = subprocess.Popen(["taskset", "-c", "0", nginx, "-c", f"{d}/nginx.conf", "-p", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return p


def measure(pid, cmd):
    c0 = cpu(pid)
    r = subprocess.run(["taskset", "-c", "1"] + cmd, capture_output=True, text=True, timeout=600)
    c1 = cpu(pid)
    return r.stdout + r.stderr, c1 - c0


def ab(pid, port, n, c):
    out, used = measure(pid, ["ab", "-q", "-r", "-s", "10", "-n", str(n), "-c", str(c), f"http://127.0.0.1:{port}/"])
    rps = re.search(r"Requests per second:\s+([\d.]+)", out)
    done = re.search(r"Complete requests:\s+(\d+)", out)
    failed = re.search(r"Failed requests:\s+(\d+)", out)
    if not rps:
        return {"rps": None, "error": out.strip().splitlines()[-1] if out.strip() else "no output"}
    k = int(done.group(1))
    return {"rps": float(rps.group(1)), "done": k, "failed": int(failed.group(1)), "cpu_us": used / max(k, 1) * 1e6}


def wrk(pid, port, d):
    out, used = measure(pid, ["wrk", "-t1", "-c100", f"-d{d}s", f"http://127.0.0.1:{port}/"])
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    reqs = re.search(r"(\d+) requests in", out)
    if not rps:
        return {"rps": None, "error": out.strip()[-200:]}
    k = int(reqs.group(1))
    return {"rps": float(rps.group(1)), "done": k, "cpu_us": used / max(k, 1) * 1e6}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="nginx,iterative,fork,thread,prefork,prethread,select,poll,epoll")
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--conc", default="1,10,100,1000")
    ap.add_argument("--wrk-d", type=int, default=5)
    ap.add_argument("--workers", type=int, default=1, help="workers for models that have them")
    ap.add_argument("--json", help="write all results here")
    a = ap.parse_args()
    # A kept result must be reproducible from its commit: the binary's own (fixed into it when
    # it was built, as `muxlab --version` says), refused where its tree had uncommitted changes.
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"commit ([0-9a-f]+)(, dirty)?", version)
    if a.json and (not m or m.group(2)):
        sys.exit(f"peer_matrix.py --json: {BIN} was built from a tree with uncommitted changes "
                 "(or records no commit): commit, build, then run again")
    commit = m.group(1) if m else None
    for tool in ("ab", "wrk", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed: apt-get install apache2-utils wrk util-linux")
    models_with_workers = {"prefork", "prethread"}
    results = {}
    concs = [int(c) for c in a.conc.split(",")]
    hdr = "model       " + "".join(f"  ab c={c:<5} rps  us/req" for c in concs) + "   wrk c=100 rps us/req"
    print(hdr, flush=True)
    for model in a.models.split(","):
        if model == "nginx":
            port = 18080
            proc = start_nginx(port)
        else:
            proc, port = start_muxlab(model, a.workers if model in models_with_workers else None)
        row = {}
        try:
            for c in concs:
                row[f"ab_c{c}"] = ab(proc.pid, port, a.n, c)
            row["wrk_c100"] = wrk(proc.pid, port, a.wrk_d)
        finally:
            proc.send_signal(signal.SIGTERM if model != "nginx" else signal.SIGQUIT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        results[model] = row
        cells = []
        for key in [f"ab_c{c}" for c in concs] + ["wrk_c100"]:
            r = row[key]
            cells.append(f"{r['rps']:>10.0f} {r['cpu_us']:>6.1f}" if r.get("rps") else f"{'fail':>10} {'':>6}")
        print(f"{model:<12}" + "  ".join(cells), flush=True)
    if a.json:
        results["build_commit"] = commit
        results["build_dirty"] = False
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
