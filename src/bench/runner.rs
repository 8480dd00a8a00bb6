//! Running one cell: start the server (see `process`), run `muxlab load` pinned to the client
//! CPUs, sample the server's process tree over the measured window only, stop the server, and
//! derive the cell's figures.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::Error;
use super::figures::{counters, figures, Samples};
use super::hosts::Sampler;
use super::nginx::start_nginx;
use super::own::Owned;
use super::process::{exe, line_reader, start_model, stop, Placement, Server};
use super::results::{Cell, Figures};
use super::scenario::Experiment;
use crate::sys;
use crate::sys::procfs::ProcSample;

/// How a baseline target's label ends.
pub const BASELINE: &str = "@baseline";

/// What a cell targets.
#[derive(Debug, Clone)]
pub enum Target {
    /// A muxlab model entry: name and serve flags.
    Model(String),
    /// The same entry served by another muxlab binary (`bench --baseline PATH`): before/after.
    Baseline(String, std::path::PathBuf),
    /// A production server started by the runner.
    Peer(String),
    /// A server somebody else runs (`--target host:port`).
    External(SocketAddr),
    /// A paired experiment's first model a second time, measured in the same rounds: the A/A
    /// figure (the smallest difference this machine resolves) comes from it.
    Twin(String),
}

/// How a twin's label ends.
pub const TWIN: &str = "(A/A)";

impl Target {
    pub fn label(&self) -> String {
        match self {
            Target::Model(m) => m.clone(),
            Target::Baseline(m, _) => format!("{m} {BASELINE}"),
            Target::Peer(p) => p.clone(),
            Target::External(a) => format!("target {a}"),
            Target::Twin(m) => format!("{m} {TWIN}"),
        }
    }
}

/// The `muxlab load` command line for a cell: its workload, then where the load runs.
/// `cell` is the cell's number in the run (`rotate_sources` picks its source address by it).
fn load_args(x: &Experiment, addr: SocketAddr, conns: usize, place: &Placement, cell: usize) -> Vec<String> {
    let mut a = workload_args(x, addr, conns, cell);
    a.extend(["--json".into(), "--progress-json".into()]);
    match place.hosts.as_ref().map(|h| h.load_flags()).filter(|f| !f.is_empty()) {
        // On client hosts the load uses every CPU there, a thread each.
        Some(flags) => a.extend(flags),
        None => a.extend([
            "-t".into(),
            place.client_threads.to_string(),
            "--cpus".into(),
            place.client_cpus.clone(),
        ]),
    }
    a
}

/// The workload of an experiment as `muxlab load` arguments (what `scenario::parse` checks
/// with the load generator's own rules when the file is read).
pub(super) fn workload_args(x: &Experiment, addr: SocketAddr, conns: usize, cell: usize) -> Vec<String> {
    let url = match x.proto.as_str() {
        "http" if x.tls => format!("https://{addr}/"),
        "http" => format!("http://{addr}/"),
        p => format!("{p}://{addr}"),
    };
    let mut a: Vec<String> = vec!["load".into(), url, "-c".into(), conns.to_string()];
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
        ("--body-size", &x.body_size),
    ] {
        if let Some(v) = v {
            a.extend([flag.into(), v.clone()]);
        }
    }
    if let Some(p) = x.pipeline {
        a.push(format!("--pipeline={p}"));
    }
    if x.rotate_sources && addr.ip().is_loopback() {
        // 127.0.0.10 .. 127.0.0.249, a new one per cell.
        a.extend(["--bind".into(), format!("127.0.0.{}", 10 + cell % 240)]);
    }
    if x.close {
        a.push("--close".into());
    }
    if x.chunked {
        a.push("--chunked".into());
    }
    if x.tls {
        a.push("--insecure".into());
    }
    if x.connect_first {
        a.push("--connect-first".into());
    }
    // `--flag=VALUE`: a negative number is a value to check, not a flag.
    if let Some(r) = x.rate {
        a.push(format!("--rate={r}"));
    }
    if let Some(r) = x.connect_rate {
        a.push(format!("--connect-rate={r}"));
    }
    if x.proto != "http" {
        a.extend(["--size".into(), x.size.unwrap_or(128).to_string()]);
    }
    a
}

