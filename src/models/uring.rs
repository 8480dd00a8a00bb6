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
//! replies, one response over it, and one 16 KiB buffer of input past it. A connection's timeouts
//! (its deadlines, giving back buffers, an event stream's next event) are entries in the
//! loop's one timer, whose earliest bounds the ring's wait: no timeout operation per
//! connection (measured 1.40× the server CPU per short connection when each armed one).
//!
//! **Seed** (docs/seeds.md). Not in the seeds.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

use crate::server::connection::{wire, Connection, Next};
use crate::server::drivers::accept::{own_listener, Acceptor};
use crate::server::drivers::conn::Ticker;
use crate::server::{io_err, workers, Counter, Ctx, Error, Family, Flag, Model, Worker, Workers, TICK};
use crate::server::{Assign, Discipline};
use crate::sys;
use crate::sys::uring::{Completion, RecvBuf, Ring, SharedFd};
use crate::timer::Timers;

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
    data: crate::store::Toucher::EachWorker,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    workers::threads(ctx, |w| {
        let ring = Ring::new(4096, ring_buffers(w.ctx.cfg.procs), RECV_BUF)
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
            timers: Timers::with_capacity(64),
            fired: Vec::with_capacity(64),
        };
        w.ready();
        rl.run()
    })
}

/// A provided buffer's size: one receive's most.
const RECV_BUF: usize = 16 * 1024;

/// Provided buffers in a server's ring (each worker's): 256 (4 MiB), shared out over a
/// group's processes (`--procs`), at least 32 in each (512 KiB): a group of 60 holds 30 MiB
/// of them, not 240. A receive that finds none free is submitted again (counted:
/// `recv_no_buffers`).
fn ring_buffers(procs: usize) -> u16 {
    (256 / procs.max(1)).clamp(32, 256) as u16
}

/// How much longer a turn may wait for a batch of completions (`--batch-wait`).
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_micros(100);
/// Connections a ring must have open before its turns wait for batches.
const BATCH_FROM: usize = 256;
/// The largest batch a turn waits for.
const BATCH_MAX: usize = 64;

/// One connection of a ring: the [`Connection`] it steps, and what the ring has in flight on it.
struct UConn {
    /// Shared with the ring's operations on it: closed once they and the connection let go.
    fd: SharedFd,
    conn: Connection,
    /// A receive is armed.
    receiving: bool,
    /// Tells this connection from an earlier one in the same slot.
    gen: u32,
}

/// A ring's connections, by slot; a connection's tag on the ring is its slot and generation.
#[derive(Default)]
struct Slots {
    conns: Vec<Option<UConn>>,
    free: Vec<usize>,
    gen: u32,
}

