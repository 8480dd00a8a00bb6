//! `load`: the load generator. One engine and one statistics path for short-connection HTTP
//! (like ab), keep-alive and pipelined HTTP (like wrk), and echo / packet streams, closed loop or
//! open loop at a fixed rate with coordinated-omission-correct latency.
//!
//! A run is [`LoadArgs`] (the flags, or a scenario's keys) resolved into a [`Spec`]; [`run`]
//! splits its connections over engine threads (`engine`), shows a progress line, and merges the
//! threads' [`Tally`]s into an [`Outcome`]; its [`Document`] is what `--json` prints. Runs
//! needing more descriptors than one process may open are split over child processes
//! ([`shard::run`]); their documents merge the same way ([`merge`]).

mod args;
mod document;
mod engine;
mod error;
pub mod gates;
pub mod h2;
pub mod keyed;
pub mod limit;
pub(crate) mod merge;
mod pacing;
mod progress;
mod request;
mod response;
pub mod series;
mod shard;
pub mod slo;
mod sources;
mod spec;
pub mod sse;
pub(crate) mod summary;
mod tally;
mod tls;
mod workload;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use crate::hist::{Hist, Latency};
pub use args::LoadArgs;
pub use document::{Document, Environment, HostLine, Part, RunConfig, TOOL};
use engine::{Engine, Progress, Start, ThreadPlan};
pub use error::{io_err, Error};
pub use h2::{H2Figures, H2Tally};
pub use limit::ClientLimit;
pub use pacing::Pacing;
pub use progress::{Line, Said, Tick};
pub use request::{pattern, EchoReader, Kind, Mismatch, Payload, Target};
pub use response::{HttpReader, Read};
pub use shard::{needed as shard_processes, per_process, run as run_shards, split, split_weighted, Shard};
pub use spec::{Share, Spec};
pub use tally::{jain, ErrorClass, Tally, ERROR_CLASSES};
pub use tls::client_config as tls_client;
pub use workload::{Arrivals, Bound, Class, MixEntry, Quantile, Rate, Slo, Workload, MAX_STREAMS};

use crate::sys;
use crate::units::serde_as;

/// What one process measured (or, merged, a whole run: see [`merge`]). Its serde form is the
/// `interchange` section of a [`Document`], lossless.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    /// Connection slots this outcome covers (its share of `-c`).
    pub connections: usize,
    /// The open-loop rate this share was asked for (`--rate`).
    pub offered_rps: Option<f64>,
    /// When the measured window began, in milliseconds since the Unix epoch (aligns the
    /// per-second series of pieces run by different processes or hosts).
    pub window_start_ms: u64,
    /// Length of the measured window.
    #[serde(rename = "elapsed_s", with = "serde_as::secs")]
    pub elapsed: Duration,
    /// How long opening the connections took, before the warm-up and the window began.
    #[serde(rename = "connecting_s", with = "serde_as::secs", default)]
    pub connecting: Duration,
    /// CPU time (user + system) the client used over the window.
    #[serde(rename = "client_cpu_s", with = "serde_as::secs")]
    pub client_cpu: Duration,
    /// CPUs the client's threads could use at once (threads, at most the cores).
    pub cpu_slots: usize,
    pub threads: usize,
    pub shards: usize,
    /// Set when the run was cut short by Ctrl-C.
    #[serde(default)]
    pub interrupted: bool,
    pub tally: Tally,
}

impl Outcome {
    /// An outcome with nothing in it (no piece reported), over `connections`.
    pub fn empty(connections: usize, interrupted: bool) -> Outcome {
        Outcome {
            tally: Tally::default(),
            connections,
            offered_rps: None,
            window_start_ms: unix_ms(),
            elapsed: Duration::ZERO,
            connecting: Duration::ZERO,
            client_cpu: Duration::ZERO,
            cpu_slots: 0,
            threads: 0,
            shards: 0,
            interrupted,
        }
    }

    /// Client CPU use as a share of the time its CPUs had.
    pub fn utilization(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs <= 0.0 || self.cpu_slots == 0 {
            return 0.0;
        }
        self.client_cpu.as_secs_f64() / (secs * self.cpu_slots as f64)
    }

    /// Whether the client may have been the bottleneck.
    pub fn saturated(&self) -> bool {
        ClientLimit::busy(self.utilization()).is_some()
    }
}

/// Set by SIGINT / SIGTERM: engines stop and the summary covers what finished.
pub(super) static STOP: AtomicU64 = AtomicU64::new(0);

/// How a run shows its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    Nothing,
    /// A line rewritten each second on stderr, when it is a terminal.
    Terminal,
    /// A JSON line each second on stdout (`{"event":"progress",...}`), also while waiting for
    /// `--start-at`, and `{"event":"started"}` when the run starts: what `--hosts` reads from
    /// each host (and how it knows the host is alive), and what bench reads to place its window.
    JsonLines,
}

/// Runs `spec` from here: on this process's engine threads, or split over processes where its
/// connections need more descriptors than one process may open (said on stderr when `say`).
pub fn run_here(spec: &Spec, show: Show, say: bool) -> Result<Outcome, Error> {
    // A part started by a parent runs its piece as it is.
    let shards = match spec.subshard() {
        Some(_) => 1,
        None => shard_processes(spec.share().connections),
    };
    if shards == 1 {
        return run(spec, show);
    }
    if say {
        eprintln!(
            "muxlab: {} connections need more descriptors than one process may open ({}): running {shards} processes",
            spec.share().connections,
            per_process()
        );
    }
    // The parts run on the CPUs this process was given (they inherit its affinity), and the
    // merge counts those CPUs, not the machine's, when it tells a saturated client.
    if let Some(cpus) = spec.cpus() {
        sys::affinity::set(&cpus.0)
            .map_err(|e| Error::Usage(format!("cannot pin the client to CPUs {cpus:?}: {e}")))?;
    }
    run_shards(spec, shards, show)
}

