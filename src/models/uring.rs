//! # uring — io_uring: completions instead of readiness
//!
//! **Mechanism.** Each of `--workers` threads owns a ring and its own SO_REUSEPORT listener (one
//! multishot accept on a shared listener would take every connection into one ring), whose
//! multishot accept yields a completion per connection. Each connection has one receive armed
//! while its session holds nothing back, into a buffer the kernel takes from a provided-buffer
//! ring (given back once the session has the bytes), the next armed in the same submission. At
//! `--max-output` of unsent replies its session holds the rest and no receive is armed
//! (back-pressure). Replies are send operations whose buffers the ring holds until they
//! complete. One `io_uring_enter` submits everything and waits: no per-request read / write /
//! epoll_ctl. With hundreds of connections, that wait is for a batch (`--batch-wait`, io_uring's
//! min-wait): as many completions as the last turn brought, up to an eighth of the connections,
//! at most 100 µs longer once the first is there.
//!
//! **Product.** The liburing examples, tokio-uring, glommio, monoio.
//!
//! **Trade-offs.** Fewer syscalls and copies per request; needs Linux 6.0+ (buffer rings; the
//! batched wait 6.12+). Batching pays with hundreds of connections; with a few dozen, or short
//! connections, it was measured dearer, so a ring with fewer than 256 open never batches.
//! Receives are single-shot: a multishot one drains a socket into every free buffer until a
//! cancel takes effect, so a client that never reads could make a connection hold hundreds of
//! KiB past `--max-output` (`tests/memory.rs`, debug build: 98 MiB multishot, 10 MiB
//! single-shot); arming each costs little (server CPU per request 1.00× for keep-alive and
//! short connections, 1.05× for 128-byte echoes). A connection holds at most `--max-output` of
//! replies, one response over it, and one 16 KiB buffer of input past it. An event stream's next
//! event is a timeout operation, one in flight per connection.
//!
//! **Seed** (docs/seeds.md). Not in the seeds.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::rc::Rc;
use std::time::Instant;

use crate::proto::Session;
use crate::server::accept::{own_listener, Acceptor};
use crate::server::conn::Ticker;
use crate::server::deadline::{self, Deadlines};
use crate::server::idle::Shed;
use crate::server::timers::Armed;
use crate::server::{io_err, workers, Counter, Ctx, Error, Family, Flag, Model, Worker, Workers, TICK};
use crate::server::{Assign, Discipline};
use crate::sys;
use crate::sys::uring::{Completion, RecvBuf, Ring, SharedFd};

pub const MODEL: Model = Model {
    name: "uring",
    family: Family::Completion,
    mechanism:
        "io_uring per worker, own SO_REUSEPORT listener: multishot accept, one recv at a time into a buffer ring (none past --max-output), send",
    product: "liburing examples, tokio-uring, glommio",
    workers: Workers::Threads,
    reuseport: true,
    flags: &[Flag::BatchWait],
    run,
    queueing: Discipline::PerWorker(Assign::Random),
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    workers::threads(ctx, |w| {
        let ring = Ring::new(4096, 256, 16 * 1024)
            .map_err(io_err("the uring model cannot run on this kernel (use --model epoll)"))?;
        // Each ring accepts from its own listener in the server's SO_REUSEPORT group: one
        // multishot accept on a shared listener would take every connection into one ring.
        let own = own_listener(w)?;
        let mut rl = RingLoop {
            w,
            ring,
            listener: own.as_ref().unwrap_or(&w.ctx.listener),
            spare: Acceptor::new(true),
            slots: Slots::default(),
            retry: Vec::new(),
            now: Instant::now(),
        };
        w.ready();
        rl.run()
    })
}

/// How much longer a turn may wait for a batch of completions (`--batch-wait`).
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_micros(100);
/// Connections a ring must have open before its turns wait for batches.
const BATCH_FROM: usize = 256;
/// The largest batch a turn waits for.
const BATCH_MAX: usize = 64;

