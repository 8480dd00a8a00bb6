//! Running one cell: start the server pinned to the server CPUs, wait for its listening line,
//! run `muxlab load` pinned to the client CPUs, sample the server's process tree over the
//! measured window, stop the server with SIGTERM, parse its stats line and check that it exited
//! cleanly and left no process behind.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::results::{Cell, Figures};
use super::scenario::{model_name, Experiment};
use crate::load::tally::jain;
use crate::sys;
use crate::sys::procfs::{sample_tree, ProcSample};

/// Where cells run.
pub struct Placement {
    pub server_cpus: String,
    pub client_cpus: String,
    pub client_threads: usize,
}

/// What a cell targets.
#[derive(Debug, Clone)]
pub enum Target {
    /// A muxlab model entry: name and serve flags.
    Model(String),
    /// A production server started by the runner.
    Peer(String),
    /// A server somebody else runs (`--target host:port`).
    External(SocketAddr),
}

impl Target {
    pub fn label(&self) -> String {
        match self {
            Target::Model(m) => m.clone(),
            Target::Peer(p) => p.clone(),
            Target::External(a) => format!("target {a}"),
        }
    }
}

/// A started server.
struct Server {
    child: Option<Child>,
    pid: i32,
    addr: SocketAddr,
    lines: Option<Receiver<String>>,
    /// Temporary directory (nginx's config and pid file).
    dir: Option<PathBuf>,
}

fn exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot find the muxlab binary: {e}"))
}

