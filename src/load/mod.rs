//! `load`: the load generator. One engine and one statistics path for short-connection HTTP
//! (like ab), keep-alive and pipelined HTTP (like wrk), and echo / packet streams, closed loop or
//! open loop at a fixed rate with coordinated-omission-correct latency.
//!
//! [`run`] splits the connections over engine threads ([`engine`]), shows a progress line, and
//! merges the threads' [`tally::Tally`]s. Runs needing more descriptors than one process may
//! open are split over child processes by [`shard`]; their tallies merge the same way.

pub mod connect;
pub mod engine;
pub mod error;
pub mod histogram;
pub mod issue;
pub mod pacing;
pub mod shard;
pub mod summary;
pub mod tally;
pub mod workload;

use std::io::{IsTerminal, Write};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use engine::{Engine, Progress, ThreadPlan};
pub use error::{io_err, Error};
pub use pacing::Pacing;
use tally::Tally;
pub use workload::{Kind, Target};

use crate::units::{parse_duration, AddrRange, CpuList};

use crate::sys;

/// A complete description of a load run: the flags of `muxlab load` (clap reads them into this
/// struct), completed by [`LoadConfig::resolve`].
#[derive(clap::Args, Debug, Clone)]
pub struct LoadConfig {
    /// Target: http://HOST:PORT/PATH, echo://HOST:PORT or packet://HOST:PORT.
    #[arg(value_parser = Target::parse)]
    pub target: Target,
    /// Connections to keep open (or, with --close, concurrent requests).
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    /// Engine threads [default: the CPUs this process may run on].
    #[arg(short = 't', long)]
    pub threads: Option<usize>,
    /// Measure for this long, after the warm-up [default: 10s unless -n is given].
    #[arg(short = 'd', long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Send this many requests in all.
    #[arg(short = 'n', long)]
    pub requests: Option<u64>,
    /// Run this long before measuring; nothing from it is counted.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Open loop: this many requests per second overall, latency corrected for coordinated omission.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Closed loop with a pause after each response, per connection.
    #[arg(long, value_parser = parse_duration)]
    pub think: Option<Duration>,
    /// The pacing `--rate` and `--think` describe (set by `resolve`).
    #[arg(skip = Pacing::Closed)]
    pub pacing: Pacing,
    /// Requests in flight per connection.
    #[arg(long, default_value_t = 1)]
    pub pipeline: usize,
    /// One request per connection, like ab (latency includes the connect).
    #[arg(long)]
    pub close: bool,
    /// Open a new connection after this many requests.
    #[arg(long)]
    pub requests_per_conn: Option<u64>,
    /// Give up on a connect or a response after this long (counted as a timeout).
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Open at most this many new connections per second.
    #[arg(long)]
    pub connect_rate: Option<f64>,
    /// Source addresses, e.g. 127.0.0.2-127.0.0.20, to get past one address's ephemeral ports.
    #[arg(long)]
    pub bind: Option<AddrRange>,
    /// Message size in bytes for echo and packet targets.
    #[arg(long, default_value_t = 128)]
    pub size: usize,
    /// HTTP method.
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,
    /// Extra HTTP header, e.g. -H 'Accept: */*' (repeatable).
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,
    /// Pin the client to these CPUs, e.g. 1.
    #[arg(long)]
    pub cpus: Option<CpuList>,
    /// Internal: run shard I of K (set by the parent process when sharding).
    #[arg(long, hide = true)]
    pub shard: Option<Shard>,
}

/// `--shard I/K`: this process runs share `I` of `K`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard(pub usize, pub usize);

impl std::str::FromStr for Shard {
    type Err = Error;
    fn from_str(s: &str) -> Result<Shard, Error> {
        let bad = || Error::Usage(format!("--shard '{s}' must be I/K"));
        let (i, k) = s.split_once('/').ok_or_else(bad)?;
        match (i.parse(), k.parse()) {
            (Ok(i), Ok(k)) if i < k => Ok(Shard(i, k)),
            _ => Err(bad()),
        }
    }
}