/// Where a cell stands in the run: its number (`rotate_sources` picks its source address by
/// it), its connection count and its repeat.
#[derive(Debug, Clone, Copy)]
pub struct At {
    pub number: usize,
    pub conns: usize,
    pub repeat: usize,
}

/// Runs the cell `at`: the target's server started for it alone. `stop_flag` (Ctrl-C)
/// interrupts it: the load is stopped and the cell is recorded as interrupted.
pub fn run_cell(at: At, x: &Experiment, target: &Target, place: &Placement, stop_flag: &AtomicU64) -> Cell {
    let started = Instant::now();
    let mut server = Standing::start(x, target, place);
    let mut cell = server.burst(at, x, place, stop_flag);
    server.stop(&mut [&mut cell]);
    cell.seconds = started.elapsed().as_secs_f64();
    cell
}

/// A target's server, up for one cell, or for every burst of a paired group (`paired = true`:
/// every target's server up at once, the loads alternating between them).
pub struct Standing {
    label: String,
    up: Result<Up, String>,
}

struct Up {
    server: Server,
    sampler: Sampler,
    watched: bool,
    /// The tree before any load: what memory per connection is measured from.
    base: ProcSample,
}

impl Standing {
    /// Starts the target's server and the sampling of its process tree.
    pub fn start(x: &Experiment, target: &Target, place: &Placement) -> Standing {
        let server = match target {
            Target::Model(m) | Target::Twin(m) => exe().and_then(|bin| start_model(&bin, m, x, place)),
            Target::Baseline(m, bin) => start_model(bin, m, x, place),
            Target::Peer(p) => start_nginx(p, x, place),
            Target::External(a) => Ok(Server {
                child: None,
                pid: 0,
                addr: *a,
                lines: None,
                dir: None,
                session: None,
            }),
        };
        let up = server
            .and_then(|s| Sampler::new(s.pid, place.hosts.as_ref()).map(|sampler| (s, sampler)))
            .and_then(|(server, mut sampler)| {
                let watched = sampler.watched();
                // Let workers finish starting, so their memory is in the baseline, not in the
                // per-connection cost.
                std::thread::sleep(Duration::from_millis(200));
                let base = sampler.all()?;
                Ok(Up {
                    server,
                    sampler,
                    watched,
                    base,
                })
            })
            .map_err(|e| e.to_string());
        Standing {
            label: target.label(),
            up,
        }
    }

    /// Measures one cell against the server: a load run, the server's tree sampled over its
    /// window. The figures that come from the server's counters wait for [`Standing::stop`].
    pub fn burst(&mut self, at: At, x: &Experiment, place: &Placement, stop_flag: &AtomicU64) -> Cell {
        let At { number, conns, repeat } = at;
        let started = Instant::now();
        let mut cell = Cell {
            experiment: x.name.clone(),
            target: self.label.clone(),
            connections: conns,
            repeat,
            status: "ok".into(),
            seconds: 0.0,
            figures: Figures::default(),
            load: Value::Null,
            server_stats: Value::Null,
        };
        let up = match &mut self.up {
            Ok(up) => up,
            Err(e) => {
                cell.status = e.clone();
                return cell;
            }
        };
        let base = up.base;
        let mut peak = base;
        let cpu_source = up.sampler.cpu_source();
        let tcp_base = up.sampler.tcp_pages().unwrap_or(0);
        let mut tcp_peak = tcp_base;
        let args = load_args(x, up.server.addr, conns, place, number);
        let measured = run_load(x, args, stop_flag, &mut up.sampler, |s, tcp| {
            peak.rss = peak.rss.max(s.rss);
            peak.threads = peak.threads.max(s.threads);
            tcp_peak = tcp_peak.max(tcp.unwrap_or(0));
        });
        cell.seconds = started.elapsed().as_secs_f64();
        let Window {
            doc,
            begin,
            end,
            span,
            steal_pct,
        } = match measured {
            Ok(m) => m,
            Err(e) => {
                cell.status = e.to_string();
                return cell;
            }
        };
        cell.load = doc;
        if stop_flag.load(Ordering::Relaxed) != 0 {
            cell.status = "interrupted".into();
        } else if let Some(short) = short_window(&cell.load, x.duration()) {
            cell.status = short;
        } else if cell.load["requests"].as_u64() == Some(0) {
            cell.status = "no request completed in the measured window: nothing was measured".into();
        }
        let samples = Samples {
            base: &base,
            peak: &peak,
            begin: &begin,
            end: &end,
            span,
        };
        cell.figures = figures(&cell.load, &samples, up.watched.then_some(cpu_source).flatten());
        cell.figures.steal_pct = steal_pct;
        cell.figures.kernel_tcp_kib_per_conn =
            tcp_peak.saturating_sub(tcp_base) as f64 * 4.0 / cell.figures.established.max(1) as f64;
        cell
    }

