//! Running one cell: start the server (see `process`), run `muxlab load` pinned to the client
//! CPUs, sample the server's process tree over the measured window only, stop the server, and
//! derive the cell's figures.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::error::Error;
use super::hosts::Sampler;
use super::nginx::start_nginx;
use super::own::Owned;
use super::process::{exe, line_reader, start_model, stop, Placement, Server};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{counters, figures, Samples};
use crate::bench::record::{Cell, CellStatus};
use crate::load::{Document, Line, Said};
use crate::sys;
use crate::sys::procfs::{CpuTimes, ProcSample};
use crate::units::{AddrRange, CpuList};

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

impl Target {
    /// As its cells name it (a twin's cells name its model and say they are the twin).
    fn name(&self) -> String {
        match self {
            Target::Model(m) | Target::Twin(m) => m.clone(),
            Target::Baseline(m, _) => format!("{m} {BASELINE}"),
            Target::Peer(p) => p.clone(),
            Target::External(a) => format!("target {a}"),
        }
    }

    /// As tables and progress lines show it.
    pub fn label(&self) -> String {
        self.cell("", At::default()).label()
    }

    /// A cell of experiment `x` against this target at `at`, not run yet.
    pub fn cell(&self, x: &str, at: At) -> Cell {
        let mut c = Cell::new(x, &self.name(), at.conns, at.repeat);
        c.twin = matches!(self, Target::Twin(_));
        c
    }
}

/// The `muxlab load` command line for a cell: its workload, then where the load runs.
/// `cell` is the cell's number in the run (`rotate_sources` picks its source address by it).
fn load_args(x: &Experiment, addr: SocketAddr, conns: usize, place: &Placement, cell: usize) -> Vec<String> {
    let mut load = x.load_args(addr, conns);
    if x.rotate_sources && addr.ip().is_loopback() {
        // 127.0.0.10 .. 127.0.0.249, a new one per cell.
        load.workload.bind = Some(AddrRange(vec![Ipv4Addr::new(127, 0, 0, 10 + (cell % 240) as u8)]));
    }
    let hosts = place.hosts.as_ref().map(|h| h.load_flags()).filter(|f| !f.is_empty());
    if hosts.is_none() {
        load.threads = Some(place.client_threads);
        // Checked when the scenario was read; a list that still does not read leaves the
        // load to refuse it, naming it.
        load.cpus = Some(CpuList::from_str(&place.client_cpus).unwrap_or(CpuList(Vec::new())));
    }
    let mut a = vec!["load".to_string()];
    a.extend(load.to_args());
    a.extend(["--json".into(), "--progress-json".into()]);
    // On client hosts the load uses every CPU there, a thread each.
    a.extend(hosts.unwrap_or_default());
    a
}

/// Where a cell stands in the run: its number (`rotate_sources` picks its source address by
/// it), its connection count and its repeat.
#[derive(Debug, Clone, Copy, Default)]
pub struct At {
    pub number: usize,
    pub conns: usize,
    pub repeat: usize,
}