/// One connection of a ring.
struct UConn {
    /// Shared with the ring's operations on it: closed once they and the connection let go.
    fd: SharedFd,
    session: Session,
    /// Replies not yet handed to a send.
    out: Vec<u8>,
    /// Bytes of the send in flight (0: none).
    sending: usize,
    /// A receive is armed.
    receiving: bool,
    /// Close once the output is sent.
    closing: bool,
    deadlines: Deadlines,
    /// Gave back its buffers since it last moved.
    shed: Shed,
    /// The last input asked nothing of the server (HTTP/2's quiet frames): the sends that
    /// answer it are no progress of the connection's own.
    quiet: bool,
    /// Tells this connection from an earlier one in the same slot.
    gen: u32,
    /// The time its timeout operation in flight is for (a later response's next piece).
    timer: Armed,
}

impl UConn {
    /// Hands received bytes (none: what it held back) to the session, which stops at
    /// `--max-output` (counting the send in flight: with a send of that much in flight, it
    /// takes nothing until the send completes) and holds the rest.
    fn feed(&mut self, w: Worker<'_>, bytes: &[u8], now: Instant) {
        let bound = w.max_output().saturating_sub(self.sending);
        let mut send = send_now(w, self);
        let fed = w.on_input(&mut self.session, bytes, &mut self.out, bound, &mut send);
        self.quiet = fed.quiet();
        self.deadlines.input(&self.session, fed.requests > 0, self.quiet, now);
        self.closing |= fed.close;
        self.shed.active();
    }

    /// Writes what its later responses have due at `now` (events), under the same bound.
    fn advance(&mut self, w: Worker<'_>, now: Instant) {
        let bound = w.max_output().saturating_sub(self.sending);
        let mut send = send_now(w, self);
        let fed = w.on_due(&mut self.session, now, &mut self.out, bound, &mut send);
        self.closing |= fed.close;
        self.deadlines.output(now);
        self.shed.active();
    }

    /// Nothing left to send or to go on with.
    fn drained(&self) -> bool {
        self.sending == 0 && self.out.is_empty() && !self.session.holding()
    }
}

/// Before the next request's work, what the socket takes now: only while no send is in flight
/// on the ring (a direct write must not overtake one).
fn send_now<'a>(w: Worker<'a>, c: &UConn) -> impl FnMut(&mut Vec<u8>) + 'a {
    let (fd, sending) = (Rc::clone(&c.fd), c.sending);
    move |out| {
        if sending == 0 {
            let mut sent = 0;
            w.count(Counter::BytesOut, sys::fd::send_now(&fd, out, &mut sent) as u64);
            out.drain(..sent);
        }
    }
}

/// A ring's connections, by slot; a connection's tag on the ring is its slot and generation.
#[derive(Default)]
struct Slots {
    conns: Vec<Option<UConn>>,
    free: Vec<usize>,
    gen: u32,
}

impl Slots {
    fn insert(&mut self, fd: OwnedFd, session: Session, now: Instant) -> (u64, &UConn) {
        self.gen = self.gen.wrapping_add(1);
        let conn = UConn {
            fd: SharedFd::new(fd),
            session,
            out: Vec::new(),
            sending: 0,
            receiving: false,
            closing: false,
            quiet: false,
            deadlines: Deadlines::new(now),
            shed: Shed::default(),
            gen: self.gen,
            timer: Armed::default(),
        };
        let slot = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        (slot as u64 | (self.gen as u64) << 32, self.conns[slot].insert(conn))
    }

    /// Connections open.
    fn open(&self) -> usize {
        self.conns.len() - self.free.len()
    }

    fn get(&mut self, tag: u64) -> Option<&mut UConn> {
        let gen = (tag >> 32) as u32;
        self.conns
            .get_mut(tag as u32 as usize)?
            .as_mut()
            .filter(|c| c.gen == gen)
    }