    /// Stops the server. Its stats line completes `cells` (all measured against it): the
    /// counters' figures (syscalls per request and the like, over all of them), and a failed
    /// stop (a crash, processes left behind) fails them.
    pub fn stop(self, cells: &mut [&mut Cell]) {
        let Ok(up) = self.up else { return };
        drop(up.sampler);
        let (stats, verdict) = stop(up.server);
        for cell in cells.iter_mut() {
            counters(&mut cell.figures, &stats);
            cell.server_stats = stats.clone();
            if let (Err(e), "ok") = (&verdict, cell.status.as_str()) {
                cell.status = e.to_string();
            }
        }
    }
}

/// Why a duration run's cell fails when its measured window is under half the planned one
/// (the load spent its time connecting, or stopped early); `None` when it is long enough.
pub(super) fn short_window(load: &Value, planned: Option<Duration>) -> Option<String> {
    let planned = planned?.as_secs_f64();
    let window = load["duration_s"].as_f64().unwrap_or(0.0);
    (window < planned / 2.0).then(|| {
        format!("the measured window was {window:.2} s of the {planned:.2} s planned (under half): not a measurement of the planned run")
    })
}

/// What a load run measured: the load's document, the server samples at the window's ends, the
/// time between them, and the machine's steal time over it (per cent of all CPU time).
struct Window {
    doc: Value,
    begin: ProcSample,
    end: ProcSample,
    span: Duration,
    steal_pct: Option<f64>,
}

type Measured = Result<Window, Error>;

/// One end of the window: the server tree's sample, when it was taken, and the machine's steal
/// and total CPU time then.
type Mark = (ProcSample, Instant, Option<(u64, u64)>);

/// How long before the window closes its end is sampled (a quarter of the window at most).
const END_EARLY: Duration = Duration::from_millis(300);

