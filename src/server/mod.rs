//! `server`: what every model shares — configuration, the model descriptor, shared-memory
//! counters, accept and connection plumbing, signals and the `listening` / `stats` lines.

pub mod accept;
pub mod blocking;
pub mod config;
pub mod conn;
pub mod evloop;
pub mod handoff;
pub mod registry;
pub mod stats;
pub mod workers;

use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::json;

pub use config::{AcceptGuard, Config, Trigger, Work};
pub use registry::{Family, Model, Workers};
pub use stats::{Counter, Counters, Stats};

use crate::sys;

/// How often a waiting model wakes to check the stop flag and idle connections.
pub const TICK: Duration = Duration::from_millis(100);

/// Bytes one read may bring in.
pub const READ_BUF: usize = 64 * 1024;

/// What can go wrong starting or running a server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user asked for something impossible; the message says what to do instead.
    #[error("{0}")]
    Usage(String),
    #[error("{addr} is already in use: pick another port with --port, or use --port 0 for any free port")]
    AddrInUse { addr: SocketAddr },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Usage(_) | Error::AddrInUse { .. })
    }
}

/// Wraps an `io::Error` with what was being done.
pub fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> Error {
    let what = what.into();
    move |source| Error::Io { what, source }
}

/// Everything a running model shares with its workers.
pub struct Ctx {
    pub cfg: Config,
    pub model: &'static Model,
    /// The listening socket (models with per-worker listeners make their own too).
    pub listener: OwnedFd,
    pub addr: SocketAddr,
    /// Workers to run (1 for models without workers).
    pub workers: usize,
    /// Connections allowed open at once.
    pub max_conns: usize,
    pub stats: Stats,
    /// Where worker threads meet before accepting (see [`workers::Gate`]).
    pub gate: workers::Gate,
}

impl Ctx {
    /// `true` once SIGTERM / SIGINT arrived (or [`Ctx::request_stop`] was called).
    #[inline]
    pub fn stopping(&self) -> bool {
        self.stats.stop_flag().load(Ordering::Relaxed) != 0
    }

    pub fn request_stop(&self) {
        self.stats.stop_flag().store(1, Ordering::SeqCst);
    }

    /// Applies `--max-conns` to a freshly accepted connection: counts it and returns it, or
    /// closes it and counts a rejection.
    /// Every admitted connection gets TCP_NODELAY: replies are small and go out at once, and
    /// Nagle would hold one back while an earlier one is unacknowledged (40 ms with delayed ACKs).
    pub fn admit(&self, c: Counters, fd: OwnedFd) -> Option<OwnedFd> {
        if !self.stats.admit(c, self.max_conns) {
            return None;
        }
        let _ = sys::socket::set_nodelay(&fd);
        Some(fd)
    }

    /// Records that an admitted connection was closed.
    pub fn release(&self, c: Counters) {
        self.stats.release(c);
    }

    /// A worker thread has set up (its epoll instance, ring, ...): waits until every worker has,
    /// so no one accepts while another could still run out of descriptors setting up.
    pub fn worker_ready(&self, i: usize) {
        self.gate.arrive_and_wait(i, &|| self.stopping());
    }

    /// `true` when a connection last active at `last` has been idle too long.
    #[inline]
    pub fn idle_expired(&self, last: Instant, now: Instant) -> bool {
        self.cfg.idle_timeout.is_some_and(|t| now.duration_since(last) >= t)
    }
}

/// What every model does with bytes that arrived: count them, feed them to the connection's
/// protocol session (replies are appended to `out`), do the `--work` for each request
/// answered, and count the requests. One function, so every model handles input alike.
#[inline]
pub fn on_input(
    work: Work,
    c: Counters,
    session: &mut crate::proto::Session,
    data: &[u8],
    out: &mut Vec<u8>,
) -> crate::proto::Fed {
    c.add(Counter::BytesIn, data.len() as u64);
    let fed = session.feed(data, out);
    work.apply(fed.requests);
    c.add(Counter::Requests, fed.requests);
    fed
}

/// Raises the descriptor limit (or lowers it to `--nofile`) and returns the soft limit.
fn apply_nofile(cfg: &Config) -> Result<u64, Error> {
    let (_, hard) = sys::rlimit::nofile().map_err(io_err("reading RLIMIT_NOFILE"))?;
    let want = cfg.nofile.unwrap_or(hard);
    if want < 16 {
        return Err(Error::Usage(format!(
            "--nofile {want} is too low: the server needs at least 16 descriptors"
        )));
    }
    sys::rlimit::set_nofile(want.min(hard)).map_err(io_err("setting RLIMIT_NOFILE"))?;
    Ok(want.min(hard))
}

