//! The bottom of `server`: the context a running model shares with its workers, the [`Worker`]
//! handle each worker holds. The plumbing in `server/` builds on this file; it imports only
//! `config`, `error`, `gate` and `stats`.
//!
//! Contract: one server per process. `serve` builds one `Ctx` and leaks it, so it is
//! `'static`: threads, forked workers and tokio tasks all hold plain `&'static Ctx` references.

use std::cell::Cell;
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::classes::Classes;
use super::config::Config;
use super::gate::Gate;
use super::stats::{Counter, Counters, Stats};
use crate::proto::{Answer, Each, Fed, Request, Session};
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
    pub offload: std::sync::OnceLock<&'static dyn super::offload::Offloader>,
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

    /// The handle of worker `i` (`i < workers`).
    pub fn worker(&self, i: usize) -> Worker<'_> {
        Worker {
            ctx: self,
            counters: self.stats.worker(i),
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
            calm: crate::proto::h2::budget::Calm {
                client_resets: cfg.h2_client_resets,
                server_resets: cfg.h2_server_resets,
                quiet_frames: cfg.h2_quiet_frames,
            },
        };
        let plain = Session::with_limits(cfg.proto, limits);
        match &self.ctx.cfg.tls {
            Some(cfg) => Session::with_tls(cfg.clone(), plain),
            None => plain,
        }
    }

    /// What every model does with bytes that arrived: count them, feed them to the connection's
    /// protocol session (replies are appended to `out`), do each request's `--work` right before
    /// its response, and count the requests. One function, so every model handles input alike.
    ///
    /// `out` holds only unsent output, and `bound` is how much of it the model lets pile up:
    /// `--max-output` ([`Worker::max_output`]), less what it has handed on and not yet seen go
    /// (a ring's send), or less for a blocking model, which writes it all before it goes on
    /// anyway. At the bound the session stops consuming input, mid-buffer if need be, and
    /// holds the rest ([`Session::holding`], counted as `output_paused`); the model feeds it
    /// again, with no new bytes, once the output has drained, before it reads more. With work, `send` is given the output so far before each request's
    /// work: the model sends what the socket takes now and takes it out of `out`, so a
    /// response never waits for the work of the requests after it.
    #[inline]
    pub fn on_input(
        &self,
        session: &mut Session,
        data: &[u8],
        out: &mut Vec<u8>,
        bound: usize,
        from: Origin,
        send: &mut impl FnMut(&mut Vec<u8>),
    ) -> Fed {
        let Origin { conn, learned } = from;
        self.counters.add(Counter::BytesIn, data.len() as u64);
        let cfg = &self.ctx.cfg;
        let was_holding = session.holding();
        // One feed in TIMED is timed (two clock reads, and one per request with work): the
        // sums over the timed feeds' requests give the means, at an eighth of the cost.
        let timed = next_is_timed();
        let entered = timed.then(Instant::now);
        let mut hook = Hook {
            w: *self,
            conn,
            send,
            work: !cfg.work.is_none() || cfg.work_from_request,
            bound,
            entered,
            waited: Duration::ZERO,
        };
        let fed = session.feed_each(data, out, &mut hook);
        self.counters.add(Counter::Requests, fed.requests);
        if let (Some(entered), true) = (entered, fed.requests > 0) {
            // Each request of this feed resided from when its input was known (the wait's
            // return in an event loop, else the read's) to the feed's end at most, and waited
            // from then to the feed's start (behind the wake-up's earlier connections) and
            // before its own work (behind this read's earlier requests' work).
            let n = fed.requests;
            let learned = learned.filter(|l| *l <= entered).unwrap_or(entered);
            let resided = entered.elapsed() + (entered - learned);
            let before = entered - learned;
            self.counters.add(Counter::TimedRequests, n);
            self.counters.add(Counter::ResidenceNs, resided.as_nanos() as u64 * n);
            self.counters.add(
                Counter::WaitInsideNs,
                before.as_nanos() as u64 * n + hook.waited.as_nanos() as u64,
            );
        }
        if session.holding() && !was_holding {
            self.counters.add(Counter::OutputPaused, 1);
        }
        if fed.streams != Default::default() {
            self.count_streams(fed.streams);
        }
        if let Some(cause) = fed.calm {
            self.count_calm(cause);
        }
        if let Some(n) = self.ctx.cfg.crash_after_requests {
            crash_if_reached(&self.ctx.stats, n);
        }
        fed
    }

    /// What a design with a pool does when the work of `ticket` is done: the session writes its
    /// response and goes on with the input held behind it, through the same hook as
    /// [`Worker::on_input`]; its requests are counted.
    pub fn on_complete(
        &self,
        session: &mut Session,
        ticket: u64,
        out: &mut Vec<u8>,
        bound: usize,
        conn: u64,
        send: &mut impl FnMut(&mut Vec<u8>),
    ) -> Fed {
        let mut hook = self.hook(send, bound, conn);
        let fed = session.complete_each(ticket, out, &mut hook);
        self.counters.add(Counter::Requests, fed.requests);
        fed
    }

    /// The per-request hook of a call that is not a read's feed (no time is taken).
    fn hook<'s, S: FnMut(&mut Vec<u8>)>(&self, send: &'s mut S, bound: usize, conn: u64) -> Hook<'s, 'a, S> {
        let cfg = &self.ctx.cfg;
        Hook {
            w: *self,
            conn,
            send,
            work: !cfg.work.is_none() || cfg.work_from_request,
            bound,
            entered: None,
            waited: Duration::ZERO,
        }
    }

    /// What every model does when a connection's later response is due ([`Session::due`]):
    /// the session writes what is due at `now` (its events) and, a response having ended, goes
    /// on with the input held behind it, through the same hook as [`Worker::on_input`].
    pub fn on_due(
        &self,
        session: &mut Session,
        now: Instant,
        out: &mut Vec<u8>,
        bound: usize,
        conn: u64,
        send: &mut impl FnMut(&mut Vec<u8>),
    ) -> Fed {
        let mut hook = self.hook(send, bound, conn);
        let fed = session.advance_each(now, out, &mut hook);
        self.counters.add(Counter::Requests, fed.requests);
        if fed.streams != Default::default() {
            self.count_streams(fed.streams);
        }
        fed
    }

    fn count_streams(&self, s: crate::proto::StreamCounts) {
        self.counters.add(Counter::StreamsOpened, u64::from(s.opened));
        self.counters.add(Counter::StreamsRefused, u64::from(s.refused));
        self.counters.add(Counter::StreamsReset, u64::from(s.reset));
    }

    /// A connection went past one of HTTP/2's budgets (it ends with ENHANCE_YOUR_CALM).
    fn count_calm(&self, cause: crate::proto::h2::budget::Cause) {
        use crate::proto::h2::budget::Cause;
        self.counters.add(
            match cause {
                Cause::ClientResets => Counter::CalmClientResets,
                Cause::ServerResets => Counter::CalmServerResets,
                Cause::QuietFrames => Counter::CalmQuietFrames,
            },
            1,
        );
    }

    /// Adds the syscalls this thread issued since the last flush to this worker's counters.
    #[inline]
    pub fn flush_syscalls(&self) {
        self.counters.flush_syscalls();
    }
}

