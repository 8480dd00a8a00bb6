//! # uring — io_uring: completions instead of readiness
//!
//! **Mechanism.** Each of `--workers` threads owns a ring and its own SO_REUSEPORT listener (one
//! multishot accept on a shared listener would take every connection into one ring). The
//! multishot accept yields a completion per new connection. Each connection has one receive in
//! flight; its completion brings the bytes in a buffer the kernel took from a provided-buffer
//! ring (given back once the session consumed them), and the next receive is armed at once —
//! unless the connection's unsent replies reached `--max-output`: then it waits until a send
//! completes below the bound (back-pressure). Replies go out as send operations whose buffers the
//! ring holds until they complete. One `io_uring_enter` submits everything queued and waits: no
//! per-request read / write / epoll_ctl syscalls.
//!
//! **Product.** The liburing examples, tokio-uring, glommio, monoio.
//!
//! **Trade-offs.** Fewer syscalls and copies per request; needs Linux 6.0+ (buffer rings). A
//! multishot receive (one submission, a completion per arrival) would save the re-arming, but
//! once armed it drains a socket into every free buffer: it cannot hold a client that never
//! reads to a bound (measured: +34 MiB for four such clients), so this model re-arms instead.
//!
//! **Seed.** Not in the seeds.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

use crate::proto::Session;
use crate::server::accept::{own_listener, Acceptor};
use crate::server::conn::Ticker;
use crate::server::deadline::{Deadlines, Expired};
use crate::server::{io_err, workers, Counter, Ctx, Error, Family, Model, Worker, Workers, TICK};
use crate::sys;
use crate::sys::uring::{Completion, OpId, RecvBuf, Ring};

pub const MODEL: Model = Model {
    name: "uring",
    family: Family::Completion,
    mechanism:
        "io_uring per worker, own SO_REUSEPORT listener: multishot accept, recv into a buffer ring (re-armed under --max-output), send",
    product: "liburing examples, tokio-uring, glommio",
    workers: Workers::Threads,
    reuseport: true,
    run,
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
        };
        w.ready();
        rl.run()
    })
}

/// One connection of a ring.
struct UConn {
    fd: OwnedFd,
    session: Session,
    /// Replies not yet handed to a send.
    out: Vec<u8>,
    /// Bytes of the send in flight (0: none).
    sending: usize,
    /// The receive in flight, if any.
    recv: Option<OpId>,
    /// Receiving is paused: unsent output reached `--max-output`.
    paused: bool,
    /// Close once the output is sent.
    closing: bool,
    deadlines: Deadlines,
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
    fn insert(&mut self, fd: OwnedFd, session: Session) -> (u64, &UConn) {
        self.gen = self.gen.wrapping_add(1);
        let conn = UConn {
            fd,
            session,
            out: Vec::new(),
            sending: 0,
            recv: None,
            paused: false,
            closing: false,
            deadlines: Deadlines::new(Instant::now()),
            gen: self.gen,
        };
        let slot = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        (slot as u64 | (self.gen as u64) << 32, self.conns[slot].insert(conn))
    }

    fn get(&mut self, tag: u64) -> Option<&mut UConn> {
        let gen = (tag >> 32) as u32;
        self.conns
            .get_mut(tag as u32 as usize)?
            .as_mut()
            .filter(|c| c.gen == gen)
    }

