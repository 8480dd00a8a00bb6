//! One worker's event loop over any [`Poller`]: its connections, its read buffer, its counters.
//! select, poll and epoll, and every epoll architecture, run this loop; they differ in the
//! backend they pick, who accepts and how connections reach a loop. What happens to a
//! connection once it is in a loop is this file, the same for all of them.
//!
//! Connections use their fd number as token; the model registers its own descriptors
//! (listener, wake-up eventfd) with [`LISTENER`] / [`WAKE`] and handles them in `on_token`.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::time::Instant;

use crate::server::crossing::completions::Completions;
use crate::server::drivers::accept::Acceptor;
use crate::server::drivers::conn::{Conn, ConnTable, Ticker, Want};
use crate::server::drivers::poller::{Interest, Poller};
use crate::server::Counter;
use crate::server::Worker;
use crate::server::{io_err, Error};
use crate::server::{READ_BUF, TICK};
use crate::sys;
use crate::timer::Timers;

/// Token of a listening socket.
pub const LISTENER: u64 = u64::MAX;
/// Token of a wake-up eventfd.
pub const WAKE: u64 = u64::MAX - 1;
/// Token of the loop's [`Completions`] (see [`EventLoop::take_completions`]).
const COMPLETED: u64 = u64::MAX - 2;
/// Token of the worker's inbox of keyed commands and answers (see [`EventLoop::take_hops`]).
const HOPS: u64 = u64::MAX - 3;

/// A worker's event loop.
pub struct EventLoop<'a, P: Poller> {
    /// The worker running it.
    pub w: Worker<'a>,
    /// How it waits.
    pub poller: P,
    /// Its connections, by descriptor.
    conns: ConnTable,
    /// Tokens of the last wait.
    ready: Vec<u64>,
    /// The worker's read buffer.
    buf: Vec<u8>,
    /// When to do the worker's own chores next (expired keys, pages given back): its
    /// connections' deadlines are their own timer entries, never a sweep.
    ticker: Ticker,
    /// The time, read once per turn after the wait (as nginx caches it): what deadlines start
    /// from.
    now: Instant,
    /// When its connections' timeouts come (deadlines, idle shedding, later responses'
    /// pieces: each connection's earliest); the entries that came up.
    timers: Timers<u64>,
    fired: Vec<(Instant, u64)>,
    /// Work done elsewhere for its connections, once it takes them; what the last wake-up
    /// brought.
    completions: Option<&'a Completions>,
    posted: Vec<(u64, u64)>,
    /// Keyed commands and answers other threads post this worker, once it takes them.
    hops: Option<&'a crate::server::crossing::hops::Hops>,
    hopped: Vec<crate::server::crossing::hops::Post>,
    /// Reads of other workers' connections answered here in part, and what waits behind them.
    parked: crate::server::crossing::hops::Held,
    answers: Vec<(u64, u64, crate::proto::keyed::Answered)>,
}

impl<'a, P: Poller> EventLoop<'a, P> {
    pub fn new(w: Worker<'a>, poller: P) -> Self {
        EventLoop {
            w,
            poller,
            conns: ConnTable::new(),
            ready: Vec::with_capacity(1024),
            buf: vec![0u8; READ_BUF],
            ticker: Ticker::default(),
            now: Instant::now(),
            timers: Timers::with_capacity(64),
            fired: Vec::with_capacity(64),
            completions: None,
            posted: Vec::new(),
            hops: None,
            hopped: Vec::new(),
            parked: Default::default(),
            answers: Vec::new(),
        }
    }

    /// Takes the keyed commands other workers send this one (`--store sharded`: its shard's)
    /// and the answers to its connections' commands run elsewhere, if the server's commands
    /// cross threads.
    pub fn take_hops(&mut self) -> Result<(), Error> {
        let Some(hops) = self.w.ctx.hops.get() else {
            return Ok(());
        };
        self.hops = Some(*hops);
        self.poller
            .register(hops.inbox(self.w.index).wake_fd().as_fd(), HOPS, Interest::READ)
            .map_err(io_err("watching the inbox of keyed commands"))
    }

