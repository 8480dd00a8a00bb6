//! The bottom of `server`: the context a running model shares with its workers, the [`Worker`]
//! handle each worker holds, and the contract of a design that hands requests' work to other
//! threads ([`Offloader`], [`Job`]). The plumbing in `server/` builds on this file; of `server` it
//! names only `classes`, `config`, `gate`, `stats` and the keyed hops' slot (`crossing`).
//!
//! Contract: one server per process. `serve` builds one `Ctx` and leaks it, so it is
//! `'static`: threads, forked workers and tokio tasks all hold plain `&'static Ctx` references.

use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::classes::Classes;
use super::config::Config;
use super::gate::Gate;
use super::stats::{Counter, Counters, Stats};
use crate::proto::{Session, Speaks};
use crate::sys;

/// Everything a running model shares with its workers.
pub struct Ctx {
    /// The validated configuration.
    pub cfg: Config,
    /// The listening socket (models with per-worker listeners make their own too).
    pub listener: OwnedFd,
    /// The address actually bound (`--port 0` resolved).
    pub addr: SocketAddr,
    /// Workers to run (1 for models without workers).
    pub workers: usize,
    /// Connections allowed open at once, across all workers.
    pub max_conns: usize,
    /// Connections one worker process may hold: its own descriptor table's share. A loop that
    /// holds this many stops accepting, while its siblings have room, until it is below 7/8 of
    /// it. `usize::MAX` in a single process (the descriptor limit and EMFILE shedding apply).
    pub process_conns: usize,
    /// The shared-memory counters, stop flag and accept mutex.
    pub stats: Stats,
    /// Where worker threads meet before accepting (see [`Gate`]).
    pub gate: Gate,
    /// The classes of work requests named (`--work-from-request`).
    pub classes: Classes,
    /// The process that serves (forked workers are others).
    pub main_pid: i32,
    /// Where requests' work goes when the design hands it to other threads (`offload`): set by
    /// the model when it starts; unset, work runs on the thread that parsed the request.
    pub offload: std::sync::OnceLock<&'static dyn Offloader>,
    /// resp and memcache: the keyed state commands run against.
    pub store: Option<crate::store::Store>,
    /// Where keyed commands go when they cross threads (`--store sharded`, io-threads).
    pub hops: super::crossing::hops::Slot,
    /// In a process group, this process's first counter block (`p × workers` in process `p`);
    /// 0 otherwise. Each process has its own copy: set once, in the member, after the fork.
    pub first_block: std::sync::atomic::AtomicUsize,
    /// `--metrics`: the endpoint's process, a child the design did not fork (0: none, or
    /// reaped).
    pub metrics_pid: std::sync::atomic::AtomicI32,
}

impl Ctx {
    /// `true` once SIGTERM / SIGINT arrived (or [`Ctx::request_stop`] was called).
    #[inline]
    pub fn stopping(&self) -> bool {
        self.stats.stop_flag().load(Ordering::Relaxed) != 0
    }

    /// Sets the stop flag: every worker ends within a tick.
    pub fn request_stop(&self) {
        self.stats.stop_flag().store(1, Ordering::SeqCst);
    }

    /// A loop holding `held` connections should leave new ones to its siblings: it holds its
    /// process's share and the server as a whole still has room (when it has none, accepting
    /// gives a counted refusal instead).
    pub fn share_full(&self, held: usize) -> bool {
        held >= self.process_conns && (self.stats.live().load(Ordering::Relaxed) as usize) < self.max_conns
    }

    /// A design reaping its children (`wait(-1)`) reaped `pid`: `true` when it is not one of
    /// its own but the metrics endpoint's process (which is then forgotten, its pid free for
    /// another process).
    pub fn not_the_designs(&self, pid: i32) -> bool {
        pid != 0
            && self
                .metrics_pid
                .compare_exchange(pid, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    /// This process is member `p` of a group: its workers count in their own blocks.
    pub fn join_group(&self, p: usize) {
        self.first_block.store(p * self.workers, Ordering::Relaxed);
    }

    /// The handle of worker `i` (`i < workers`).
    pub fn worker(&self, i: usize) -> Worker<'_> {
        Worker {
            ctx: self,
            counters: self.stats.worker(self.first_block.load(Ordering::Relaxed) + i),
            index: i,
        }
    }
}

#[cfg(test)]
impl Ctx {
    /// A context for tests that step connections by hand: the server's flags `args` (as
    /// `muxlab serve` takes them) for a one-worker model, no listener of use (`/dev/null`).
    pub(crate) fn for_tests(args: &[&str]) -> &'static Ctx {
        use clap::Parser;
        #[derive(Parser)]
        struct Flags {
            #[command(flatten)]
            cfg: super::ServeArgs,
        }
        let cfg = Flags::parse_from(std::iter::once("t").chain(args.iter().copied()))
            .cfg
            .validate("epoll", super::Workers::None, &[])
            .expect("valid test flags");
        let null = std::fs::File::open("/dev/null").expect("/dev/null");
        Box::leak(Box::new(Ctx {
            cfg,
            listener: OwnedFd::from(null),
            addr: "127.0.0.1:0".parse().unwrap(),
            workers: 1,
            max_conns: 16,
            process_conns: usize::MAX,
            stats: Stats::new(1).expect("counters"),
            gate: Gate::new(0),
            classes: Classes::new().expect("class table"),
            main_pid: sys::process::pid(),
            offload: std::sync::OnceLock::new(),
            store: None,
            hops: std::sync::OnceLock::new(),
            first_block: Default::default(),
            metrics_pid: Default::default(),
        }))
    }
}