impl LoadConfig {
    /// Completes the flags (pacing, the default duration and threads, the method's case) and
    /// checks them: the error is one line saying what to change.
    pub fn resolve(mut self) -> Result<LoadConfig, Error> {
        if self.duration.is_none() && self.requests.is_none() {
            self.duration = Some(Duration::from_secs(10));
        }
        self.pacing = match (self.rate, self.think) {
            (Some(_), Some(_)) => return Err("--rate (open loop) and --think (closed loop) exclude each other".into()),
            (Some(r), None) => Pacing::Rate(r),
            (None, Some(t)) => Pacing::Think(t),
            (None, None) => Pacing::Closed,
        };
        if self.target.kind == Kind::Http && self.size != 128 {
            return Err("--size applies to echo:// and packet:// targets".into());
        }
        self.method = self.method.to_ascii_uppercase();
        self.validate()?;
        Ok(self)
    }

    /// Engine threads: `-t`, or one per CPU this process may run on.
    pub fn threads(&self) -> usize {
        self.threads
            .unwrap_or_else(|| sys::affinity::get().map(|c| c.len()).unwrap_or(1).max(1))
    }

    /// The source addresses of `--bind` (none: the kernel picks).
    pub fn sources(&self) -> &[Ipv4Addr] {
        self.bind.as_ref().map_or(&[], |b| &b.0)
    }

    /// Checks flag combinations; the error is one line saying what to change.
    pub fn validate(&self) -> Result<(), Error> {
        let http = self.target.kind == Kind::Http;
        if self.connections == 0 {
            return Err("-c must be at least 1".into());
        }
        if self.threads == Some(0) {
            return Err("-t must be at least 1".into());
        }
        if self.duration.is_some() && self.requests.is_some() {
            return Err("give either -d (duration) or -n (requests), not both".into());
        }
        if self.requests == Some(0) || self.duration == Some(Duration::ZERO) {
            return Err("-n and -d must be more than zero".into());
        }
        if self.pipeline == 0 {
            return Err("--pipeline must be at least 1".into());
        }
        if self.close && self.pipeline > 1 {
            return Err("--pipeline needs keep-alive connections: drop --close".into());
        }
        if self.close && !http {
            return Err("--close applies to http:// targets".into());
        }
        if self.close && self.requests_per_conn.is_some() {
            return Err("--close already means one request per connection: drop --requests-per-conn".into());
        }
        if self.requests_per_conn == Some(0) {
            return Err("--requests-per-conn must be at least 1".into());
        }
        match self.pacing {
            Pacing::Rate(r) if !(r > 0.0 && r.is_finite()) => return Err("--rate must be a positive number".into()),
            _ => {}
        }
        if self.connect_rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            return Err("--connect-rate must be a positive number".into());
        }
        if !http && self.size == 0 {
            return Err("--size must be at least 1 byte".into());
        }
        if !self.sources().is_empty() && !self.target.addr.is_ipv4() {
            return Err("--bind takes IPv4 addresses, the target is IPv6".into());
        }
        if self.timeout.is_zero() {
            return Err("--timeout must be more than zero".into());
        }
        Ok(())
    }

    /// This process's share: (connections, first slot, quota, rate, connect rate).
    fn share(&self) -> (usize, u64, Option<u64>, Option<f64>, Option<f64>) {
        let Shard(i, k) = self.shard.unwrap_or(Shard(0, 1));
        let (conns, first) = split(self.connections, k, i);
        let part = |total: f64| total * conns as f64 / self.connections as f64;
        let quota = self.requests.map(|n| split_weighted(n, self.connections, first, conns));
        let rate = match self.pacing {
            Pacing::Rate(r) => Some(part(r)),
            _ => None,
        };
        (
            conns,
            first as u64,
            quota,
            rate,
            self.connect_rate.map(|r| r / k as f64),
        )
    }
}

/// Splits `total` into `parts` near-equal pieces; returns (size of piece `i`, its offset).
pub fn split(total: usize, parts: usize, i: usize) -> (usize, usize) {
    let base = total / parts;
    let extra = total % parts;
    let size = base + usize::from(i < extra);
    let offset = i * base + i.min(extra);
    (size, offset)
}

/// The share of `n` requests belonging to connection slots `first..first + count` of `conns`.
pub fn split_weighted(n: u64, conns: usize, first: usize, count: usize) -> u64 {
    let upto = |k: usize| (n as u128 * k as u128 / conns as u128) as u64;
    upto(first + count) - upto(first)
}

/// What one process measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub tally: Tally,
    /// Length of the measured window.
    pub elapsed: Duration,
    /// CPU time (user + system) the client used.
    pub client_cpu: Duration,
    pub threads: usize,
    pub shards: usize,
    /// Set when the run was cut short by Ctrl-C.
    pub interrupted: bool,
}

