//! Live metrics (`serve --metrics`, `load --metrics`) as the tools people run read them: a real
//! Prometheus (Debian's package) scrapes a server and the load driving it, and what it stored
//! agrees with what each side says itself when it ends; `promtool check metrics` passes.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{have, Server, BIN};
use serde_json::Value;

/// A free port on loopback (bound, then let go).
fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

/// `GET /metrics` from `addr` with `accept`: the status line and the body.
fn scrape(addr: SocketAddr, accept: &str) -> (String, String) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n").unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    let (head, body) = s.split_once("\r\n\r\n").expect("a response head");
    (head.lines().next().unwrap_or("").to_string(), body.to_string())
}

/// A whole text scrape of `addr`, or `None` (nothing there, or the response cut).
fn try_scrape(addr: SocketAddr) -> Option<String> {
    let mut c = TcpStream::connect(addr).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").ok()?;
    let mut s = String::new();
    c.read_to_string(&mut s).ok()?;
    let (head, body) = s.split_once("\r\n\r\n")?;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))?
        .parse()
        .ok()?;
    (head.starts_with("HTTP/1.1 200") && body.len() == length).then(|| body.to_string())
}

/// `promtool check metrics` over `body`: its verdict and what it said.
fn promtool(body: &str) -> (bool, String) {
    let mut p = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    p.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = p.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success() && said.trim().is_empty(), said)
}

/// A Prometheus of the test's own: its config scraping `targets` every second, a temporary
/// storage directory, a free port. Stopped (and its directory removed) when dropped.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    dir: std::path::PathBuf,
}

impl Prometheus {
    fn start(name: &str, targets: &[SocketAddr]) -> Prometheus {
        Prometheus::over(name, targets, None)
    }