/// Runs the cell `at`: the target's server started for it alone. `stop_flag` (Ctrl-C)
/// interrupts it: the load is stopped and the cell is recorded as interrupted.
pub fn run_cell(at: At, x: &Experiment, target: &Target, place: &Placement, stop_flag: &AtomicU64) -> Cell {
    if x.load.slo.is_some() {
        return super::capacity::run_search(at, x, target, place, stop_flag);
    }
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
    target: Target,
    /// The model entry it serves (`None`: a peer or a server muxlab does not run).
    entry: Option<String>,
    up: Result<Up, Error>,
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
            });
        let entry = match target {
            Target::Model(m) | Target::Twin(m) | Target::Baseline(m, _) => Some(m.clone()),
            Target::Peer(_) | Target::External(_) => None,
        };
        Standing {
            target: target.clone(),
            entry,
            up,
        }
    }

    /// Measures one cell against the server: a load run, the server's tree sampled over its
    /// window. The figures that come from the server's counters wait for [`Standing::stop`].
    pub fn burst(&mut self, at: At, x: &Experiment, place: &Placement, stop_flag: &AtomicU64) -> Cell {
        let started = Instant::now();
        let mut cell = self.target.cell(&x.name, at);
        let up = match &mut self.up {
            Ok(up) => up,
            Err(e) => {
                cell.status = CellStatus::from(&*e);
                return cell;
            }
        };
        let base = up.base;
        let mut peak = base;
        let cpu_source = up.sampler.cpu_source();
        let tcp_base = up.sampler.tcp_pages().unwrap_or(0);
        let mut tcp_peak = tcp_base;
        let args = load_args(x, up.server.addr, at.conns, place, at.number);
        let harness = harness_cpus(place);
        let cpus = local_server_cpus(place);
        let on = Cpus {
            harness: harness.as_deref(),
            server: cpus.as_deref(),
        };
        let measured = run_load(x, args, on, stop_flag, &mut up.sampler, |s, tcp| {
            peak.rss = peak.rss.max(s.rss);
            peak.threads = peak.threads.max(s.threads);
            tcp_peak = tcp_peak.max(tcp.unwrap_or(0));
        });
        cell.seconds = started.elapsed().as_secs_f64();
        let w = match measured {
            Ok(m) => m,
            Err(e) => {
                cell.status = CellStatus::from(&e);
                return cell;
            }
        };
        cell.status = status_after(&w.doc, x.duration(), stop_flag.load(Ordering::Relaxed) != 0);
        let samples = Samples {
            base: &base,
            peak: &peak,
            begin: &w.begin,
            end: &w.end,
            span: w.span,
            cpus: w.cpus,
        };
        cell.figures = figures(&w.doc, &samples, up.watched.then_some(cpu_source).flatten());
        cell.figures.steal_pct = w.steal_pct;
        if let Some(why) = cell.figures.why.as_mut() {
            why.server_cpus = cpus.as_ref().map(Vec::len);
            let work = self
                .entry
                .as_deref()
                .and_then(|e| super::predicted::work_means(x, e, at.conns, &place.server_cpus));
            why.work_cpu_us = work.map(|w| w.0);
            why.work_sleep_us = work.map(|w| w.1);
            why.connections = at.conns;
            why.closed_no_think = x.load.rate.is_none() && x.load.think.is_none() && x.load.slo.is_none();
        }
        cell.figures.predicted = self.entry.as_deref().and_then(|e| {
            super::predicted::prediction(x, e, at.conns, &place.server_cpus, cell.figures.server_cpu_us_per_req)
        });
        cell.figures.kernel_tcp_kib_per_conn =
            tcp_peak.saturating_sub(tcp_base) as f64 * 4.0 / cell.figures.established.max(1) as f64;
        cell.load = Some(Box::new(w.doc));
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
            if let Some(st) = &stats {
                counters(&mut cell.figures, st);
            }
            cell.server_stats = stats.clone();
            if let (Err(e), true) = (&verdict, cell.ok()) {
                cell.status = CellStatus::from(e);
            }
        }
    }
}

/// How a measured cell ended: interrupted, a window too short to be the planned run, nothing
/// completed (nothing measured), or ok.
pub(super) fn status_after(doc: &Document, planned: Option<Duration>, interrupted: bool) -> CellStatus {
    if interrupted {
        CellStatus::Interrupted
    } else if let Some(short) = short_window(doc, planned) {
        CellStatus::Failed(short)
    } else if doc.results.requests == 0 {
        CellStatus::Failed("no request completed in the measured window: nothing was measured".into())
    } else {
        CellStatus::Ok
    }
}

/// Why a duration run's cell fails when its measured window is under half the planned one
/// (the load spent its time connecting, or stopped early); `None` when it is long enough.
pub(super) fn short_window(doc: &Document, planned: Option<Duration>) -> Option<String> {
    let planned = planned?.as_secs_f64();
    let window = doc.results.duration_s;
    (window < planned / 2.0).then(|| {
        format!("the measured window was {window:.2} s of the {planned:.2} s planned (under half): not a measurement of the planned run")
    })
}

/// What a load run measured: the load's document, the server samples at the window's ends, the
/// time between them, and the machine's steal time over it (per cent of all CPU time).
struct Window {
    doc: Document,
    begin: ProcSample,
    end: ProcSample,
    span: Duration,
    steal_pct: Option<f64>,
    /// The server's CPUs' times at the two ends.
    cpus: Option<(CpuTimes, CpuTimes)>,
}

/// Where the harness samples from, and the server's CPUs whose times it reads at the window's
/// ends (each `None` where it does not apply).
#[derive(Clone, Copy)]
struct Cpus<'a> {
    harness: Option<&'a [usize]>,
    server: Option<&'a [usize]>,
}

type Measured = Result<Window, Error>;