/// Set by SIGINT / SIGTERM: engines stop and the summary covers what finished.
static STOP: AtomicU64 = AtomicU64::new(0);

/// Runs this process's share of `cfg` on its engine threads.
pub fn run(cfg: &LoadConfig, show_progress: bool) -> Result<Outcome, Error> {
    cfg.validate()?;
    if let Some(cpus) = &cfg.cpus {
        sys::affinity::set(&cpus.0)
            .map_err(|e| Error::Usage(format!("cannot pin the client to CPUs {cpus:?}: {e}")))?;
    }
    let (_, hard) = sys::rlimit::nofile().map_err(io_err("reading RLIMIT_NOFILE"))?;
    let _ = sys::rlimit::set_nofile(hard);
    let _ = sys::signal::install_stop_handler(&STOP);
    let (conns, first_slot, quota, rate, connect_rate) = cfg.share();
    let threads = cfg.threads().min(conns).max(1);
    let progress: Vec<Progress> = (0..threads).map(|_| Progress::default()).collect();
    let mut cpu0 = sys::procfs::self_cpu();
    let t0 = Instant::now();
    let tallies: Vec<Result<Tally, Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (n, off) = split(conns, threads, t);
                let plan = ThreadPlan {
                    conns: n,
                    first_slot: first_slot + off as u64,
                    quota: quota.map(|q| split_weighted(q, conns, off, n)),
                    rate: rate.map(|r| r * n as f64 / conns as f64),
                    connect_rate: connect_rate.map(|r| r / threads as f64),
                    t0,
                };
                let p = &progress[t];
                s.spawn(move || -> Result<Tally, Error> {
                    let engine = Engine::new(cfg, plan).map_err(io_err("starting an engine thread"))?;
                    Ok(engine.run(p, &STOP))
                })
            })
            .collect();
        // The client's CPU is counted over the measured window only: from the warm-up's end.
        let measure_from = t0 + cfg.warmup;
        while Instant::now() < measure_from && !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(5));
        }
        cpu0 = sys::procfs::self_cpu();
        if show_progress {
            show_progress_until_done(cfg, &handles, &progress, t0);
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Failed("an engine thread panicked".into())))
            })
            .collect()
    });
    let end = Instant::now();
    let cpu1 = sys::procfs::self_cpu();
    let mut tally = Tally::default();
    for t in tallies {
        tally.merge(&t?);
    }
    let measure_from = t0 + cfg.warmup;
    let window_end = cfg.duration.map_or(end, |d| end.min(measure_from + d));
    Ok(Outcome {
        tally,
        elapsed: window_end.saturating_duration_since(measure_from),
        client_cpu: (cpu1.0 + cpu1.1).saturating_sub(cpu0.0 + cpu0.1),
        threads,
        shards: 1,
        interrupted: STOP.load(Ordering::Relaxed) != 0,
    })
}

/// Prints `[ 3s] 12,345 req/s  total 37,000  errors 0` to stderr each second until the threads end.
fn show_progress_until_done<T>(
    cfg: &LoadConfig,
    handles: &[std::thread::ScopedJoinHandle<'_, T>],
    progress: &[Progress],
    t0: Instant,
) {
    let mut err = std::io::stderr();
    if !err.is_terminal() {
        return;
    }
    let mut last = (t0, 0u64);
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(100));
        let now = Instant::now();
        if now.duration_since(last.0) < Duration::from_secs(1) {
            continue;
        }
        let done: u64 = progress.iter().map(|p| p.requests.load(Ordering::Relaxed)).sum();
        let errors: u64 = progress.iter().map(|p| p.errors.load(Ordering::Relaxed)).sum();
        let rps = (done - last.1) as f64 / now.duration_since(last.0).as_secs_f64();
        let phase = if now < t0 + cfg.warmup { " (warm-up)" } else { "" };
        let _ = write!(
            err,
            "\r\x1b[2K[{:>4.0}s] {:>12} req/s  total {:>12}  errors {}{phase}",
            now.duration_since(t0).as_secs_f64(),
            summary::thousands(rps as u64),
            summary::thousands(done),
            errors
        );
        let _ = err.flush();
        last = (now, done);
    }
    let _ = write!(err, "\r\x1b[2K");
}