    /// Takes the completions posted to `c` from now on: each goes to its connection in the
    /// turn that hears of it.
    pub fn take_completions(&mut self, c: &'a Completions) -> Result<(), Error> {
        self.completions = Some(c);
        self.poller
            .register(c.wake_fd().as_fd(), COMPLETED, Interest::READ)
            .map_err(io_err("watching the completion queue"))
    }

    /// Registers a descriptor of the model's own (listener, eventfd) under `token`.
    pub fn watch(&mut self, fd: &impl AsFd, token: u64) -> Result<(), Error> {
        self.poller
            .register(fd.as_fd(), token, Interest::READ)
            .map_err(io_err("watching a descriptor"))
    }

    /// Stops watching a descriptor of the model's own.
    pub fn unwatch(&mut self, fd: &impl AsFd) -> Result<(), Error> {
        self.poller
            .deregister(fd.as_fd())
            .map_err(io_err("unwatching a descriptor"))
    }

    /// Takes a new connection into this loop. With `--defer-accept` its request is there
    /// already: it is read at once, and a short connection answered and closed right away
    /// never costs a registration. (Without it a first read mostly finds nothing on a fast
    /// network: accept wakes before the client's request arrives, and the read would be one
    /// more syscall per short connection.) Otherwise it is registered: edge-triggered once for
    /// both directions; level-triggered for reading.
    pub fn add(&mut self, fd: OwnedFd) {
        let mut conn = Conn::new(self.w, fd);
        let edge = self.poller.edge();
        let want = if self.w.ctx.cfg.defer_accept {
            conn.drive(self.w, &mut self.buf, edge, self.now)
        } else {
            Want::Read
        };
        let interest = match want {
            Want::Close => {
                drop(conn);
                self.w.release();
                return;
            }
            _ if edge => Interest::BOTH,
            Want::Write => Interest::WRITE,
            Want::Pending => Interest::NONE,
            Want::Read => Interest::READ,
        };
        let token = conn.fd.as_raw_fd() as u64;
        if self.poller.register(conn.fd.as_fd(), token, interest).is_ok() {
            if let Some(at) = conn.timer(self.w, self.now) {
                self.timers.arm(at, token);
            }
            self.conns.insert(conn);
        } else {
            drop(conn);
            self.w.release();
        }
    }

    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// One iteration: wait (up to a tick, or the earliest timer entry), hand the model's own
    /// tokens to `on_token`, drive the ready connections and those whose timers came up, and
    /// once per tick the worker's own chores.
    pub fn turn(&mut self, on_token: &mut impl FnMut(&mut Self, u64)) -> Result<(), Error> {
        let mut ready = std::mem::take(&mut self.ready);
        let timeout = self.timers.timeout(Instant::now(), TICK);
        let examined = self
            .poller
            .wait(&mut ready, timeout)
            .map_err(io_err("waiting for events"))?;
        self.now = Instant::now();
        self.w.count(Counter::Loops, 1);
        self.w.count(Counter::Events, examined as u64);
        for &token in &ready {
            if token == COMPLETED {
                self.completed();
            } else if token == HOPS {
                self.hopped();
            } else if token >= WAKE {
                on_token(self, token);
            } else {
                self.drive(token as RawFd);
            }
        }
        self.ready = ready;
        self.fire_timers();
        if self.ticker.due(self.now) {
            // Entries of connections that closed or were armed again: dropped once they
            // outnumber the connections (a client that opens long streams and leaves).
            if self.timers.len() > 2 * self.conns.len() + 64 {
                let conns = &self.conns;
                self.timers
                    .retain(|at, token| conns.get(token as RawFd).is_some_and(|c| c.armed_for(at)));
            }
            self.w.sweep_store();
            // What was held here for other workers' connections that closed since.
            self.parked.forget_gone();
            sys::mem::give_back();
        }
        self.w.flush_syscalls();
        Ok(())
    }

