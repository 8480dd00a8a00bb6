//! `load`: the load generator. One engine and one statistics path for short-connection HTTP
//! (like ab), keep-alive and pipelined HTTP (like wrk), and echo / packet streams, closed loop or
//! open loop at a fixed rate with coordinated-omission-correct latency.
//!
//! [`run`] splits the connections over engine threads ([`engine`]), shows a progress line, and
//! merges the threads' [`tally::Tally`]s. Runs needing more descriptors than one process may
//! open are split over child processes by [`shard`]; their tallies merge the same way.

pub mod config;
pub mod connect;
pub mod engine;
pub mod error;
pub mod histogram;
pub mod issue;
pub mod merge;
pub mod pacing;
pub mod progress;
pub mod receive;
pub mod response;
pub mod shard;
pub mod sources;
pub mod summary;
pub mod tally;
pub mod tls;
pub mod workload;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use config::LoadConfig;
use engine::{Engine, Progress, Start, ThreadPlan};
pub use error::{io_err, Error};
pub use pacing::Pacing;
pub use shard::{split, split_weighted, Shard};
use tally::Tally;
pub use workload::{Kind, Payload, Target};

use crate::sys;

/// What one process measured (or, merged, a whole run: see [`merge`]).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub tally: Tally,
    /// Connection slots this outcome covers (its share of `-c`).
    pub connections: usize,
    /// The open-loop rate this share was asked for (`--rate`).
    pub offered_rps: Option<f64>,
    /// When the measured window began, in milliseconds since the Unix epoch (aligns the
    /// per-second series of pieces run by different processes or hosts).
    pub window_start_ms: u64,
    /// Length of the measured window.
    pub elapsed: Duration,
    /// How long opening the connections took, before the warm-up and the window began.
    pub connecting: Duration,
    /// CPU time (user + system) the client used.
    pub client_cpu: Duration,
    /// CPUs the client's threads could use at once (threads, at most the cores).
    pub cpu_slots: usize,
    pub threads: usize,
    pub shards: usize,
    /// Set when the run was cut short by Ctrl-C.
    pub interrupted: bool,
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

/// Runs this process's share of `cfg` on its engine threads.
pub fn run(cfg: &LoadConfig, show: Show) -> Result<Outcome, Error> {
    cfg.validate()?;
    if let Some(cpus) = &cfg.cpus {
        sys::affinity::set(&cpus.0)
            .map_err(|e| Error::Usage(format!("cannot pin the client to CPUs {cpus:?}: {e}")))?;
    }
    let (_, hard) = sys::rlimit::nofile().map_err(io_err("reading RLIMIT_NOFILE"))?;
    let _ = sys::rlimit::set_nofile(hard);
    let _ = sys::signal::install_stop_handler(&STOP);
    let (conns, first_slot, quota, rate, connect_rate) = cfg.share();
    // A loopback target whose ports are crowded: spread the sources (--bind wins).
    let spread_cfg;
    let cfg = match cfg
        .bind
        .is_none()
        .then(|| sources::spread(cfg.target.addr, conns))
        .flatten()
    {
        Some(range) => {
            eprintln!(
                "muxlab: {conns} connections would crowd 127.0.0.1's ports toward {}: sources {} (set them with --bind)",
                cfg.target.addr,
                range.0.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
            );
            spread_cfg = LoadConfig {
                bind: Some(range),
                ..cfg.clone()
            };
            &spread_cfg
        }
        None => cfg,
    };
    let threads = cfg.threads().min(conns).max(1);
    let progress: Vec<Progress> = (0..threads).map(|_| Progress::default()).collect();
    if let Some(at) = cfg.start_at {
        progress::wait_until(at, show);
    }
    // Connections open first; the warm-up and the window start once they are (see `Start`).
    let launched = Instant::now();
    let start = Start::new(threads);
    let mut t0 = launched;
    let mut wall0 = unix_ms();
    // The client's CPU over the measured window: each engine thread's own (from the warm-up's
    // end to the close, before teardown), and this thread's (the progress line) alike.
    let mut main_cpu = Duration::ZERO;
    let tallies: Vec<Result<(Tally, Duration), Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (n, off) = split(conns, threads, t);
                let plan = ThreadPlan {
                    conns: n,
                    first_slot: first_slot + off as u64,
                    quota: quota.map(|q| split_weighted(q, conns, off, n)),
                    rate: rate.map(|r| r * n as f64 / conns as f64),
                    connect_rate: connect_rate.map(|r| r / threads as f64),
                    t0: launched,
                };
                let p = &progress[t];
                let start = &start;
                s.spawn(move || -> Result<(Tally, Duration), Error> {
                    // A thread that cannot start has ended its connecting: the others' window
                    // must not wait for it.
                    let engine = Engine::new(cfg, plan, start).map_err(|e| {
                        start.thread_done(Instant::now());
                        io_err("starting an engine thread")(e)
                    })?;
                    Ok(engine.run(p, &STOP))
                })
            })
            .collect();
        let mut ticker = progress::Ticker::new(cfg, show, launched);
        let mut from = None;
        let mut started = false;
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(5));
            if let (false, Some(t)) = (started, start.t0()) {
                started = true;
                t0 = t;
                wall0 = unix_ms().saturating_sub(t.elapsed().as_millis() as u64);
                ticker.window_from(t);
                if show == Show::JsonLines {
                    println!("{{\"event\":\"started\"}}");
                }
            }
            if from.is_none() && started && Instant::now() >= t0 + cfg.warmup {
                from = Some(sys::process::thread_cpu_time());
            }
            ticker.tick(&progress);
        }
        main_cpu = from.map_or(Duration::ZERO, |f| sys::process::thread_cpu_time().saturating_sub(f));
        ticker.finish();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Failed("an engine thread panicked".into())))
            })
            .collect()
    });
    let end = Instant::now();
    let mut tally = Tally::default();
    let mut client_cpu = main_cpu;
    for t in tallies {
        let (t, cpu) = t?;
        tally.merge(&t);
        client_cpu += cpu;
    }
    let measure_from = t0 + cfg.warmup;
    let window_end = cfg.duration.map_or(end, |d| end.min(measure_from + d));
    // The CPUs this process may run on (its affinity), not the machine's.
    let cores = sys::affinity::get().map(|c| c.len()).unwrap_or(1).max(1);
    Ok(Outcome {
        tally,
        connections: conns,
        offered_rps: rate,
        window_start_ms: wall0 + cfg.warmup.as_millis() as u64,
        elapsed: window_end.saturating_duration_since(measure_from),
        connecting: t0.saturating_duration_since(launched),
        client_cpu,
        cpu_slots: threads.min(cores),
        threads,
        shards: 1,
        interrupted: STOP.load(Ordering::Relaxed) != 0,
    })
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
