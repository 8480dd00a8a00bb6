#!/usr/bin/env python3
"""Client CPU per request, paired: two muxlab builds' load generators (a before and an after)
and the product each cell is usually measured with, in turn round after round (the rounds
cycle through the six orders of the three, so each client runs first, second and third equally
often: a position that favours a run favours each alike) against one server pinned to CPU 0, each client pinned to CPU 1
with one thread. The figure is the client process's user + system CPU (its rusage) divided by
the requests it completed; the after is compared with the before round by round (paired
ratios, their median and its 95 % interval from the rounds' order statistics), and each build
with the product.

Cells (the product in brackets):
  http   keep-alive, 50 connections, against nginx (wrk -t1 -c50, for the same time)
  close  one request per connection, 10 at once, against nginx (ab -c10)
  h2     HTTP/2, 10 connections x 10 streams, against nginx's http2 listener (h2load -c10 -m10)
  resp   GET and SET over 50 connections, against redis-server (redis-benchmark -c50 -t set,get)
  resp16 the same, 16 commands in flight per connection (redis-benchmark -P 16; load --pipeline 16)

    scripts/client_paired.py --before /tmp/muxlab-old [--after target/release/muxlab]
                             [--rounds 12] [--cells http,close,h2,resp,resp16] [--json FILE]
"""
import argparse, itertools, json, math, os, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
NGINX_PORT, H2_PORT, REDIS_PORT = 18480, 18481, 18482