    /// Closes a connection: shutdown first, so its armed receive ends. The descriptor
    /// itself closes when the last operation on it completes (the ring holds it till then), so
    /// its number cannot be reused under an operation still queued.
    fn close(&mut self, w: Worker<'_>, tag: u64) {
        if self.get(tag).is_some() {
            let slot = tag as u32 as usize;
            let mut conn = self.conns[slot].take().expect("just found");
            // Closed for a reason of its own (a stopping server said its farewell first): the
            // cut, written directly only where no send is in flight to be overtaken.
            if conn.sending == 0 && conn.out.is_empty() {
                deadline::part(&mut conn.session, false, |b| {
                    let _ = sys::fd::try_write(&conn.fd, b);
                });
            }
            let _ = sys::socket::shutdown(&conn.fd);
            self.free.push(slot);
            w.release();
        }
    }

    /// The connections quiet for a tick with nothing to send give back the buffers a burst
    /// grew.
    fn shed_idle(&mut self, now: Instant) {
        for c in self.conns.iter_mut().flatten().filter(|c| c.sending == 0) {
            c.shed.idle(&mut c.session, &mut c.out, c.deadlines.last(), now);
        }
        sys::mem::give_back();
    }

    /// Tags of the connections `keep` selects.
    fn tags(&self, keep: impl Fn(&UConn) -> bool) -> Vec<u64> {
        let tags = self.conns.iter().enumerate();
        tags.filter_map(|(i, c)| c.as_ref().filter(|c| keep(c)).map(|c| i as u64 | (c.gen as u64) << 32))
            .collect()
    }
}

/// One worker: its ring, its listener and its connections.
struct RingLoop<'a> {
    w: Worker<'a>,
    ring: Ring<'a>,
    listener: &'a OwnedFd,
    /// The spare descriptor given up to shed a connection on EMFILE.
    spare: Acceptor,
    slots: Slots,
    /// Connections whose replies could not be queued (the kernel refused more submissions):
    /// retried every turn, their bytes kept.
    retry: Vec<u64>,
    /// The time, read once per turn after the wait (as nginx caches it): what deadlines start
    /// from.
    now: Instant,
}