/// One end of the window: the server tree's sample, when it was taken, and the machine's steal
/// and total CPU time then.
#[derive(Clone, Copy)]
struct Mark {
    sample: ProcSample,
    /// When its CPU time was read.
    at: Instant,
    /// The machine's steal and total CPU time then (`/proc/stat`), where readable.
    steal: Option<(u64, u64)>,
    /// The server's CPUs' times then.
    cpus: Option<CpuTimes>,
}

/// How long before the window closes its end is sampled (a quarter of the window at most).
const END_EARLY: Duration = Duration::from_millis(300);

/// Where the harness samples the server while a load runs: on the server's CPUs, never the
/// client's. Its reads of `/proc` (every server process every 50 ms: 256 of them for `fork`)
/// on the client's CPU delayed the client, and that lateness was charged to the probe. `None`
/// (where it was): a server on another host, or sharing the client's CPUs.
fn harness_cpus(place: &Placement) -> Option<Vec<usize>> {
    let server = local_server_cpus(place)?;
    let client = crate::units::parse_cpus(&place.client_cpus).ok()?;
    server.iter().all(|c| !client.contains(c)).then_some(server)
}

/// The server's CPUs where they are this machine's (`None`: on another host, or no list).
fn local_server_cpus(place: &Placement) -> Option<Vec<usize>> {
    if place.remote_server() {
        return None;
    }
    crate::units::parse_cpus(&place.server_cpus)
        .ok()
        .filter(|c| !c.is_empty())
}

/// Runs the load child, sampling the server tree every 50 ms (from `harness` CPUs, where
/// given); the CPU window starts when the warm-up ends.
fn run_load(
    x: &Experiment,
    args: Vec<String>,
    on: Cpus,
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
            .map_err(|e| Error::Cell(format!("starting the load generator: {e}")))?,
    );
    // Moved after the spawn: the load starts where this thread was and pins itself.
    let _pinned = on.harness.and_then(|cpus| sys::affinity::Pinned::to(cpus).ok());
    let out = line_reader(child.stdout.take().expect("piped"));
    let err = line_reader(child.stderr.take().expect("piped"));
    // The load says when it starts (over ssh, the hosts start at an agreed instant, later).
    let mut doc = None;
    loop {
        match out.recv_timeout(Duration::from_millis(50)).map(|l| Line::read(&l)) {
            Ok(Said::Event(Line::Started)) | Err(RecvTimeoutError::Disconnected) => break,
            Ok(Said::Document(d)) => doc = Some(d),
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
        }
        on_sample(&sampler.tree()?, sampler.tcp_pages());
        if stop_flag.load(Ordering::Relaxed) != 0 {
            let _ = sys::process::kill(child.id() as i32, sys::signal::SIGINT);
        }
    }
    let (begin, end) = sample_window(x, &mut child, stop_flag, sampler, on.server, &mut on_sample)?;
    for l in drain(&out) {
        if let Said::Document(d) = Line::read(&l) {
            doc = Some(d);
        }
    }
    let Some(doc) = doc else {
        return Err(Error::Cell(format!(
            "the load generator failed ({}): {}",
            status_of(&mut child),
            drain(&err).join(" ").trim()
        )));
    };
    let span = end.at.saturating_duration_since(begin.at);
    let steal = match (begin.steal, end.steal) {
        (Some((s0, t0)), Some((s1, t1))) if t1 > t0 => Some((s1.saturating_sub(s0)) as f64 * 100.0 / (t1 - t0) as f64),
        _ => None,
    };
    Ok(Window {
        doc: *doc,
        begin: begin.sample,
        end: end.sample,
        span,
        steal_pct: steal,
        cpus: begin.cpus.zip(end.cpus),
    })
}

/// One end of the window: a sample with every thread's context switches (a file per thread:
/// with 15,000 threads that takes a while), stamped when the CPU times are read, at its start.
fn mark(sampler: &mut Sampler, server: Option<&[usize]>) -> Result<Mark, Error> {
    let at = Instant::now();
    let steal = sys::procfs::steal_and_total();
    let cpus = server.and_then(sys::procfs::cpu_times);
    Ok(Mark {
        sample: sampler.all()?,
        at,
        steal,
        cpus,
    })
}