    /// One over data another Prometheus stored (`data`), kept whatever its age.
    fn over(name: &str, targets: &[SocketAddr], data: Option<&std::path::Path>) -> Prometheus {
        let dir = std::env::temp_dir().join(format!("muxlab-prom-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: muxlab\n    static_configs:\n      - targets: [{}]\n",
            list.join(", ")
        );
        std::fs::write(dir.join("prometheus.yml"), config).unwrap();
        let addr = free_addr();
        let data = data.map_or(dir.join("data"), |d| d.to_path_buf());
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", dir.join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .arg("--storage.tsdb.retention.time=100y")
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("log")).unwrap())
            .spawn()
            .expect("start prometheus");
        let p = Prometheus { child, addr, dir };
        let until = Instant::now() + Duration::from_secs(60);
        while !p.get("/-/ready").contains("Ready") {
            assert!(Instant::now() < until, "prometheus not ready: {}", p.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        p
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    fn get(&self, path: &str) -> String {
        let out = Command::new("curl")
            .args(["-s", "-G", &format!("http://{}{path}", self.addr)])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// An instant query's one value (`None`: no series).
    fn value(&self, query: &str) -> Option<f64> {
        let out = Command::new("curl")
            .args(["-s", "-G", &format!("http://{}/api/v1/query", self.addr)])
            .args(["--data-urlencode", &format!("query={query}")])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{query}: {e}"));
        assert_eq!(v["status"], "success", "{query}: {v}");
        let r = v["data"]["result"].as_array()?.first()?.clone();
        r["value"][1].as_str()?.parse().ok()
    }

    /// Waits until the newest sample of `series` is from after `since` (unix seconds).
    fn scraped_after(&self, series: &str, since: f64) {
        let until = Instant::now() + Duration::from_secs(30);
        while self
            .value(&format!("max(timestamp({series}))"))
            .is_none_or(|t| t <= since)
        {
            assert!(
                Instant::now() < until,
                "no scrape of {series} after {since}: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// The bucket bounds (seconds) around `v` seconds: a quantile read from the buckets lies in
/// the bucket of the exact one, so they are at most its width apart.
fn bucket_width(v: f64) -> f64 {
    let ns = (v * 1e9).round() as u64;
    let i = muxlab::metrics::slot(ns);
    let b = &muxlab::metrics::BOUNDS_NS;
    let lo = if i == 0 { 0 } else { b[i - 1] };
    (b[i.min(b.len() - 1)] - lo) as f64 / 1e9
}

/// A model scraped by Prometheus while `load --metrics` drives it in an open loop: the
/// counts Prometheus stored are each side's own, its p99 within a bucket of each side's.
fn scraped_run_agrees_with_what_each_side_says(model: &str, flags: &[&str]) {
    let mut args = vec!["--metrics", "127.0.0.1:0"];
    args.extend_from_slice(flags);
    let server = Server::start(model, &args);
    let server_metrics: SocketAddr = server.listening["metrics"].as_str().unwrap().parse().unwrap();
    let load_metrics = free_addr();
    let prom = Prometheus::start(model, &[server_metrics, load_metrics]);
    let url = server.url();
    let load_at = load_metrics.to_string();
    let (code, doc, stderr) = common::load(&[
        &url,
        "-c",
        "4",
        "-d",
        "3",
        "--rate",
        "2000",
        "--metrics",
        &load_at,
        "--metrics-linger",
        "20s",
    ]);
    assert_eq!(code, 0, "{model}: {stderr}");
    let ended = unix_now();
    // Prometheus read the server after the load ended (nothing was served since).
    prom.scraped_after("muxlab_requests_total", ended);
    let served = prom.value("sum(muxlab_requests_total)").unwrap();
    let sampled = prom.value("sum(http_server_request_duration_seconds_count)").unwrap();
    let server_p99 = prom
        .value("histogram_quantile(0.99, sum by (le) (http_server_request_duration_seconds_bucket))")
        .unwrap();
    let (status, text) = scrape(server_metrics, "text/plain");
    assert!(status.contains("200"), "{status}");
    let (ok, said) = promtool(&text);
    assert!(ok, "{model}: promtool check metrics: {said}");
    assert_eq!(
        text.contains("muxlab_requests_total{worker=\"1\"}"),
        flags.contains(&"--workers"),
        "a design with workers labels them\n{text}"
    );
    let stopped = server.stop();
    assert_eq!(
        served as u64,
        stopped.total("requests"),
        "{model}: the server's count as scraped"
    );
    let own = &stopped.stats["request_duration"];
    // Sampled: the requests of the timed reads, each counted once.
    assert_eq!(
        own["count"].as_u64(),
        Some(stopped.total("timed_requests")),
        "{model}: {own}"
    );
    assert!(own["count"].as_u64().unwrap() > 0, "{model}: {own}");
    assert_eq!(
        own["count"].as_u64(),
        Some(sampled as u64),
        "{model}: the histogram as scraped"
    );
    let own_p99 = own["p99_us"].as_f64().unwrap() / 1e6;
    assert!(
        (server_p99 - own_p99).abs() <= bucket_width(own_p99),
        "{model}: server p99 {server_p99} s scraped, {own_p99} s its own"
    );

    // The load: its last figures were scraped before it left (--metrics-linger), and its
    // series went stale after: read over the range.
    let done = prom.value("max_over_time(muxlab_load_requests_total[5m])").unwrap();
    assert_eq!(
        done as u64,
        doc["requests"].as_u64().unwrap(),
        "{model}: the load's count as scraped"
    );
    let load_p99 = prom
        .value("histogram_quantile(0.99, sum by (le) (max_over_time(http_client_request_duration_seconds_bucket{measured_from=\"intended\"}[5m])))")
        .unwrap();
    let own_load_p99 = doc["latency_us"]["p99"].as_f64().unwrap() / 1e6;
    assert!(
        (load_p99 - own_load_p99).abs() <= bucket_width(own_load_p99),
        "{model}: load p99 {load_p99} s scraped, {own_load_p99} s its own"
    );
    // Both targets parsed as Prometheus asks for them (OpenMetrics first).
    assert_eq!(
        prom.value("count(max_over_time(up[5m]) == 1)"),
        Some(2.0),
        "{}",
        prom.get("/api/v1/targets")
    );
}

#[test]
fn prometheus_scraping_epoll_and_its_load_stores_the_counts_each_side_reports() {
    if !(have("prometheus", "prometheus") && have("promtool", "prometheus") && have("curl", "curl")) {
        return;
    }
    scraped_run_agrees_with_what_each_side_says("epoll", &[]);
}

/// A design that forks a process per connection (it may fork only with one thread: the
/// endpoint is a process of its own) counts in the shared blocks its children write.
#[test]
fn prometheus_scraping_fork_counts_what_its_children_served() {
    if !(have("prometheus", "prometheus") && have("promtool", "prometheus") && have("curl", "curl")) {
        return;
    }
    scraped_run_agrees_with_what_each_side_says("fork", &[]);
}

#[test]
fn prometheus_scraping_a_design_with_workers_sums_its_workers_to_its_stats_line() {
    if !(have("prometheus", "prometheus") && have("promtool", "prometheus") && have("curl", "curl")) {
        return;
    }
    scraped_run_agrees_with_what_each_side_says("multi-reactor", &["--workers", "2"]);
}

/// Scrapes in a tight loop while hostile clients flood the server with garbage and half-open
/// connections: every scrape is answered and valid, and a client among the flood is served.
#[test]
fn scrapes_during_a_flood_are_answered_and_the_loop_goes_on_serving() {
    if !have("promtool", "prometheus") {
        return;
    }
    let server = Server::start("epoll", &["--metrics", "127.0.0.1:0"]);
    let metrics: SocketAddr = server.listening["metrics"].as_str().unwrap().parse().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flood: Vec<_> = (0..2)
        .map(|_| {
            let (addr, stop) = (server.addr, stop.clone());
            std::thread::spawn(move || {
                let mut held = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(mut c) = TcpStream::connect(addr) {
                        let _ = c.write_all(b"GET / HTTP/1.1\r\nX: ");
                        held.push(c);
                        if held.len() > 200 {
                            held.clear();
                        }
                    }
                }
            })
        })
        .collect();
    let mut scrapes = 0;
    let mut served = 0;
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        let (status, body) = scrape(metrics, "application/openmetrics-text; version=1.0.0");
        assert!(status.contains("200") && body.ends_with("# EOF\n"), "{status}");
        scrapes += 1;
        let mut c = server.stream();
        let r = common::get(&mut c, &mut Vec::new());
        assert_eq!(r.status, 200);
        served += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for f in flood {
        f.join().unwrap();
    }
    let (_, text) = scrape(metrics, "text/plain");
    let (ok, said) = promtool(&text);
    assert!(ok, "promtool check metrics: {said}");
    let stopped = server.stop();
    assert!(scrapes > 0, "the loop of scrapes ran");
    assert!(stopped.total("requests") >= served);
}

/// `load --metrics` split over processes (a descriptor limit too low for one) serves the
/// parts' figures summed: the last scrape is the merged summary's.
#[test]
fn a_split_load_serves_its_parts_figures_summed() {
    if !have("prlimit", "util-linux") {
        return;
    }
    let server = Server::start("epoll", &[]);
    let at = free_addr();
    let url = server.url();
    let scraper = std::thread::spawn(move || {
        let mut last = None;
        let until = Instant::now() + Duration::from_secs(60);
        while Instant::now() < until {
            // The load may leave between a connect and the scrape's end: such a scrape is none.
            match try_scrape(at) {
                Some(body) => last = Some(body),
                None if last.is_some() => break,
                None => {}
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        last.expect("a scrape")
    });
    let out = Command::new("prlimit")
        .args(["--nofile=250:250", BIN, "load", &url, "-c", "300", "-d", "1", "--json"])
        .args(["--metrics", &at.to_string(), "--metrics-linger", "20s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["config"]["shards"].as_u64().unwrap() > 1,
        "the run was split: {}",
        doc["config"]
    );
    let last = scraper.join().unwrap();
    let line = last
        .lines()
        .find(|l| l.starts_with("muxlab_load_requests_total "))
        .unwrap_or_else(|| panic!("{last}"));
    assert_eq!(
        line.split(' ').nth(1).unwrap().parse::<u64>().unwrap(),
        doc["requests"].as_u64().unwrap()
    );
    let open = last
        .lines()
        .find(|l| l.starts_with("muxlab_load_connections "))
        .unwrap();
    assert_eq!(open, "muxlab_load_connections 300");
    if have("promtool", "prometheus") {
        let (ok, said) = promtool(&last);
        assert!(ok, "promtool check metrics on the load's: {said}");
    }
    server.stop();
}

/// `prometheus = true`: bench runs a Prometheus beside the run, scraping each model (labelled
/// by experiment and target) and each load into the run's directory, where a Prometheus opened
/// on it afterwards finds both.
#[test]
fn a_bench_run_with_prometheus_keeps_every_model_and_load_scraped_in_its_directory() {
    if !(have("prometheus", "prometheus") && have("curl", "curl")) {
        return;
    }
    let d = common::bench_files::tmpdir("bench-prometheus");
    let p = common::bench_files::scenario(
        &d,
        "repeats = 1\nprometheus = true\n[[experiment]]\nname = \"x\"\nproto = \"http\"\nmodels = [\"epoll\", \"thread\"]\n\
         paired = true\nconnections = [2]\nduration = \"2s\"\nwarmup = \"100ms\"\n",
    );
    let (r, out) = common::bench_files::bench_ok(&p, &d);
    let run = common::bench_files::results_dir(&d);
    assert!(out.contains("prometheus: scraping"), "{out}");
    let config = std::fs::read_to_string(run.join("prometheus/prometheus.yml")).unwrap();
    // Paired: every target's server is up at once, the A/A twin too, each on its own port.
    for target in ["epoll", "thread", "epoll (A/A)"] {
        let label = format!("labels: {{experiment: 'x', target: '{target}'}}");
        assert!(config.contains(&label), "{config}");
    }
    assert!(
        r["cells"].as_array().unwrap().iter().all(|c| c["status"] == "ok"),
        "{}",
        r["cells"]
    );
    let prom = Prometheus::over("bench-look", &[], Some(&run.join("prometheus/data")));
    // One short cell: what the server counted, to the last request, was scraped (the load
    // does not wait for a last scrape in a bench: its window would take the wait in).
    let cell = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["target"] == "epoll" && c["twin"] != true)
        .unwrap();
    let served = prom.value("max(max_over_time(muxlab_requests_total{experiment=\"x\",target=\"epoll\"}[1y]))");
    assert_eq!(
        served,
        cell["server_stats"]["totals"]["requests"].as_f64(),
        "{}",
        prom.log()
    );
    let loaded = prom.value("max(max_over_time(muxlab_load_requests_total[1y]))");
    assert!(loaded.is_some_and(|n| n > 0.0), "{loaded:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Bad input is refused before anything runs, exit code 2, naming the flag: an address
/// taken, `--metrics` with `--slo` (a run per probe) or with `--hosts` (each host its own).
#[test]
fn a_taken_metrics_address_and_the_combinations_that_cannot_serve_are_refused() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = taken.local_addr().unwrap().to_string();
    let serve = Command::new(BIN)
        .args(["serve", "--model", "epoll", "--port", "0", "--metrics", &at])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&serve.stderr);
    assert_eq!(serve.status.code(), Some(2), "{said}");
    assert!(said.contains("--metrics") && said.contains("in use"), "{said}");
    assert!(
        serve.stdout.is_empty(),
        "no listening line: {}",
        String::from_utf8_lossy(&serve.stdout)
    );
    for extra in [
        &["--metrics", at.as_str()][..],
        &["--metrics", "127.0.0.1:0", "--slo", "p99<=10ms"][..],
        &["--metrics", "127.0.0.1:0", "--hosts", "a,b"][..],
    ] {
        let out = Command::new(BIN)
            .args(["load", "http://127.0.0.1:9/", "-d", "1s"])
            .args(extra)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {said}");
        assert!(said.contains("--metrics"), "{extra:?}: {said}");
    }
}