    /// Closes a connection: shutdown first, so its armed multishot receive ends and the kernel
    /// drops its reference to the socket.
    fn close(&mut self, w: Worker<'_>, tag: u64) {
        if self.get(tag).is_some() {
            let slot = tag as u32 as usize;
            let conn = self.conns[slot].take().expect("just found");
            let _ = sys::socket::shutdown(&conn.fd);
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
    ring: Ring,
    listener: &'a OwnedFd,
    /// The spare descriptor given up to shed a connection on EMFILE.
    spare: Acceptor,
    slots: Slots,
    /// Connections whose replies could not be queued (the kernel refused more submissions):
    /// retried every turn, their bytes kept.
    retry: Vec<u64>,
}

impl RingLoop<'_> {
    fn run(&mut self) -> Result<(), Error> {
        let (w, mut cqes, mut ticker) = (self.w, Vec::new(), Ticker::default());
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
            self.ring.wait(tick).map_err(io_err("io_uring_enter"))?;
            self.ring.completions(&mut cqes);
            w.count(Counter::Loops, 1);
            w.count(Counter::Events, cqes.len() as u64);
            for cqe in cqes.drain(..) {
                match cqe {
                    Completion::Accept { conn, more } => {
                        if !self.on_accept(conn, more)? {
                            rearm_accept_at = Some(Instant::now() + TICK / 10);
                        }
                    }
                    Completion::Recv { tag, data, more } => self.on_recv(tag, data, more),
                    Completion::Send { tag, sent, buf } => self.on_send(tag, sent, buf),
                }
            }
            for tag in std::mem::take(&mut self.retry) {
                self.flush(tag);
            }
            if ticker.due() {
                let now = Instant::now();
                let expired = |c: &UConn| c.deadlines.expired(&w.ctx.cfg, c.sending > 0 || !c.out.is_empty(), now);
                for tag in self.slots.tags(|c| expired(c).is_some()) {
                    let Some(conn) = self.slots.get(tag) else { continue };
                    let why = expired(conn).expect("selected as expired");
                    if why == Expired::Header {
                        let _ = sys::fd::try_write(&conn.fd, conn.session.timeout_response());
                    }
                    w.count(why.counter(), 1);
                    self.slots.close(w, tag);
                }
            }
            w.flush_syscalls();
        }
        for tag in self.slots.tags(|_| true) {
            self.slots.close(w, tag);
        }
        // The ring is torn down asynchronously and its accept holds the listener: stop it now.
        let _ = sys::socket::shutdown(self.listener);
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
                    let (tag, _) = self.slots.insert(fd, w.session());
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

    fn on_recv(&mut self, tag: u64, data: io::Result<Option<RecvBuf>>, more: bool) {
        let w = self.w;
        let Some(conn) = self.slots.get(tag) else {
            if let Ok(Some(buf)) = data {
                self.ring.recycle(buf);
            }
            return;
        };
        if !more {
            conn.recv = None;
        }
        match data {
            Ok(Some(buf)) => {
                w.count(Counter::Useful, 1);
                let fed = w.on_input(&mut conn.session, self.ring.buffer(&buf), &mut conn.out);
                conn.deadlines.input(&conn.session, Instant::now());
                self.ring.recycle(buf);
                conn.closing |= fed.close;
                if !conn.paused && conn.sending + conn.out.len() >= w.ctx.cfg.max_output {
                    // Back-pressure: no new receive until the client takes its replies.
                    conn.paused = true;
                    w.count(Counter::OutputPaused, 1);
                }
                self.arm(tag);
                self.flush(tag);
            }
            // Every provided buffer was in use: arm again.
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => self.arm(tag),
            // The peer finished sending; let the last replies go out, then close.
            Ok(None) if conn.sending > 0 => conn.closing = true,
            _ => self.slots.close(w, tag),
        }
    }

    /// Arms the connection's receive unless one is armed or receiving is paused.
    fn arm(&mut self, tag: u64) {
        let Some(conn) = self.slots.get(tag) else { return };
        if conn.recv.is_none() && !conn.paused {
            match self.ring.recv(conn.fd.as_fd(), tag) {
                Ok(op) => conn.recv = Some(op),
                Err(_) => self.slots.close(self.w, tag),
            }
        }
    }

    fn on_send(&mut self, tag: u64, sent: io::Result<usize>, mut buf: Vec<u8>) {
        let Some(conn) = self.slots.get(tag) else { return };
        conn.sending = 0;
        let Ok(n) = sent else {
            return self.slots.close(self.w, tag);
        };
        self.w.count(Counter::BytesOut, n as u64);
        if n > 0 {
            conn.deadlines.output(Instant::now());
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
        self.flush(tag);
        // Below the bound again: receive again.
        if let Some(conn) = self.slots.get(tag) {
            if conn.paused && conn.sending + conn.out.len() < self.w.ctx.cfg.max_output {
                conn.paused = false;
                self.arm(tag);
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
            match self.ring.send(conn.fd.as_fd(), data, tag) {
                Ok(()) => conn.sending = len,
                Err((_, data)) => {
                    conn.out = data;
                    return self.retry.push(tag);
                }
            }
        }
        if conn.closing && conn.sending == 0 && conn.out.is_empty() {
            self.slots.close(self.w, tag);
        }
    }
}