def start_nginx():
    d = tempfile.mkdtemp(prefix="muxlab-nginx-")
    with open(f"{d}/nginx.conf", "w") as f:
        f.write(f"""worker_processes 1; daemon off; master_process on; pid {d}/nginx.pid;
error_log {d}/error.log; events {{ worker_connections 20000; }}
http {{ access_log off; keepalive_requests 1000000; http2_max_concurrent_streams 128;
  server {{ listen 127.0.0.1:{NGINX_PORT} backlog=4096; location / {{ return 200 "<html>hello</html>"; }} }}
  server {{ listen 127.0.0.1:{H2_PORT} http2; location / {{ return 200 "<html>hello</html>"; }} }} }}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    p = subprocess.Popen(["taskset", "-c", "0", nginx, "-c", f"{d}/nginx.conf", "-p", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return p


def start_redis():
    p = subprocess.Popen(["taskset", "-c", "0", "redis-server", "--port", str(REDIS_PORT), "--save", "",
                          "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return p


def run(cmd):
    """Runs cmd pinned to CPU 1: (stdout, CPU seconds of the client)."""
    p = subprocess.Popen(["taskset", "-c", "1"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"{cmd} failed ({status}): {out[-500:]}")
    return out, ru.ru_utime + ru.ru_stime


def muxlab(binary, cell, n):
    args = {
        "http": [f"http://127.0.0.1:{NGINX_PORT}/", "-c", "50"],
        "close": [f"http://127.0.0.1:{NGINX_PORT}/", "-c", "10", "--close"],
        "h2": [f"h2c://127.0.0.1:{H2_PORT}/", "-c", "10", "--streams", "10"],
        "resp": [f"resp://127.0.0.1:{REDIS_PORT}", "-c", "50"],
        "resp16": [f"resp://127.0.0.1:{REDIS_PORT}", "-c", "50", "--pipeline", "16"],
    }[cell]
    out, cpu = run([binary, "load", *args, "-n", str(n), "-t", "1", "--json"])
    doc = json.loads(out)
    if doc["error_total"]:
        sys.exit(f"{binary} {cell}: errors {doc['errors']}")
    return doc["requests"], cpu


def product(cell, n, seconds):
    if cell == "http":
        out, cpu = run(["wrk", "-t1", "-c50", f"-d{max(1, round(seconds))}s", f"http://127.0.0.1:{NGINX_PORT}/"])
        return int(re.search(r"(\d+) requests in", out).group(1)), cpu
    if cell == "close":
        out, cpu = run(["ab", "-q", "-n", str(n), "-c", "10", f"http://127.0.0.1:{NGINX_PORT}/"])
        return int(re.search(r"Complete requests:\s+(\d+)", out).group(1)), cpu
    if cell == "h2":
        out, cpu = run(["h2load", "-n", str(n), "-c", "10", "-m", "10", f"http://127.0.0.1:{H2_PORT}/"])
        return int(re.search(r"(\d+) succeeded", out).group(1)), cpu
    pipeline = ["-P", "16"] if cell == "resp16" else []
    out, cpu = run(["redis-benchmark", "-p", str(REDIS_PORT), "-c", "50", "-n", str(n // 2), "-t", "set,get", "-q"] + pipeline)
    return n // 2 * 2, cpu


def median_interval(xs):
    """The median of xs and a distribution-free interval for it from order statistics of a
    binomial(n, 1/2): at 95 % or more from 6 rounds on; with 5 or fewer, the widest there is,
    min to max (93.75 % at 5)."""
    xs = sorted(xs)
    n = len(xs)
    k = 0
    # The largest k with P(Binomial(n, 1/2) <= k - 1) <= 2.5 %: [x_k, x_{n-k+1}] (1-based).
    while k + 1 <= n // 2 and sum(math.comb(n, i) for i in range(k + 1)) / 2**n <= 0.025:
        k += 1
    lo, hi = (xs[k - 1], xs[n - k]) if k > 0 else (xs[0], xs[-1])
    return statistics.median(xs), lo, hi


ORDERS = list(itertools.permutations(["before", "after", "product"]))

PRODUCT = {"http": "wrk", "close": "ab", "h2": "h2load", "resp": "redis-benchmark", "resp16": "redis-benchmark"}
REQUESTS = {"http": 300000, "close": 30000, "h2": 300000, "resp": 200000, "resp16": 1000000}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", default=os.path.join(HERE, "..", "target", "release", "muxlab"))
    ap.add_argument("--rounds", type=int, default=12, help="a multiple of 6 keeps the orders balanced")
    ap.add_argument("--cells", default="http,close,h2,resp,resp16")
    ap.add_argument("--json")
    a = ap.parse_args()
    servers = [start_nginx(), start_redis()]
    results = {}
    try:
        for cell in a.cells.split(","):
            n = REQUESTS[cell]
            per = {"before": [], "after": [], "product": []}
            for r in range(a.rounds):
                order = ORDERS[r % len(ORDERS)]
                seconds = 2.0
                for who in order:
                    t = time.monotonic()
                    if who == "product":
                        done, cpu = product(cell, n, seconds)
                    else:
                        done, cpu = muxlab(a.before if who == "before" else a.after, cell, n)
                        seconds = time.monotonic() - t
                    per[who].append(cpu / done * 1e6)
            ratios = [x / y for x, y in zip(per["after"], per["before"])]
            med, lo, hi = median_interval(ratios)
            against = [x / y for x, y in zip(per["after"], per["product"])]
            pmed, plo, phi = median_interval(against)
            row = {
                "cpu_per_request_us": {k: round(statistics.median(v), 3) for k, v in per.items()},
                "after_over_before": {"median": round(med, 4), "low": round(lo, 4), "high": round(hi, 4),
                                      "ratios": [round(r, 4) for r in ratios]},
                "after_over_product": {"median": round(pmed, 4), "low": round(plo, 4), "high": round(phi, 4),
                                       "ratios": [round(r, 4) for r in against]},
                "product": PRODUCT[cell],
                "rounds": a.rounds,
            }
            results[cell] = row
            print(f"{cell:6} before {row['cpu_per_request_us']['before']:.3f} us  after "
                  f"{row['cpu_per_request_us']['after']:.3f} us  {PRODUCT[cell]} "
                  f"{row['cpu_per_request_us']['product']:.3f} us  after/before median "
                  f"{row['after_over_before']['median']:.3f} [{row['after_over_before']['low']:.3f}, "
                  f"{row['after_over_before']['high']:.3f}]  after/{PRODUCT[cell]} median {pmed:.3f} [{plo:.3f}, {phi:.3f}]",
                  flush=True)
    finally:
        for s in servers:
            s.terminate()
            s.wait()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