/// Runs `model` until SIGTERM / SIGINT: prints the `listening` line to `out` once it can accept
/// and the `stats` line when every worker has stopped.
pub fn serve(
    model: &'static Model,
    cfg: Config,
    requested_workers: Option<usize>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let workers = match (model.workers, requested_workers) {
        (Workers::None, Some(n)) if n != 1 => {
            return Err(Error::Usage(format!(
                "model '{}' has no workers; drop --workers (or pick a model with workers: see `muxlab models`)",
                model.name
            )))
        }
        (Workers::None, _) => 1,
        (_, Some(0)) => return Err(Error::Usage("--workers must be at least 1".into())),
        (_, Some(n)) if n > 1024 => return Err(Error::Usage(format!("--workers {n} is more than 1024"))),
        (_, Some(n)) => n,
        (_, None) => sys::affinity::get().map(|c| c.len()).unwrap_or(1).max(1),
    };
    if cfg.backlog < 1 {
        return Err(Error::Usage("--backlog must be at least 1".into()));
    }
    if let Some(cpus) = &cfg.cpus {
        sys::affinity::set(cpus).map_err(|e| Error::Usage(format!("cannot pin to CPUs {cpus:?}: {e}")))?;
    }
    let nofile = apply_nofile(&cfg)?;
    // Leave room for listeners, epoll, spares and the process's own files.
    let fd_default = (nofile as usize * 9 / 10).saturating_sub(32).max(1);
    let max_conns = match cfg.max_conns {
        Some(0) => return Err(Error::Usage("--max-conns must be at least 1".into())),
        Some(n) => n,
        None => model.default_max_conns.map_or(fd_default, |d| d.min(fd_default)),
    };
    let stats = Stats::new(workers).map_err(io_err("mapping the shared counters"))?;
    sys::signal::install_stop_handler(stats.stop_flag()).map_err(io_err("installing signal handlers"))?;
    let listener = sys::socket::listen(cfg.addr, cfg.backlog, model.reuseport).map_err(|e| match e.raw_os_error() {
        Some(libc::EADDRINUSE) => Error::AddrInUse { addr: cfg.addr },
        Some(libc::EADDRNOTAVAIL) => Error::Usage(format!(
            "{} is not an address of this machine: pick another with --addr",
            cfg.addr.ip()
        )),
        Some(libc::EACCES) => Error::Usage(format!(
            "port {} needs privileges: use a port above 1023 or --port 0",
            cfg.addr.port()
        )),
        _ => Error::Io {
            what: format!("listening on {}", cfg.addr),
            source: e,
        },
    })?;
    let addr = sys::socket::local_addr(&listener).map_err(io_err("reading the listening address"))?;
    let gate = workers::Gate::new(if model.workers == Workers::Threads {
        workers + 1
    } else {
        0
    });
    let ctx = Ctx {
        cfg,
        model,
        listener,
        addr,
        workers,
        max_conns,
        stats,
        gate,
    };

    let started = Instant::now();
    let line = json!({"event": "listening", "addr": addr.to_string(), "pid": sys::process::pid(),
        "model": model.name, "proto": ctx.cfg.proto.name(), "workers": workers, "max_conns": max_conns});
    writeln!(out, "{line}")
        .and_then(|_| out.flush())
        .map_err(io_err("writing the listening line"))?;

    if let Some(n) = ctx.cfg.crash_after_requests {
        // Fault injection (tests of the bench harness): a watcher thread aborts the process
        // once enough requests were served; forked workers follow through PR_SET_PDEATHSIG.
        let stats = ctx.stats;
        std::thread::spawn(move || loop {
            if stats.total(Counter::Requests) >= n {
                eprintln!("muxlab: --crash-after-requests {n} reached: aborting");
                std::process::abort();
            }
            std::thread::sleep(Duration::from_millis(5));
        });
    }
    let result = (model.run)(&ctx);

    let (totals, per_worker) = ctx.stats.to_json();
    let line = json!({"event": "stats", "model": model.name, "pid": sys::process::pid(), "workers": workers,
        "uptime_s": started.elapsed().as_secs_f64(), "ok": result.is_ok(),
        "error": result.as_ref().err().map(|e| e.to_string()), "totals": totals, "per_worker": per_worker});
    writeln!(out, "{line}")
        .and_then(|_| out.flush())
        .map_err(io_err("writing the stats line"))?;
    result
}