    /// Turns until the server stops, then closes every connection.
    pub fn run(&mut self, mut on_token: impl FnMut(&mut Self, u64)) -> Result<(), Error> {
        while !self.w.stopping() {
            self.turn(&mut on_token)?;
        }
        self.close_all();
        Ok(())
    }

    /// Closes every connection (shutdown: each says its farewell).
    pub fn close_all(&mut self) {
        let fds: Vec<RawFd> = self.conns.fds().collect();
        for fd in fds {
            if let Some(conn) = self.conns.get_mut(fd) {
                conn.stopping();
            }
            self.close(fd);
        }
    }

    /// Accepts up to `max` connections from `listener` into this loop (a listener event).
    pub fn accept_from(&mut self, acceptor: &mut Acceptor, listener: &impl AsFd, max: usize) {
        let mut fresh = Vec::new();
        if acceptor.accept_ready(self.w, listener, max, |fd| fresh.push(fd)) {
            self.w.count(Counter::Useful, 1);
        }
        for fd in fresh {
            self.add(fd);
        }
    }

    /// Hands what was posted to the loop's completions to their connections.
    fn completed(&mut self) {
        let Some(c) = self.completions else { return };
        let mut posted = std::mem::take(&mut self.posted);
        c.take(&mut posted);
        for &(token, ticket) in &posted {
            self.complete(token, ticket);
        }
        self.posted = posted;
    }

    /// Runs the keyed commands other workers sent (answers posted back) and hands the
    /// answers that came to their connections.
    fn hopped(&mut self) {
        let (Some(hops), Some(store)) = (self.hops, self.w.ctx.store.as_ref()) else {
            return;
        };
        let mut answers = std::mem::take(&mut self.answers);
        let here = crate::server::crossing::hops::Here {
            index: self.w.index,
            counters: self.w.counters,
        };
        hops.take(
            here,
            store,
            &mut self.hopped,
            &mut self.parked,
            |conn, ticket, answered| answers.push((conn, ticket, answered)),
        );
        // A connection's answers together (in the order they came), stepped once for all.
        answers.sort_by_key(|a| a.0);
        for group in answers.chunk_by_mut(|a, b| a.0 == b.0) {
            let fd = group[0].0 as RawFd;
            let Some(conn) = self.conns.get_mut(fd) else { continue };
            let before = conn.want();
            let edge = self.poller.edge();
            let want = conn.answered(self.w, group, &mut self.buf, edge, self.now);
            self.settled(fd, before, want);
        }
        answers.clear();
        self.answers = answers;
    }

    /// The work of `ticket` for the connection of `token` is done (its design's pool posted
    /// it): the response goes out. A connection that closed meanwhile, or a number reused
    /// since, holds no such ticket: nothing happens.
    fn complete(&mut self, token: u64, ticket: u64) {
        let fd = token as RawFd;
        let Some(conn) = self.conns.get_mut(fd) else { return };
        let before = conn.want();
        let edge = self.poller.edge();
        let want = conn.complete(self.w, ticket, &mut self.buf, edge, self.now);
        self.settled(fd, before, want);
    }

    /// Drives the connections whose timer entries came up by now.
    fn fire_timers(&mut self) {
        let mut fired = std::mem::take(&mut self.fired);
        self.timers.take_due(self.now, &mut fired);
        for (at, token) in fired.drain(..) {
            let fd = token as RawFd;
            // An entry its connection no longer holds (armed again, or closed and its number
            // reused) costs nothing more.
            let Some(conn) = self.conns.get_mut(fd).filter(|c| c.armed_for(at)) else {
                continue;
            };
            let before = conn.want();
            // The time the events go, not the turn's: a loaded turn's I/O came first.
            let edge = self.poller.edge();
            if let Some(want) = conn.on_timer(self.w, at, &mut self.buf, edge, Instant::now()) {
                self.settled(fd, before, want);
            }
        }
        self.fired = fired;
    }