/// Runs the load child, sampling the server tree every 50 ms; the CPU window starts when the
/// warm-up ends.
fn run_load(
    x: &Experiment,
    args: Vec<String>,
    stop_flag: &AtomicU64,
    sampler: &mut Sampler,
    mut on_sample: impl FnMut(&ProcSample, Option<u64>),
) -> Measured {
    let mut child = Owned(
        Command::new(exe()?)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting the load generator: {e}"))?,
    );
    let out = line_reader(child.stdout.take().expect("piped"));
    let err = line_reader(child.stderr.take().expect("piped"));
    // The window's ends also count every thread's context switches (a file per thread: with
    // 15,000 threads that takes a while). Stamped when the CPU times are read, at its start.
    let sample_all = |sampler: &mut Sampler| -> Result<Mark, Error> {
        let at = Instant::now();
        let steal = sys::procfs::steal_and_total();
        Ok((sampler.all()?, at, steal))
    };
    // The load says when it starts (over ssh, the hosts start at an agreed instant, later).
    let mut lines = Vec::new();
    loop {
        match out.recv_timeout(Duration::from_millis(50)) {
            Ok(l) if l.contains("\"event\":\"started\"") => break,
            Ok(l) if l.contains("\"event\":\"progress\"") => {}
            Ok(l) => lines.push(l),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(_) => break,
        }
        on_sample(&sampler.tree()?, sampler.tcp_pages());
        if stop_flag.load(Ordering::Relaxed) != 0 {
            let _ = sys::process::kill(child.id() as i32, sys::signal::SIGINT);
        }
    }
    let t0 = Instant::now();
    let warm_end = t0 + x.warmup();
    // Each end of the window: a sample with every thread's context switches, and when it was
    // taken. The end is sampled just before the window closes, while the connections (and
    // their threads) are still there; the CPU time is scaled to the window by the samples' span.
    let mut begin = if x.warmup().is_zero() {
        Some(sample_all(sampler)?)
    } else {
        None
    };
    // The window ends when the duration does, not when the load generator has finished
    // closing its connections (which can take long with thousands of them).
    let mut window_end = x.duration().map(|d| warm_end + d.saturating_sub(END_EARLY.min(d / 4)));
    let mut end: Option<Mark> = None;
    let mut signalled = false;
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        let s = sampler.tree()?;
        on_sample(&s, sampler.tcp_pages());
        if begin.is_none() && Instant::now() >= warm_end {
            let b = sample_all(sampler)?;
            // The end's scan must finish before the connections close: start it earlier by
            // twice what this one took (a quarter of the window at most).
            let cost = b.1.elapsed() * 2;
            if let (Some(w), Some(d)) = (window_end.as_mut(), x.duration()) {
                *w = (*w).min(warm_end + d.saturating_sub(cost.min(d / 4)));
            }
            begin = Some(b);
        }
        if end.is_none() && window_end.is_some_and(|w| Instant::now() >= w) {
            end = Some(sample_all(sampler)?);
        }
        if stop_flag.load(Ordering::Relaxed) != 0 && !signalled {
            let _ = sys::process::kill(child.id() as i32, sys::signal::SIGINT);
            signalled = true;
        }
    }
    let end = match end {
        Some(e) => e,
        None => sample_all(sampler)?,
    };
    let begin = begin.unwrap_or(end);
    lines.extend(
        drain(&out)
            .into_iter()
            .filter(|l| !l.contains("\"event\":\"progress\"")),
    );
    let text = lines.join("\n");
    let doc: Value = serde_json::from_str(&text).map_err(|_| {
        let e = drain(&err);
        format!(
            "the load generator failed ({}): {}",
            status_of(&mut child),
            e.join(" ").trim()
        )
    })?;
    let span = end.1.saturating_duration_since(begin.1);
    let steal = match (begin.2, end.2) {
        (Some((s0, t0)), Some((s1, t1))) if t1 > t0 => Some((s1.saturating_sub(s0)) as f64 * 100.0 / (t1 - t0) as f64),
        _ => None,
    };
    Ok(Window {
        doc,
        begin: begin.0,
        end: end.0,
        span,
        steal_pct: steal,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_window_under_half_the_planned_one_fails_the_cell_and_a_run_without_duration_never_does() {
        let planned = Some(Duration::from_secs(4));
        let why = short_window(&json!({"duration_s": 1.9}), planned).unwrap();
        assert!(why.contains("1.90 s of the 4.00 s planned"), "{why}");
        assert!(short_window(&json!({"duration_s": 0.0}), planned).is_some());
        assert!(short_window(&json!({}), planned).is_some(), "no window at all is short");
        assert_eq!(short_window(&json!({"duration_s": 2.0}), planned), None);
        assert_eq!(short_window(&json!({"duration_s": 0.1}), None), None);
    }
}
