//! The products beside their models: Go's net/http and Node's http from `products/`, built and
//! started as bench starts them, serve muxlab's work the way their runtimes would (a blocking
//! call holds a Go thread, time.Sleep does not; Node's work runs on its loop, or with
//! worker_threads off it), and bench sets each product beside the model that stands for it in
//! the fidelity table. Each check counts threads or CPU time, never a timing.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::bench_files::*;
use common::*;
use serde_json::Value;

/// A product's server, killed when dropped.
struct Product {
    child: Child,
    port: u16,
}

impl Drop for Product {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Product {
    /// Starts `cmd` with `--addr`/`-addr` (the `flag` given) on a free port, until it accepts
    /// (killed if it never does: the test's panic drops it).
    fn start(mut cmd: Command, flag: &str) -> Product {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = cmd
            .arg(flag)
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let p = Product { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the product did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        p
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `n` connections, each with one request for `target` sent.
    fn send(&self, n: usize, target: &str) -> Vec<TcpStream> {
        (0..n)
            .map(|_| {
                let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
                write!(s, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
                s
            })
            .collect()
    }
}

/// Every connection's answer is a 200 with muxlab's body.
fn answered(conns: Vec<TcpStream>) {
    for mut s in conns {
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 512];
        while find(&got, b"<html>hello</html>").is_none() {
            let head = find(&got, b"\r\n\r\n").is_some();
            if head && !got.starts_with(b"HTTP/1.1 200") {
                // Not a 200: what it said, as much as has come, and fail now.
                std::thread::sleep(Duration::from_millis(200));
                let n = s.read(&mut buf).unwrap_or(0);
                got.extend_from_slice(&buf[..n]);
                panic!("{}", String::from_utf8_lossy(&got));
            }
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "closed before the answer: {}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
        assert!(got.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&got));
    }
}

fn threads(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The time on a CPU of `pid`'s thread `tid` (ns), and of all its threads.
fn on_cpu(pid: u32, tid: Option<u32>) -> u64 {
    let read = |t: &str| -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/task/{t}/schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    match tid {
        Some(t) => read(&t.to_string()),
        None => std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .flatten()
            .map(|e| read(&e.file_name().to_string_lossy()))
            .sum(),
    }
}

fn go_server() -> Option<PathBuf> {
    if !have("go", "golang-go") {
        return None;
    }
    Some(muxlab::bench::runtimes::go_server("go").unwrap_or_else(|e| panic!("{e}")))
}

fn node_server() -> Option<PathBuf> {
    if !have("node", "nodejs") {
        return None;
    }
    Some(muxlab::bench::runtimes::node_server().unwrap())
}

/// Go's `sleep:` is the nanosleep system call: each goroutine in it holds a thread of its own
/// (the runtime hands its P to another), so 40 calls at once run on 40 threads and more; with
/// `time.Sleep` they park on Go's timers and the threads stay near GOMAXPROCS.
#[test]
fn go_blocking_calls_hold_a_thread_each_and_time_sleep_parks_them() {
    let Some(bin) = go_server() else { return };
    // The most threads seen while 40 requests sleep 20 s each (or until `enough` are seen);
    // the server is killed after, its answers never awaited.
    let peak = |how: &str, enough: u64| {
        let mut cmd = Command::new(&bin);
        cmd.env("GOMAXPROCS", "2")
            .args(["-from-request", "-max-work", "30s", "-sleep", how]);
        let p = Product::start(cmd, "-addr");
        let _conns = p.send(40, "/?sleep=20s");
        let mut most = 0;
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until && most < enough {
            most = most.max(threads(p.pid()));
            std::thread::sleep(Duration::from_millis(20));
        }
        most
    };
    let syscall = peak("nanosleep", 40);
    assert!(syscall >= 40, "40 calls in nanosleep ran on {syscall} threads");
    let parked = peak("time", 20);
    assert!(parked < 20, "40 goroutines in time.Sleep ran on {parked} threads");
}

/// Node's work runs on its one loop: two requests' 200 ms of CPU are the main thread's. With
/// worker_threads the loop only hands it over: the pool's threads spin it.
#[test]
fn node_work_runs_on_the_loop_and_with_worker_threads_off_it() {
    let Some(script) = node_server() else { return };
    let spent = |threads: &str| {
        let mut cmd = Command::new("node");
        cmd.arg(&script)
            .args(["--from-request", "--max-work", "1s", "--worker-threads", threads]);
        let p = Product::start(cmd, "--addr");
        // The pool's threads are up before the count starts.
        answered(p.send(1, "/"));
        let (main0, all0) = (on_cpu(p.pid(), Some(p.pid())), on_cpu(p.pid(), None));
        answered(p.send(2, "/?cpu=200ms"));
        (on_cpu(p.pid(), Some(p.pid())) - main0, on_cpu(p.pid(), None) - all0)
    };
    // The clock read here lags by up to a tick and leaves out interrupts the spin sat through:
    // four fifths of the work, at least.
    let (main, _) = spent("0");
    assert!(main >= 320_000_000, "the loop spent {main} ns on 2 × 200 ms of work");
    let (main, all) = spent("2");
    assert!(all >= 320_000_000, "the process spent {all} ns on 2 × 200 ms of work");
    assert!(main < 200_000_000, "the loop spent {main} ns with the work on its pool");
}

/// The status line of one request for `target` on a fresh connection to `port`.
fn status_of(port: u16, target: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let got = read_to_end_lossy(&mut s);
    let text = String::from_utf8_lossy(&got);
    text.lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .nth(1)
        .unwrap_or("none")
        .to_string()
}

/// The products and muxlab read a query's work spec the same way: each target is served (200)
/// or refused (400) alike by Go's net/http, Node's http and `serve --work-from-request`, a
/// form's `+` a space in all three (it was the spec's `+` in muxlab's alone), `%2B` the plus,
/// `%28`/`%29` the parentheses, and the mean held to the same `--max-work`.
#[test]
fn the_products_and_muxlab_read_a_querys_work_the_same_way() {
    let (Some(go), Some(node)) = (go_server(), node_server()) else {
        return;
    };
    let mut cmd = Command::new(&go);
    cmd.env("GOMAXPROCS", "1").args(["-from-request", "-max-work", "10ms"]);
    let go = Product::start(cmd, "-addr");
    let mut cmd = Command::new("node");
    cmd.arg(&node).args(["--from-request", "--max-work", "10ms"]);
    let node = Product::start(cmd, "--addr");
    let ours = Server::start("reactor", &["--work-from-request", "--max-work", "10ms"]);
    let targets = [
        ("/", "200"),
        ("/?cpu=20us", "200"),
        ("/?cpu=20us&sleep=exp(1ms)", "200"),
        ("/?sleep=exp%281ms%29", "200"),
        ("/?cpu=20us%2Bsleep:1ms", "200"),
        ("/?cpu=20us+sleep:1ms", "400"),
        // A trailing `+` is a trailing space, which all three trim.
        ("/?sleep=1ms+", "200"),
        ("/?cpu=fast", "400"),
        ("/?cpu=20ms", "400"),
    ];
    for (target, want) in targets {
        let said = [
            ("go", status_of(go.port, target)),
            ("node", status_of(node.port, target)),
            ("muxlab", status_of(ours.addr.port(), target)),
        ];
        for (who, got) in &said {
            assert_eq!(got, want, "{who} answered {target} with {got}: {said:?}");
        }
    }
}

/// bench builds and starts the products, runs them beside their models on the same cells,
/// and its fidelity verdict sets each beside the model that stands for it: each side read in
/// its own E[S], an answer for every pair or why it was not compared, a cause or the want of
/// one wherever a pair differs, CPU per request beside; under `busy_of` each target offered its own rate, the
/// share of its CPU over its own cost in the experiment named.
#[test]
fn bench_sets_each_product_beside_its_model_in_the_fidelity_table() {
    if !have("go", "golang-go") || !have("node", "nodejs") {
        return;
    }
    let d = tmpdir("products");
    let p = scenario(
        &d,
        "[[experiment]]\nname = \"calls\"\nproto = \"http\"\nmodels = [\"green\", \"offload\"]\n\
         peers = [\"go\", \"go time.Sleep\", \"node worker_threads=2\"]\nworkers = 2\nwork = \"sleep:exp(1ms)\"\n\
         connections = [20]\nrate = 500\narrivals = \"poisson\"\nduration = \"1s\"\nwarmup = \"200ms\"\n\
         [[experiment]]\nname = \"ka\"\nproto = \"http\"\nmodels = [\"reactor\"]\n\
         peers = [\"node\"]\nconnections = [10]\nrate = 2000\nduration = \"1s\"\nwarmup = \"200ms\"\n\
         [[experiment]]\nname = \"ka30\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [10]\nbusy_of = \"30% of ka\"\nduration = \"1s\"\nwarmup = \"200ms\"\n",
    );
    let (r, stdout) = bench_ok(&p, &d);
    let cells = r["cells"].as_array().unwrap();
    for c in cells {
        assert_eq!(c["status"], "ok", "{c}");
    }
    // Each target's rate in ka30: 30 % of its CPUs over its median CPU per request in ka (low
    // enough that the client, at about twice a fast server's CPU per request, is not the limit).
    for t in ["reactor", "node"] {
        let of = |x: &str| -> Vec<&Value> {
            cells
                .iter()
                .filter(|c| c["experiment"] == x && c["target"] == t)
                // Neither a calibration nor the A/A twin: the cells compared.
                .filter(|c| c["calibration"].is_null() && c["twin"] != true)
                .collect()
        };
        let mut cost: Vec<f64> = of("ka")
            .iter()
            .map(|c| c["figures"]["server_cpu_us_per_req"].as_f64().unwrap())
            .collect();
        cost.sort_by(f64::total_cmp);
        let cpus = of("ka")[0]["figures"]["why"]["server_cpus"].as_f64().unwrap();
        let n = cost.len();
        let median = match n % 2 {
            1 => cost[n / 2],
            _ => (cost[n / 2 - 1] + cost[n / 2]) / 2.0,
        };
        let want = 0.3 * cpus * 1e6 / median;
        for c in of("ka30") {
            let rate = c["load"]["config"]["rate"].as_f64().unwrap();
            assert!((rate - want).abs() < 1e-6 * want, "{t}: offered {rate}, want {want}");
        }
    }
    let rows = fidelity_rows(&r);
    let pairs: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["experiment"].as_str().unwrap(),
                r["product"].as_str().unwrap(),
                r["model"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("calls", "go", "green"),
            ("calls", "go time.Sleep", "green"),
            ("calls", "node worker_threads=2", "offload"),
            // ka sets ka30's rates: a calibration, no pair of its own.
            ("ka30", "node", "reactor"),
        ]
    );
    for row in &rows {
        for k in [
            "cpu_product_us",
            "cpu_model_us",
            "cpu_ratio",
            "service_product_us",
            "service_model_us",
        ] {
            assert!(row[k].as_f64().is_some_and(|v| v > 0.0), "{k}: {row}");
        }
        let ratio = row["cpu_ratio"].as_f64().unwrap();
        let model = row["cpu_model_us"].as_f64().unwrap();
        let product = row["cpu_product_us"].as_f64().unwrap();
        assert!((ratio - model / product).abs() < 1e-9, "{row}");
        // The blocking call is part of both sides' E[S].
        if row["experiment"] == "calls" {
            assert!(row["service_product_us"].as_f64().unwrap() > 1000.0, "{row}");
        }
        let cause = row["cause"].as_str().unwrap();
        match row["answer"].as_str() {
            Some("differs") => assert!(
                cause.contains("of the p") || cause.starts_with("no measured figure covers half"),
                "{row}"
            ),
            Some("stands") | Some("unresolved") => {}
            // Not compared: it says why. Beside the suite's busy loops the client was once the
            // limit for node in ka30 ("the server was not the limit" on both figures), an
            // honest answer of the judge's one rule, not a missing one.
            None => assert!(
                cause.contains("is not compared: ") || cause.contains("did not finish"),
                "{row}"
            ),
            other => panic!("an answer the verdict does not give: {other:?} {row}"),
        }
    }
    let ka30 = rows.iter().find(|r| r["experiment"] == "ka30").unwrap();
    assert_eq!(ka30["aimed"], 0.3, "{ka30}");
    // The terminal shows the table.
    assert!(
        stdout.contains("| p99 shape ratio | CPU/req ratio | answer\n"),
        "{stdout}"
    );
}