/// Where input came from: the connection's token in its wiring (what a pooled job's
/// completion names), and when its wiring learned of it (its wait's return; `None`: the
/// read's own return is that moment) — what the requests' time in the server counts from.
#[derive(Debug, Clone, Copy)]
pub struct Origin {
    pub conn: u64,
    pub learned: Option<Instant>,
}

/// One feed in this many is timed.
const TIMED: u32 = 8;

thread_local! {
    /// Feeds this thread has begun, for [`TIMED`].
    static FEEDS: Cell<u32> = const { Cell::new(0) };
}

/// Whether the feed beginning now is one of those timed: a thread's first (a connection's
/// thread or process that serves one request is timed), then one in [`TIMED`].
fn next_is_timed() -> bool {
    FEEDS.with(|f| {
        let n = f.get();
        f.set(n.wrapping_add(1));
        n % TIMED == 0
    })
}

/// The hook every model gives its sessions ([`Worker::on_input`]): each request's work, and
/// the room `--max-output` leaves; it keeps how long requests waited before their work.
struct Hook<'a, 'w, S: FnMut(&mut Vec<u8>)> {
    w: Worker<'w>,
    /// The connection's token in its wiring: what a pooled job's completion names.
    conn: u64,
    send: &'a mut S,
    work: bool,
    bound: usize,
    /// When the feed began (a timed one), and what its requests waited for their work since
    /// then, summed.
    entered: Option<Instant>,
    waited: Duration,
}

impl<S: FnMut(&mut Vec<u8>)> Each for Hook<'_, '_, S> {
    #[inline]
    fn request(&mut self, req: Request<'_>, out: &mut Vec<u8>) -> Answer {
        let answer = match (self.work, self.w.ctx.offload.get()) {
            // A design with a pool: the work goes there and the response waits for it.
            // (A stream's events are the loop's: its work, if any, is done here.)
            (true, Some(pool)) if req.deferrable && !super::events::is_stream(self.w, req.target) => {
                self.offload(*pool, req)
            }
            (true, pool) => {
                // Each request's work runs right before its own response is written. A design
                // with a pool does here what the session cannot answer later (a body, echo,
                // packet) or an event stream's: counted as done on the loop.
                if pool.is_some() {
                    self.w.count(Counter::OffloadInline, 1);
                }
                (self.send)(out);
                if let Some(e) = self.entered {
                    self.waited += e.elapsed();
                }
                super::per_request::each(self.w, req)
            }
            (false, _) => Answer::Serve,
        };
        match answer {
            // A stream request's response is an event stream (or a 400 over the bounds).
            Answer::Serve => super::events::answer(self.w, req.target).unwrap_or(Answer::Serve),
            refused => refused,
        }
    }

    #[inline]
    fn room(&self, pending: usize) -> usize {
        self.bound.saturating_sub(pending)
    }
}

impl<S: FnMut(&mut Vec<u8>)> Hook<'_, '_, S> {
    /// Draws the request's work and hands it to `pool` (its response waits for the ticket),
    /// or does it here when the pool does not take work that short (`--offload-over`).
    fn offload(&mut self, pool: &dyn super::offload::Offloader, req: Request<'_>) -> Answer {
        let w = self.w;
        let Some(d) = super::per_request::draw(w, req) else {
            return Answer::Refuse;
        };
        if !pool.takes(d.cpu + d.wait) {
            w.count(Counter::OffloadInline, 1);
            super::per_request::perform(w, &d);
            return Answer::Serve;
        }
        let ticket = super::offload::ticket();
        let job = super::offload::Job {
            conn: self.conn,
            ticket,
            cpu: d.cpu,
            wait: d.wait,
            mean: d.mean,
            row: d.row,
            queued: Instant::now(),
        };
        pool.submit(w, job);
        Answer::Later(crate::proto::later::Later::Pending(ticket))
    }
}

/// Fault injection (`--crash-after-requests`, for tests of the bench harness): aborts the
/// process once the server has answered `n` requests.
#[cold]
fn crash_if_reached(stats: &Stats, n: u64) {
    if stats.total(Counter::Requests) >= n {
        eprintln!("muxlab: --crash-after-requests {n} reached: aborting");
        std::process::abort();
    }
}