/// Samples the server from the load's start until it exits: the window's ends, and the tree
/// every 50 ms between. The end is sampled just before the window closes, while the
/// connections (and their threads) are still there; the CPU time is scaled to the window by
/// the samples' span. Ctrl-C is passed on to the load.
fn sample_window(
    x: &Experiment,
    child: &mut Owned,
    stop_flag: &AtomicU64,
    sampler: &mut Sampler,
    server: Option<&[usize]>,
    on_sample: &mut impl FnMut(&ProcSample, Option<u64>),
) -> Result<(Mark, Mark), Error> {
    let warm_end = Instant::now() + x.warmup();
    let mut begin = if x.warmup().is_zero() {
        Some(mark(sampler, server)?)
    } else {
        None
    };
    // The window ends when the duration does, not when the load generator has finished
    // closing its connections (which can take long with thousands of them).
    let mut window_end = x.duration().map(|d| warm_end + d.saturating_sub(END_EARLY.min(d / 4)));
    let mut end: Option<Mark> = None;
    let mut signalled = false;
    while child
        .try_wait()
        .map_err(|e| Error::Cell(format!("waiting for the load generator: {e}")))?
        .is_none()
    {
        std::thread::sleep(Duration::from_millis(50));
        let s = sampler.tree()?;
        on_sample(&s, sampler.tcp_pages());
        if begin.is_none() && Instant::now() >= warm_end {
            let b = mark(sampler, server)?;
            // The end's scan must finish before the connections close: start it earlier by
            // twice what this one took (a quarter of the window at most).
            let cost = b.at.elapsed() * 2;
            if let (Some(w), Some(d)) = (window_end.as_mut(), x.duration()) {
                *w = (*w).min(warm_end + d.saturating_sub(cost.min(d / 4)));
            }
            begin = Some(b);
        }
        if end.is_none() && window_end.is_some_and(|w| Instant::now() >= w) {
            end = Some(mark(sampler, server)?);
        }
        if stop_flag.load(Ordering::Relaxed) != 0 && !signalled {
            let _ = sys::process::kill(child.id() as i32, sys::signal::SIGINT);
            signalled = true;
        }
    }
    let end = match end {
        Some(e) => e,
        None => mark(sampler, server)?,
    };
    Ok((begin.unwrap_or(end), end))
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

    /// A document of a window of `secs` that completed `requests`.
    fn doc(secs: f64, requests: u64) -> Document {
        let spec = crate::load::LoadArgs::new(
            crate::load::Target::parse("http://127.0.0.1:1/").unwrap(),
            1,
            Default::default(),
        )
        .resolve()
        .unwrap();
        let mut o = crate::load::Outcome::empty(1, false);
        o.elapsed = Duration::from_secs_f64(secs);
        o.tally.requests = requests;
        Document::new(&spec, &o)
    }

    /// The harness samples from the server's CPUs, never the client's (before: wherever the
    /// scheduler put it, the client's CPU included); where they share CPUs or the server is on
    /// another host it stays where it was.
    #[test]
    fn the_harness_samples_on_the_servers_cpus_never_the_clients() {
        let place = |server: &str, client: &str| Placement {
            server_cpus: server.into(),
            client_cpus: client.into(),
            client_threads: 1,
            server_addr: "127.0.0.1:0".into(),
            hosts: None,
        };
        assert_eq!(harness_cpus(&place("0", "1")), Some(vec![0]));
        assert_eq!(harness_cpus(&place("0-3", "4,5")), Some(vec![0, 1, 2, 3]));
        assert_eq!(harness_cpus(&place("0", "0")), None);
        assert_eq!(harness_cpus(&place("0,1", "1")), None);
    }

    #[test]
    fn a_window_under_half_the_planned_one_fails_the_cell_and_a_run_without_duration_never_does() {
        let planned = Some(Duration::from_secs(4));
        let why = short_window(&doc(1.9, 5), planned).unwrap();
        assert!(why.contains("1.90 s of the 4.00 s planned"), "{why}");
        assert!(short_window(&doc(0.0, 5), planned).is_some());
        assert_eq!(short_window(&doc(2.0, 5), planned), None);
        assert_eq!(short_window(&doc(0.1, 5), None), None);
    }

    #[test]
    fn a_cell_that_completed_nothing_fails_and_an_interrupted_one_says_so() {
        let planned = Some(Duration::from_secs(1));
        assert_eq!(status_after(&doc(1.0, 5), planned, false), CellStatus::Ok);
        let nothing = status_after(&doc(1.0, 0), planned, false);
        assert!(
            matches!(&nothing, CellStatus::Failed(why) if why.contains("no request completed")),
            "{nothing:?}"
        );
        assert_eq!(status_after(&doc(0.1, 0), planned, true), CellStatus::Interrupted);
    }
}