/// Runs this process's share of `spec` on its engine threads.
pub fn run(spec: &Spec, show: Show) -> Result<Outcome, Error> {
    if let Some(cpus) = spec.cpus() {
        sys::affinity::set(&cpus.0)
            .map_err(|e| Error::Usage(format!("cannot pin the client to CPUs {cpus:?}: {e}")))?;
    }
    let (_, hard) = sys::rlimit::nofile().map_err(io_err("reading RLIMIT_NOFILE"))?;
    let _ = sys::rlimit::set_nofile(hard);
    let _ = sys::signal::install_stop_handler(&STOP);
    if let (true, Some(cfg), None) = (spec.h2, spec.tls.as_ref(), spec.subshard()) {
        tls::alpn_check(spec.target(), cfg, spec.timeout())?;
    }
    let share = spec.share();
    let conns = share.connections;
    let spec = &*sources::with_room(spec, conns);
    let threads = spec.threads().min(conns).max(1);
    let progress: Vec<Progress> = (0..threads).map(|_| Progress::default()).collect();
    // The keyspace is written before the start (and before a shared start time: every piece's
    // keys are in place when any piece's window opens).
    let prefilled = match spec.keyed.as_ref().filter(|p| p.prefill) {
        Some(plan) => {
            if show == Show::Terminal {
                eprintln!("muxlab: --prefill: writing this process's share of {} keys", plan.keys);
            }
            let (n, secs) = keyed::prefill(spec, plan, share.first_slot, conns as u64, threads)?;
            if show == Show::Terminal {
                eprintln!("muxlab: --prefill wrote {n} keys in {secs:.2} s");
            }
            Some(n)
        }
        None => None,
    };
    if let Some(at) = spec.start_at() {
        progress::wait_until(at, show);
    }
    // Connections open first; the warm-up and the window start once they are (see `Start`).
    let launched = Instant::now();
    let start = Start::new(threads);
    let warmup = spec.warmup();
    let (tallies, watched) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let plan = ThreadPlan::of(&share, threads, t, launched);
                let (p, start) = (&progress[t], &start);
                s.spawn(move || -> Result<(Tally, Duration), Error> {
                    // A thread that cannot start has ended its connecting: the others' window
                    // must not wait for it.
                    let engine = Engine::new(spec, plan, start).map_err(|e| {
                        start.thread_done(Instant::now());
                        io_err("starting an engine thread")(e)
                    })?;
                    Ok(engine.run(p, &STOP))
                })
            })
            .collect();
        let watched = watch(&handles, &start, &progress, show, warmup, launched);
        let tallies: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Failed("an engine thread panicked".into())))
            })
            .collect();
        (tallies, watched)
    });
    let end = Instant::now();
    let mut tally = Tally::default();
    let mut client_cpu = watched.cpu;
    for t in tallies {
        let (t, cpu) = t?;
        tally.merge(&t);
        client_cpu += cpu;
    }
    if let (Some(n), Some(k)) = (prefilled, tally.keyed.as_mut()) {
        k.prefilled = n;
    }
    let measure_from = watched.t0 + warmup;
    let window_end = spec.duration.map_or(end, |d| end.min(measure_from + d));
    // The CPUs this process may run on (its affinity), not the machine's.
    let cores = sys::affinity::get().map(|c| c.len()).unwrap_or(1).max(1);
    Ok(Outcome {
        tally,
        connections: conns,
        offered_rps: share.rate,
        window_start_ms: watched.wall0 + warmup.as_millis() as u64,
        elapsed: window_end.saturating_duration_since(measure_from),
        connecting: watched.t0.saturating_duration_since(launched),
        client_cpu,
        cpu_slots: threads.min(cores),
        threads,
        shards: 1,
        interrupted: STOP.load(Ordering::Relaxed) != 0,
    })
}

/// What the main thread saw while the engines ran: when connecting ended (`t0`, and the wall
/// clock then), and the CPU it used itself over the window (the progress line).
struct Watched {
    t0: Instant,
    wall0: u64,
    cpu: Duration,
}

/// Follows the engine threads until they end: says when the run started (JSON lines), shows
/// progress, and counts its own CPU from the warm-up's end.
fn watch<T>(
    handles: &[std::thread::ScopedJoinHandle<'_, T>],
    start: &Start,
    progress: &[Progress],
    show: Show,
    warmup: Duration,
    launched: Instant,
) -> Watched {
    let mut w = Watched {
        t0: launched,
        wall0: unix_ms(),
        cpu: Duration::ZERO,
    };
    let mut ticker = progress::Ticker::new(warmup, show, launched);
    let mut from = None;
    let mut started = false;
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(5));
        if let (false, Some(t)) = (started, start.t0()) {
            started = true;
            w.t0 = t;
            w.wall0 = unix_ms().saturating_sub(t.elapsed().as_millis() as u64);
            ticker.window_from(t);
            if show == Show::JsonLines {
                Line::Started.print();
            }
        }
        if from.is_none() && started && Instant::now() >= w.t0 + warmup {
            from = Some(sys::process::thread_cpu_time());
        }
        ticker.tick(progress);
    }
    w.cpu = from.map_or(Duration::ZERO, |f| sys::process::thread_cpu_time().saturating_sub(f));
    ticker.finish();
    w
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
