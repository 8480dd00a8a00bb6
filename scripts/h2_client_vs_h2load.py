#!/usr/bin/env python3
"""The HTTP/2 load generator against h2load (Debian's nghttp2-client).

Both load the same nginx (one worker, `http2` on its listener, pinned to CPU 0) from CPU 1, one
client at a time, alternating, in one sitting:
 1. client CPU per request (user + sys over the whole process, from its rusage) with the same
    connections and streams, closed loop, REQUESTS requests each;
 2. latency at fixed rates below nginx's capacity: muxlab's open loop (p50, p99, mean) beside
    h2load's --rps (mean and sd: h2load reports no percentiles).

Usage: scripts/h2_client_vs_h2load.py [--conns 10] [--streams 10] [--requests 400000]
                                      [--rounds 3] [--rates 2000,20000,60000] [--json FILE]

With --json, writes the figures (and the binary's commit and dirty flag, from `muxlab --version`,
as `build_commit` and `build_dirty`) for `muxlab docs` to render:
docs/results/h2-client-vs-h2load.json is such a file.
"""
import argparse, json, os, re, resource, subprocess, sys, tempfile, time

BIN = os.environ.get("MUXLAB") or os.path.join(os.path.dirname(__file__), "..", "target", "release", "muxlab")


def build():
    v = subprocess.run([BIN, "--version"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"commit ([0-9a-f]+)(, dirty)?", v)
    return (m.group(1), bool(m.group(2))) if m else (None, None)


def timed(args):
    """Runs args on CPU 1; its stdout and its CPU seconds (user + sys)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["taskset", "-c", "1", *args], capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def us(v, unit):
    return float(v) * {"us": 1, "ms": 1000, "s": 1e6}[unit]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conns", type=int, default=10)
    ap.add_argument("--streams", type=int, default=10)
    ap.add_argument("--requests", type=int, default=400000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rates", default="2000,20000,60000")
    ap.add_argument("--port", type=int, default=18590)
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    for tool in ("h2load", "nginx"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            sys.exit(f"{tool} is not installed (apt-get install nghttp2-client nginx-light)")
    commit, dirty = build()
    d = tempfile.mkdtemp(prefix="muxlab-h2-")
    with open(f"{d}/nginx.conf", "w") as f:
        f.write(f"""worker_processes 1; daemon off; master_process on; pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 4096; }}
http {{ access_log off; keepalive_requests 100000000;
  server {{ listen 127.0.0.1:{a.port} http2; location / {{ return 200 "<html>hello</html>"; }} }} }}
""")
    ngx = subprocess.Popen(["taskset", "-c", "0", "nginx", "-c", f"{d}/nginx.conf", "-p", d])
    time.sleep(0.5)
    url, c, s = f"http://127.0.0.1:{a.port}/", str(a.conns), str(a.streams)
    mux = [BIN, "load", f"h2c://127.0.0.1:{a.port}/", "-c", c, "--streams", s, "-t", "1", "--json"]
    cpu, latency = [], []
    try:
        for r in range(1, a.rounds + 1):
            out, h = timed(["h2load", "-n", str(a.requests), "-c", c, "-m", s, "-t", "1", url])
            hr = re.search(r"^finished in .*?, ([\d.]+) req/s", out, re.M)
            out, m = timed([*mux, "-n", str(a.requests)])
            doc = json.loads(out)
            row = {"round": r, "h2load_us_per_request": h * 1e6 / a.requests,
                   "h2load_rps": float(hr.group(1)) if hr else None,
                   "muxlab_us_per_request": m * 1e6 / a.requests, "muxlab_rps": doc["throughput_rps"],
                   "muxlab_requests": doc["requests"], "muxlab_errors": doc["error_total"]}
            cpu.append(row)
            print(json.dumps(row), flush=True)
        for rate in [int(x) for x in a.rates.split(",")]:
            for r in range(1, a.rounds + 1):
                out, _ = timed(["h2load", "-D", "3", "--rps", str(rate // a.conns), "-c", c, "-m", s, "-t", "1", url])
                t = re.search(r"^time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)", out, re.M)
                out, _ = timed([*mux, "--rate", str(rate), "-d", "3s"])
                lat = json.loads(out)["latency_us"]
                row = {"rate": rate, "round": r,
                       "h2load_mean_us": us(t.group(1), t.group(2)) if t else None,
                       "h2load_sd_us": us(t.group(3), t.group(4)) if t else None,
                       "muxlab_p50_us": lat["p50"], "muxlab_p99_us": lat["p99"],
                       "muxlab_mean_us": lat["mean"], "muxlab_sd_us": lat["stdev"]}
                latency.append(row)
                print(json.dumps(row), flush=True)
    finally:
        ngx.terminate()
        ngx.wait()
    doc = {"command": " ".join(["scripts/h2_client_vs_h2load.py", *sys.argv[1:]]), "conns": a.conns,
           "streams": a.streams, "requests": a.requests, "build_commit": commit, "build_dirty": dirty,
           "date": time.strftime("%Y-%m-%d"), "cpu": cpu, "latency": latency}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
        print(a.json)


main()