impl Slots {
    fn insert(&mut self, w: Worker<'_>, fd: OwnedFd, now: Instant) -> u64 {
        self.gen = self.gen.wrapping_add(1);
        let slot = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        let tag = slot as u64 | (self.gen as u64) << 32;
        self.conns[slot] = Some(UConn {
            fd: SharedFd::new(fd),
            conn: Connection::new(w, tag, now),
            receiving: false,
            gen: self.gen,
        });
        tag
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
            let mut c = self.conns[slot].take().expect("just found");
            // Its parting words, written directly only where no send is in flight to be
            // overtaken.
            wire::end(w, &mut c.conn, &c.fd);
            let _ = sys::socket::shutdown(&c.fd);
            self.free.push(slot);
            w.release();
        }
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
    /// When its connections' timeouts come (each one's earliest, by tag): the ring's wait ends
    /// at the earliest (one timer for all, not a timeout operation each); the entries that
    /// came up.
    timers: Timers<u64>,
    fired: Vec<(Instant, u64)>,
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
            let wait = self.timers.timeout(Instant::now(), tick);
            self.ring.wait(wait, batch).map_err(io_err("io_uring_enter"))?;
            self.ring.completions(&mut cqes);
            self.now = Instant::now();
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
                }
            }
            self.fire_timers();
            for tag in std::mem::take(&mut self.retry) {
                self.step(tag);
            }
            if ticker.due(self.now) {
                // The worker's own chores: its connections' deadlines are entries in its timer.
                // Entries of connections closed or armed again go once they outnumber them.
                if self.timers.len() > 2 * self.slots.open() + 64 {
                    let slots = &mut self.slots;
                    self.timers
                        .retain(|at, tag| slots.get(tag).is_some_and(|c| c.conn.armed_for(at)));
                }
                w.sweep_store();
                sys::mem::give_back();
            }
            w.flush_syscalls();
        }
        self.settle_sends()?;
        for tag in self.slots.tags(|_| true) {
            if let Some(c) = self.slots.get(tag) {
                c.conn.server_stopping();
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
        while Instant::now() < until && !self.slots.tags(|c| c.conn.in_flight()).is_empty() {
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
                    let tag = self.slots.insert(w, fd, self.now);
                    self.step(tag);
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
        let Some(c) = self.slots.get(tag) else {
            if let Ok(Some(buf)) = data {
                self.ring.recycle(buf);
            }
            return;
        };
        c.receiving = false;
        match data {
            Ok(Some(buf)) => {
                c.conn.input(
                    w,
                    self.ring.buffer(&buf),
                    self.now,
                    Some(self.now),
                    &mut wire::early(w, &c.fd),
                );
                self.ring.recycle(buf);
                self.step(tag);
            }
            // Every provided buffer was in use: receive again.
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                self.w.count(Counter::RecvNoBuffers, 1);
                self.step(tag)
            }
            // The peer finished sending; let the last replies go out, then close.
            Ok(None) => {
                c.conn.peer_finished();
                self.step(tag);
            }
            Err(_) => self.slots.close(w, tag),
        }
    }

    fn on_send(&mut self, tag: u64, sent: io::Result<usize>, buf: Vec<u8>) {
        let (w, now) = (self.w, self.now);
        let Some(c) = self.slots.get(tag) else { return };
        let Ok(n) = sent else {
            return self.slots.close(w, tag);
        };
        c.conn.send_done(w, buf, n, now);
        self.step(tag);
    }

    /// Steps the connections whose timers came up by now (not the entries they no longer
    /// hold): what has come due is done first.
    fn fire_timers(&mut self) {
        let (w, now) = (self.w, self.now);
        let mut fired = std::mem::take(&mut self.fired);
        self.timers.take_due(now, &mut fired);
        for (at, tag) in fired.drain(..) {
            let Some(c) = self.slots.get(tag) else { continue };
            if c.conn.handle_timeout(w, Some(at), now) {
                self.step(tag);
            }
        }
        self.fired = fired;
    }

    /// Steps a connection: starts a send of its output unless one is in flight, keeps one
    /// receive armed while it reads (not while it holds input back at the bound, is paused
    /// behind a response owed later — input waits in TCP until it has gone — or closes: the
    /// shutdown that closes a connection ends the receive it has armed), its timer in the loop's
    /// heap, and closes it once it is done. A stopping server goes on with
    /// nothing new: its sends in flight and the output behind them go. A send the ring cannot
    /// queue keeps its bytes and is retried next turn.
    fn step(&mut self, tag: u64) {
        let (w, now) = (self.w, self.now);
        let Some(c) = self.slots.get(tag) else { return };
        let next = match w.stopping() {
            true if c.conn.sending() => Next::Send,
            true => Next::Sending,
            false => c.conn.next(w, now, &mut wire::early(w, &c.fd)),
        };
        let armed = match next {
            Next::Send if c.conn.output().is_empty() => Ok(()),
            Next::Send => {
                let data = c.conn.take_output();
                match self.ring.send(&c.fd, data, tag) {
                    Ok(()) => match c.conn.next(w, now, &mut wire::early(w, &c.fd)) {
                        Next::Read if !c.receiving => self.ring.recv_once(&c.fd, tag).map(|_| c.receiving = true),
                        _ => Ok(()),
                    },
                    Err((_, data)) => {
                        c.conn.send_done(w, data, 0, now);
                        self.retry.push(tag);
                        Ok(())
                    }
                }
            }
            Next::Read if !c.receiving => self.ring.recv_once(&c.fd, tag).map(|_| c.receiving = true),
            Next::Close => return self.slots.close(w, tag),
            Next::Read | Next::Pending | Next::Sending => Ok(()),
        };
        c.conn.settle(w, now);
        wire::perform(w, &mut c.conn);
        if let Some(at) = c.conn.timer(w, now) {
            self.timers.arm(at, tag);
        }
        if armed.is_err() {
            self.slots.close(w, tag);
        }
    }
}