    fn drive(&mut self, fd: RawFd) {
        let Some(conn) = self.conns.get_mut(fd) else { return };
        let before = conn.want();
        let edge = self.poller.edge();
        let want = conn.drive(self.w, &mut self.buf, edge, self.now);
        self.settled(fd, before, want);
    }

    /// A connection that waited for `before` now waits for `want`: closed, watched for what it
    /// waits for now (level-triggered), and its next due time armed.
    fn settled(&mut self, fd: RawFd, before: Want, want: Want) {
        let edge = self.poller.edge();
        let Some(conn) = self.conns.get_mut(fd) else { return };
        if want != Want::Close {
            if let Some(at) = conn.timer(self.w, self.now) {
                self.timers.arm(at, fd as u64);
            }
        }
        match want {
            Want::Close => self.close(fd),
            // Level-triggered: watch for what the connection now waits for.
            want if !edge && want != before => {
                let interest = match want {
                    Want::Write => Interest::WRITE,
                    Want::Pending => Interest::NONE,
                    _ => Interest::READ,
                };
                if self.poller.modify(conn.fd.as_fd(), fd as u64, interest).is_err() {
                    self.close(fd);
                }
            }
            _ => {}
        }
    }

    /// Closes one connection and counts it; the work its responses wait for is dropped.
    fn close(&mut self, fd: RawFd) {
        if let Some(mut conn) = self.conns.take(fd) {
            conn.end(self.w);
            self.poller.closing(conn.fd.as_fd());
            drop(conn);
            self.w.release();
        }
    }
}

/// The whole life of a worker that accepts from `listener` itself: one loop watching the
/// listener and its connections, accepting up to `per_event` connections per listener event
/// (until EAGAIN when edge-triggered). select, poll, epoll, reactor, threads-accept, reuseport
/// and procs-accept (`--accept all`) are this function with different arguments.
pub fn accept_loop<P: Poller>(w: Worker<'_>, poller: P, listener: &OwnedFd, per_event: usize) -> Result<(), Error> {
    serve_listener(EventLoop::new(w, poller), listener, per_event, |ev| {
        ev.watch(listener, LISTENER)
    })
}

/// Runs `ev`, accepting from `listener`, which `watch` registers under [`LISTENER`]. A loop that
/// holds its process's share of connections stops watching the listener, leaving new
/// connections to its siblings, until it is below 7/8 of it (nginx's `ngx_accept_disabled`):
/// it never accepts only to shed.
pub fn serve_listener<'a, P: Poller>(
    mut ev: EventLoop<'a, P>,
    listener: &OwnedFd,
    per_event: usize,
    mut watch: impl FnMut(&mut EventLoop<'a, P>) -> Result<(), Error>,
) -> Result<(), Error> {
    sys::fd::set_nonblocking(listener, true).map_err(io_err("making the listener non-blocking"))?;
    let mut acceptor = Acceptor::new(true);
    if let Some(limit) = ev.poller.fd_limit() {
        acceptor = acceptor.refuse_fds_from(limit);
    }
    let per_event = if ev.poller.edge() { usize::MAX } else { per_event };
    let ctx = ev.w.ctx;
    watch(&mut ev)?;
    let mut watching = true;
    ev.w.ready();
    let mut accept = |ev: &mut EventLoop<'a, P>, _listener: u64| {
        if !ctx.share_full(ev.connections()) {
            ev.accept_from(&mut acceptor, listener, per_event);
        }
    };
    while !ev.w.stopping() {
        let held = ev.connections();
        if watching && ctx.share_full(held) {
            ev.unwatch(listener)?;
            watching = false;
            ev.w.count(Counter::AcceptPaused, 1);
        } else if !watching && !ctx.share_full(held + ctx.process_conns / 8) {
            watch(&mut ev)?;
            watching = true;
        }
        ev.turn(&mut accept)?;
    }
    ev.close_all();
    Ok(())
}