impl RingLoop<'_> {
    fn run(&mut self) -> Result<(), Error> {
        let (w, mut cqes, mut ticker) = (self.w, Vec::new(), Ticker::default());
        let batch_wait = w.ctx.cfg.batch_wait.unwrap_or(BATCH_WAIT);
        let mut last_batch = 1;
        // Set when accepting must pause (out of descriptors with nothing to drain).
        let mut rearm_accept_at = Some(Instant::now());
        while !w.stopping() {
            if rearm_accept_at.is_some_and(|t| Instant::now() >= t) {
                rearm_accept_at = None;
                self.ring
                    .accept_multi(self.listener.as_fd())
                    .map_err(io_err("io_uring accept"))?;
            }
            let tick = if rearm_accept_at.is_some() { TICK / 10 } else { TICK };
            // Batches only with hundreds of connections open (with fewer, a client waits for the
            // replies of this very batch: measured dearer at 50 and for short connections), no
            // larger than the last turn's (a lone request never waits for company) nor than an
            // eighth of the connections, and for at most `batch_wait` once the first is there.
            let open = self.slots.open();
            let want = if open >= BATCH_FROM {
                last_batch.min(open / 8)
            } else {
                1
            };
            let batch = (!batch_wait.is_zero()).then_some((want, batch_wait));
            self.ring.wait(tick, batch).map_err(io_err("io_uring_enter"))?;
            self.ring.completions(&mut cqes);
            self.now = Instant::now();
            w.learned(self.now);
            last_batch = cqes.len().clamp(1, BATCH_MAX);
            w.count(Counter::Loops, 1);
            w.count(Counter::Events, cqes.len() as u64);
            for cqe in cqes.drain(..) {
                match cqe {
                    Completion::Accept { conn, more } => {
                        if !self.on_accept(conn, more)? {
                            rearm_accept_at = Some(Instant::now() + TICK / 10);
                        }
                    }
                    Completion::Recv { tag, data, .. } => self.on_recv(tag, data),
                    Completion::Send { tag, sent, buf } => self.on_send(tag, sent, buf),
                    Completion::Timeout { tag } => self.on_timeout(tag),
                }
            }
            for tag in std::mem::take(&mut self.retry) {
                self.flush(tag);
            }
            if ticker.due(self.now) {
                let now = self.now;
                let expired = |c: &UConn| {
                    c.deadlines
                        .expired(&w.ctx.cfg, &c.session, c.sending > 0 || !c.out.is_empty(), now)
                };
                for tag in self.slots.tags(|c| expired(c).is_some()) {
                    let Some(conn) = self.slots.get(tag) else { continue };
                    let why = expired(conn).expect("selected as expired");
                    why.last_word(w, &conn.session, |b| {
                        let _ = sys::fd::try_write(&conn.fd, b);
                    });
                    self.slots.close(w, tag);
                }
                self.slots.shed_idle(now);
            }
            w.flush_syscalls();
        }
        self.settle_sends()?;
        for tag in self.slots.tags(|_| true) {
            if let Some(conn) = self.slots.get(tag).filter(|c| c.sending == 0 && c.out.is_empty()) {
                deadline::part(&mut conn.session, true, |b| {
                    let _ = sys::fd::try_write(&conn.fd, b);
                });
            }
            self.slots.close(w, tag);
        }
        // The ring is torn down asynchronously and its accept holds the listener: stop it now.
        let _ = sys::socket::shutdown(self.listener);
        Ok(())
    }

    /// The server is stopping: lets the sends in flight and the output behind them go, for a
    /// tick at most, so a connection's last words (an event stream's last chunk) follow them.
    fn settle_sends(&mut self) -> Result<(), Error> {
        let until = Instant::now() + TICK;
        let mut cqes = Vec::new();
        while Instant::now() < until && !self.slots.tags(|c| c.sending > 0).is_empty() {
            self.ring.wait(TICK / 10, None).map_err(io_err("io_uring_enter"))?;
            self.ring.completions(&mut cqes);
            for cqe in cqes.drain(..) {
                match cqe {
                    // The rest of its output follows (no new events: the server is stopping).
                    Completion::Send { tag, sent, buf } => self.on_send(tag, sent, buf),
                    Completion::Recv {
                        data: Ok(Some(buf)), ..
                    } => self.ring.recycle(buf),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Handles an accept completion; `false` when accepting must pause (out of descriptors with
    /// nothing pending to drain: the kernel would fail the next accept at once).
    fn on_accept(&mut self, conn: io::Result<OwnedFd>, more: bool) -> Result<bool, Error> {
        let w = self.w;
        match conn {
            Ok(fd) => {
                if let Some(fd) = w.admit(fd) {
                    w.count(Counter::Useful, 1);
                    let (tag, _) = self.slots.insert(fd, w.session(), self.now);
                    self.arm(tag);
                }
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE)) => {
                // Out of descriptors: drain a pending connection through the spare slot.
                if !self.spare.shed(self.listener, w) && !more {
                    return Ok(false);
                }
            }
            Err(_) => w.count(Counter::AcceptLost, 1),
        }
        if !more && !w.stopping() {
            self.ring
                .accept_multi(self.listener.as_fd())
                .map_err(io_err("io_uring accept"))?;
        }
        Ok(true)
    }

    fn on_recv(&mut self, tag: u64, data: io::Result<Option<RecvBuf>>) {
        let w = self.w;
        let Some(conn) = self.slots.get(tag) else {
            if let Ok(Some(buf)) = data {
                self.ring.recycle(buf);
            }
            return;
        };
        conn.receiving = false;
        match data {
            Ok(Some(buf)) => {
                w.count(Counter::Useful, 1);
                conn.feed(w, self.ring.buffer(&buf), self.now);
                self.ring.recycle(buf);
                self.flush(tag);
                self.arm(tag);
                self.arm_timer(tag);
            }
            // Every provided buffer was in use: receive again.
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => self.arm(tag),
            // The peer finished sending; let the last replies go out, then close.
            Ok(None) if !conn.drained() => conn.closing = true,
            _ => self.slots.close(w, tag),
        }
    }

    /// Keeps one receive armed while the session holds nothing back, is not paused behind a
    /// response owed later (input waits in TCP until it has gone) and the connection is not
    /// closing (the shutdown that closes a connection ends the receive it has armed).
    fn arm(&mut self, tag: u64) {
        let Some(conn) = self.slots.get(tag) else { return };
        if conn.receiving || conn.closing || conn.session.holding() || conn.session.paused() {
            return;
        }
        match self.ring.recv_once(&conn.fd, tag) {
            Ok(_) => conn.receiving = true,
            Err(_) => self.slots.close(self.w, tag),
        }
    }

    fn on_send(&mut self, tag: u64, sent: io::Result<usize>, mut buf: Vec<u8>) {
        let Some(conn) = self.slots.get(tag) else { return };
        conn.sending = 0;
        let Ok(n) = sent else {
            return self.slots.close(self.w, tag);
        };
        self.w.count(Counter::BytesOut, n as u64);
        // Output that moves keeps the connection alive, but for the answer to input that
        // asked nothing (a PING's ACK does not keep a connection from being idle) when it
        // went whole, with nothing behind it.
        if n > 0 && (!conn.quiet || n < buf.len() || !conn.out.is_empty()) {
            conn.deadlines.output(self.now);
        }
        if n < buf.len() {
            // A short send: the rest goes first, ahead of newer replies.
            buf.drain(..n);
            buf.append(&mut conn.out);
            conn.out = buf;
        } else if conn.out.is_empty() {
            // Keep the allocation for the next reply.
            buf.clear();
            conn.out = buf;
        }
        // The output moved: what the session held back goes on, and what later responses
        // have due, then receiving again.
        if conn.session.holding() {
            conn.feed(self.w, &[], self.now);
        }
        if conn.session.due().is_some_and(|d| d <= self.now) && !self.w.stopping() {
            conn.advance(self.w, self.now);
        }
        self.flush(tag);
        self.arm(tag);
        self.arm_timer(tag);
    }

    /// A connection's timeout operation completed: what is due goes.
    fn on_timeout(&mut self, tag: u64) {
        let (w, now) = (self.w, self.now);
        let Some(conn) = self.slots.get(tag) else { return };
        conn.timer.passed(now);
        if conn.sending == 0 && conn.session.due().is_some_and(|d| d <= now) {
            w.count(Counter::Useful, 1);
            conn.advance(w, now);
        }
        self.flush(tag);
        self.arm(tag);
        self.arm_timer(tag);
    }

    /// Keeps one timeout operation in flight for the next piece a later response has due,
    /// while no send is (its completion goes on with the rest).
    fn arm_timer(&mut self, tag: u64) {
        let now = self.now;
        let Some(conn) = self.slots.get(tag) else { return };
        if conn.sending > 0 || !conn.out.is_empty() {
            return;
        }
        if let Some(at) = conn.timer.arm(conn.session.due()) {
            if self.ring.timeout(at.saturating_duration_since(now), tag).is_err() {
                self.slots.close(self.w, tag);
            }
        }
    }

    /// Starts a send of the pending replies unless one is in flight, and closes a connection
    /// that is done. A send the ring cannot queue keeps its bytes and is retried next turn.
    fn flush(&mut self, tag: u64) {
        let Some(conn) = self.slots.get(tag) else { return };
        if conn.sending == 0 && !conn.out.is_empty() {
            let data = std::mem::take(&mut conn.out);
            let len = data.len();
            match self.ring.send(&conn.fd, data, tag) {
                Ok(()) => conn.sending = len,
                Err((_, data)) => {
                    conn.out = data;
                    return self.retry.push(tag);
                }
            }
        }
        if conn.closing && conn.drained() {
            self.slots.close(self.w, tag);
        }
    }
}