/// Reads `out` line by line on a thread, so the caller can wait with a timeout.
fn line_reader(out: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn start_model(entry: &str, x: &Experiment, place: &Placement) -> Result<Server, String> {
    let mut args: Vec<String> = vec!["serve".into(), "--model".into(), model_name(entry).into()];
    args.extend(entry.split_whitespace().skip(1).map(String::from));
    args.extend([
        "--proto".into(),
        x.proto.clone(),
        "--port".into(),
        "0".into(),
        "--cpus".into(),
        place.server_cpus.clone(),
    ]);
    let model = crate::models::find(model_name(entry)).ok_or_else(|| format!("unknown model in '{entry}'"))?;
    if let Some(w) = x.workers {
        if model.workers != crate::server::Workers::None && !entry.contains("--workers") {
            args.extend(["--workers".into(), w.to_string()]);
        }
    }
    if let Some(w) = &x.work {
        args.extend(["--work".into(), w.clone()]);
    }
    if x.proto == "packet" {
        args.extend(["--packet-size".into(), x.size.unwrap_or(100).to_string()]);
    }
    let mut child = Command::new(exe()?)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting the server: {e}"))?;
    let lines = line_reader(child.stdout.take().expect("piped"));
    let listening = lines.recv_timeout(Duration::from_secs(15)).ok();
    let v: Value = listening
        .as_deref()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    if v["event"] != "listening" {
        let _ = child.kill();
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let _ = child.wait();
        return Err(format!("server did not start: {}", err.trim()));
    }
    let addr = v["addr"]
        .as_str()
        .and_then(|a| a.parse().ok())
        .ok_or("bad listening line")?;
    Ok(Server {
        pid: child.id() as i32,
        child: Some(child),
        addr,
        lines: Some(lines),
        dir: None,
    })
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// nginx with one worker, pinned like the models, answering the same body.
fn start_nginx(x: &Experiment, place: &Placement) -> Result<Server, String> {
    if x.proto != "http" {
        return Err(format!("skipped: the nginx peer speaks http, not {}", x.proto));
    }
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(nginx) = nginx else {
        return Err("skipped: nginx is not installed (apt-get install nginx-light)".into());
    };
    let port = free_port()?;
    let dir = std::env::temp_dir().join(format!("muxlab-nginx-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let conf = format!(
        "worker_processes 1; daemon off; master_process on; pid {d}/nginx.pid; error_log {d}/error.log;\n\
         worker_rlimit_nofile 20000;\n\
         events {{ worker_connections 19000; }}\n\
         http {{ access_log off; keepalive_requests 100000000; keepalive_timeout 60s;\n\
           server {{ listen 127.0.0.1:{port} backlog=1024 reuseport; location / {{ default_type text/html; return 200 \"<html>hello</html>\"; }} }} }}\n",
        d = dir.display()
    );
    std::fs::write(dir.join("nginx.conf"), conf).map_err(|e| e.to_string())?;
    let child = Command::new("taskset")
        .args(["-c", &place.server_cpus, nginx, "-c"])
        .arg(dir.join("nginx.conf"))
        .arg("-p")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting nginx: {e}"))?;
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("valid");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(addr).is_err() {
        if Instant::now() > deadline {
            return Err(format!("nginx did not start; see {}/error.log", dir.display()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Server {
        pid: child.id() as i32,
        child: Some(child),
        addr,
        lines: None,
        dir: Some(dir),
    })
}

/// Stops a server; returns its stats line (models) and an error if it did not end cleanly.
fn stop(mut s: Server) -> (Value, Result<(), String>) {
    let tree = sys::procfs::tree(s.pid);
    let Some(mut child) = s.child.take() else {
        return (Value::Null, Ok(()));
    };
    let is_peer = s.dir.is_some();
    // Already gone? Then it crashed during the cell.
    if let Ok(Some(st)) = child.try_wait() {
        return (Value::Null, Err(format!("the server died during the cell ({st})")));
    }
    let _ = sys::process::kill(s.pid, if is_peer { libc::SIGQUIT } else { sys::signal::SIGTERM });
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stats = Value::Null;
    if let Some(lines) = s.lines.take() {
        while let Ok(l) = lines.recv_timeout(Duration::from_millis(500)) {
            if let Ok(v) = serde_json::from_str::<Value>(&l) {
                if v["event"] == "stats" {
                    stats = v;
                }
            }
        }
    }
    if let Some(d) = s.dir.take() {
        let _ = std::fs::remove_dir_all(d);
    }
    let leftovers: Vec<i32> = tree
        .into_iter()
        .skip(1)
        .filter(|p| sys::procfs::sample(*p).is_ok_and(|_| is_running(*p)))
        .collect();
    let verdict = match status {
        None => Err("the server did not stop within 20 s of SIGTERM (killed)".to_string()),
        Some(st) if !st.success() && !is_peer => Err(format!("the server exited with {st}")),
        Some(_) if !leftovers.is_empty() => Err(format!("processes left behind: {leftovers:?}")),
        Some(_) if !is_peer && stats.is_null() => Err("no stats line".into()),
        Some(_) => Ok(()),
    };
    (stats, verdict)
}

fn is_running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')))
}

/// The `muxlab load` command line for a cell.
fn load_args(x: &Experiment, addr: SocketAddr, conns: usize, place: &Placement) -> Vec<String> {
    let url = match x.proto.as_str() {
        "http" => format!("http://{addr}/"),
        p => format!("{p}://{addr}"),
    };
    let mut a: Vec<String> = vec!["load".into(), url, "-c".into(), conns.to_string(), "--json".into()];
    a.extend([
        "-t".into(),
        place.client_threads.to_string(),
        "--cpus".into(),
        place.client_cpus.clone(),
    ]);
    match (&x.duration, x.requests) {
        (Some(d), _) => a.extend(["-d".into(), d.clone()]),
        (None, Some(n)) => a.extend(["-n".into(), n.to_string()]),
        _ => {}
    }
    for (flag, v) in [
        ("--warmup", &x.warmup),
        ("--think", &x.think),
        ("--timeout", &x.timeout),
        ("--bind", &x.bind),
    ] {
        if let Some(v) = v {
            a.extend([flag.into(), v.clone()]);
        }
    }
    if let Some(p) = x.pipeline {
        a.extend(["--pipeline".into(), p.to_string()]);
    }
    if x.close {
        a.push("--close".into());
    }
    if let Some(r) = x.rate {
        a.extend(["--rate".into(), r.to_string()]);
    }
    if x.proto != "http" {
        a.extend(["--size".into(), x.size.unwrap_or(128).to_string()]);
    }
    a
}

/// Runs one cell. `stop_flag` (Ctrl-C) interrupts it: the load is stopped and the cell is
/// recorded as interrupted.
pub fn run_cell(
    x: &Experiment,
    target: &Target,
    conns: usize,
    repeat: usize,
    place: &Placement,
    stop_flag: &AtomicU64,
) -> Cell {
    let started = Instant::now();
    let mut cell = Cell {
        experiment: x.name.clone(),
        target: target.label(),
        connections: conns,
        repeat,
        status: "ok".into(),
        seconds: 0.0,
        figures: Figures::default(),
        load: Value::Null,
        server_stats: Value::Null,
    };
    let server = match target {
        Target::Model(m) => start_model(m, x, place),
        Target::Peer(_) => start_nginx(x, place),
        Target::External(a) => Ok(Server {
            child: None,
            pid: 0,
            addr: *a,
            lines: None,
            dir: None,
        }),
    };
    let server = match server {
        Ok(s) => s,
        Err(e) => {
            cell.status = e;
            return cell;
        }
    };
    let watched = server.pid > 0;
    // Let workers finish starting, so their memory is in the baseline, not in the per-connection cost.
    std::thread::sleep(Duration::from_millis(200));
    let base = if watched {
        sample_tree(server.pid).unwrap_or_default()
    } else {
        ProcSample::default()
    };
    let mut peak = base;
    let measured = run_load(
        x,
        server.addr,
        conns,
        place,
        stop_flag,
        |s: &ProcSample| {
            peak.rss = peak.rss.max(s.rss);
            peak.threads = peak.threads.max(s.threads);
        },
        if watched { server.pid } else { 0 },
    );
    let (stats, verdict) = stop(server);
    cell.server_stats = stats;
    cell.seconds = started.elapsed().as_secs_f64();
    let (doc, begin, end) = match measured {
        Ok(m) => m,
        Err(e) => {
            cell.status = e;
            return cell;
        }
    };
    cell.load = doc;
    if stop_flag.load(Ordering::Relaxed) != 0 {
        cell.status = "interrupted".into();
    } else if let Err(e) = verdict {
        cell.status = e;
    }
    cell.figures = figures(
        &cell.load,
        &cell.server_stats,
        conns,
        &base,
        &peak,
        &begin,
        &end,
        watched,
    );
    cell
}

type Measured = Result<(Value, ProcSample, ProcSample), String>;

/// Runs the load child, sampling the server tree every 50 ms; the CPU window starts when the
/// warm-up ends.
fn run_load(
    x: &Experiment,
    addr: SocketAddr,
    conns: usize,
    place: &Placement,
    stop_flag: &AtomicU64,
    mut on_sample: impl FnMut(&ProcSample),
    pid: i32,
) -> Measured {
    let mut child = Command::new(exe()?)
        .args(load_args(x, addr, conns, place))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting the load generator: {e}"))?;
    let out = line_reader(child.stdout.take().expect("piped"));
    let err = line_reader(child.stderr.take().expect("piped"));
    let sample = || {
        if pid > 0 {
            sample_tree(pid).unwrap_or_default()
        } else {
            ProcSample::default()
        }
    };
    let t0 = Instant::now();
    let warm_end = t0 + x.warmup();
    let mut begin = if x.warmup().is_zero() { Some(sample()) } else { None };
    // The window ends when the duration does, not when the load generator has finished
    // closing its connections (which can take long with thousands of them).
    let window_end = x.duration().map(|d| warm_end + d);
    let mut end: Option<ProcSample> = None;
    let mut signalled = false;
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        let s = sample();
        on_sample(&s);
        if begin.is_none() && Instant::now() >= warm_end {
            begin = Some(s);
        }
        if end.is_none() && window_end.is_some_and(|w| Instant::now() >= w) {
            end = Some(s);
        }
        if stop_flag.load(Ordering::Relaxed) != 0 && !signalled {
            let _ = sys::process::kill(child.id() as i32, sys::signal::SIGINT);
            signalled = true;
        }
    }
    let end = end.unwrap_or_else(sample);
    let begin = begin.unwrap_or(end);
    let text = drain(&out).join("\n");
    let doc: Value = serde_json::from_str(&text).map_err(|_| {
        let e = drain(&err);
        format!(
            "the load generator failed ({}): {}",
            status_of(&mut child),
            e.join(" ").trim()
        )
    })?;
    Ok((doc, begin, end))
}

/// Every line a reader thread delivers until its pipe closes (bounded: 5 s).
fn drain(rx: &Receiver<String>) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut lines = Vec::new();
    while let Ok(l) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        lines.push(l);
    }
    lines
}

fn status_of(child: &mut Child) -> String {
    match child.try_wait() {
        Ok(Some(st)) => st.to_string(),
        _ => "still running".into(),
    }
}

#[allow(clippy::too_many_arguments)]
fn figures(
    load: &Value,
    stats: &Value,
    conns: usize,
    base: &ProcSample,
    peak: &ProcSample,
    begin: &ProcSample,
    end: &ProcSample,
    watched: bool,
) -> Figures {
    let f64_at = |v: &Value| v.as_f64().unwrap_or(0.0);
    let requests = load["requests"].as_u64().unwrap_or(0);
    let window = f64_at(&load["duration_s"]).max(1e-9);
    let cpu = end.cpu().saturating_sub(begin.cpu()).as_secs_f64();
    let t = &stats["totals"];
    let total = |k: &str| t[k].as_u64();
    let ratio = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) if b > 0 => Some(a as f64 / b as f64),
        _ => None,
    };
    let per_worker: Vec<u64> = stats["per_worker"]
        .as_array()
        .map(|w| w.iter().filter_map(|x| x["requests"].as_u64()).collect())
        .unwrap_or_default();
    Figures {
        throughput_rps: f64_at(&load["throughput_rps"]),
        requests,
        errors: load["error_total"].as_u64().unwrap_or(0),
        p50_us: f64_at(&load["latency_us"]["p50"]),
        p99_us: f64_at(&load["latency_us"]["p99"]),
        p999_us: f64_at(&load["latency_us"]["p999"]),
        server_cpu_us_per_req: if watched && requests > 0 {
            cpu * 1e6 / requests as f64
        } else {
            0.0
        },
        server_cpu_cores: if watched { cpu / window } else { 0.0 },
        client_cpu_util: f64_at(&load["client_cpu_utilization"]),
        client_bound: load["client_saturated"].as_bool().unwrap_or(false),
        mem_per_conn_kib: peak.rss.saturating_sub(base.rss) as f64 / 1024.0 / conns.max(1) as f64,
        peak_rss_mib: peak.rss as f64 / (1 << 20) as f64,
        peak_threads: peak.threads,
        context_switches: (end.voluntary_switches + end.involuntary_switches)
            .saturating_sub(begin.voluntary_switches + begin.involuntary_switches),
        jain_workers: (per_worker.len() > 1).then(|| jain(&per_worker)),
        jain_conns: load["fairness"]["jain"].as_f64().unwrap_or(1.0),
        starved_conns: load["fairness"]["starved"].as_u64().unwrap_or(0),
        useful_ratio: ratio(total("useful_events"), total("events")),
        syscalls_per_req: ratio(total("syscalls"), total("requests")),
        lost_races_per_accept: ratio(total("accept_lost"), total("accepted")),
        established: load["connections"]["established"].as_u64().unwrap_or(0),
    }
}