/// A worker's handle on the server: the shared context and the worker's own counters. Cheap to
/// copy; every step a model takes with a connection goes through one.
#[derive(Clone, Copy)]
pub struct Worker<'a> {
    /// The server this worker belongs to.
    pub ctx: &'a Ctx,
    /// This worker's block of counters.
    pub counters: Counters,
    /// Its index: counter block and slot at the start gate.
    pub index: usize,
}

impl<'a> Worker<'a> {
    /// See [`Ctx::stopping`].
    #[inline]
    pub fn stopping(&self) -> bool {
        self.ctx.stopping()
    }

    /// `--max-output`: the unsent output a connection may hold before its session stops
    /// consuming input (at least 1 byte, so an empty output always has room).
    #[inline]
    pub fn max_output(&self) -> usize {
        self.ctx.cfg.max_output
    }

    /// Adds `n` to one of this worker's counters.
    #[inline]
    pub fn count(&self, counter: Counter, n: u64) {
        self.counters.add(counter, n);
    }

    /// Applies `--max-conns` to a freshly accepted connection: counts it and returns it, or
    /// closes it and counts a rejection.
    /// Every admitted connection gets TCP_NODELAY: replies are small and go out at once, and
    /// Nagle would hold one back while an earlier one is unacknowledged (40 ms with delayed ACKs).
    pub fn admit<S: AsFd>(&self, conn: S) -> Option<S> {
        if !self.ctx.stats.admit(self.counters, self.ctx.max_conns) {
            return None;
        }
        let _ = sys::socket::set_nodelay(conn.as_fd());
        Some(conn)
    }

    /// Records that an admitted connection was closed.
    pub fn release(&self) {
        self.ctx.stats.release(self.counters);
    }

    /// This worker has set up (its epoll instance, ring, ...): waits until every worker thread
    /// has, so no one accepts while another could still run out of descriptors setting up.
    pub fn ready(&self) {
        self.ctx.gate.arrive_and_wait(self.index, &|| self.ctx.stopping());
    }

    /// A new connection's protocol session, with the server's limits.
    pub fn session(&self) -> Session {
        let cfg = &self.ctx.cfg;
        let limits = crate::proto::Limits {
            max_body: cfg.max_body,
            max_output: cfg.max_output,
            max_streams: cfg.max_streams,
            calm: crate::proto::Calm {
                client_resets: cfg.h2_client_resets,
                server_resets: cfg.h2_server_resets,
                quiet_frames: cfg.h2_quiet_frames,
            },
            max_value: cfg.max_value,
        };
        let speaks = Speaks::with_limits(cfg.proto, limits);
        match &self.ctx.cfg.tls {
            Some(cfg) => Session::with_tls(cfg.clone(), speaks),
            None => Session::Plain(speaks),
        }
    }

    /// A tick of a thread that keeps keyed state: what has expired in the tables it may sweep
    /// is dropped, and counted. Every design ticks: an event loop's tick, a blocking call's
    /// timeout, uring's ticker, tokio's accept loop (an idle server still drops its expired
    /// keys).
    pub fn sweep_store(&self) {
        if let Some(store) = &self.ctx.store {
            super::crossing::hops::Here {
                index: self.index,
                counters: self.counters,
            }
            .sweep(store);
        }
    }

    /// Adds the syscalls this thread issued since the last flush to this worker's counters.
    #[inline]
    pub fn flush_syscalls(&self) {
        self.counters.flush_syscalls();
    }
}

/// One request's work, drawn by the loop, done by the pool.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    /// The connection (its token in the loop that owns it) and the response's ticket.
    pub conn: u64,
    pub ticket: u64,
    /// The drawn CPU time and wait, and the mean of the distribution they were drawn from
    /// (what a reservation sorts by).
    pub cpu: Duration,
    pub wait: Duration,
    pub mean: Duration,
    /// The class's row in the server's class table (`None`: not counted per class).
    pub row: Option<usize>,
    /// When it was queued (its wait in the pool counts from here).
    pub queued: Instant,
}

/// A design that takes requests' work off the thread that parsed them.
pub trait Offloader: Sync {
    /// Whether a request whose work, as drawn, takes `work` (CPU and waiting) goes to the pool
    /// (else it runs inline): the draw decides, not its distribution's mean, so a long tail
    /// behind a small mean still leaves the loop.
    fn takes(&self, work: Duration) -> bool;

    /// Queues `job`.
    fn submit(&self, w: Worker<'_>, job: Job);

    /// The responses of these tickets will never be written (their streams were reset, or
    /// their connection closed): their queued work is dropped (a cancel that comes after a
    /// worker took the job finds nothing to drop).
    fn cancel(&self, w: Worker<'_>, tickets: &[u64]);
}
