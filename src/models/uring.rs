//! # uring — io_uring: completions instead of readiness
//!
//! **Mechanism.** Each of `--workers` threads owns a ring and its own SO_REUSEPORT listener (one
//! multishot accept on a shared listener would take every connection into one ring). The
//! multishot accept yields a completion per new connection; one multishot receive per connection yields
//! a completion per arrival, the bytes already in a buffer the kernel took from a provided-buffer
//! ring (given back after the session consumed them); replies go out as send operations whose
//! buffers the ring holds until they complete. One `io_uring_enter` submits everything queued
//! and waits: no per-request read / write / epoll_ctl syscalls.
//!
//! **Product.** The liburing examples, tokio-uring, glommio, monoio.
//!
//! **Trade-offs.** Fewer syscalls and copies per request; needs Linux 6.0+ (multishot recv,
//! buffer rings), and a client that never reads makes replies queue in memory (a multishot
//! receive keeps delivering while a send is pending).
//!
//! **Seed.** Not in the seeds.

use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

use crate::proto::Session;
use crate::server::accept::{own_listener, Acceptor};
use crate::server::conn::Ticker;
use crate::server::{io_err, workers, Counter, Ctx, Error, Family, Model, Worker, Workers, TICK};
use crate::sys;
use crate::sys::uring::{Completion, RecvBuf, Ring};

pub const MODEL: Model = Model {
    name: "uring",
    family: Family::Completion,
    mechanism:
        "io_uring per worker, own SO_REUSEPORT listener: multishot accept, multishot recv into a buffer ring, send",
    product: "liburing examples, tokio-uring, glommio",
    seed: "-",
    workers: Workers::Threads,
    flags: &[],
    one_conn_per_worker: false,
    default_max_conns: None,
    reuseport: true,
    run,
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    workers::threads(ctx, worker)
}

/// One connection of a ring.
struct UConn {
    fd: OwnedFd,
    session: Session,
    /// Replies not yet handed to a send.
    out: Vec<u8>,
    /// A send is in flight.
    sending: bool,
    /// Close once the output is sent.
    closing: bool,
    last: Instant,
    /// Tells this connection from an earlier one in the same slot.
    gen: u32,
}

/// A worker's connections, by slot; a connection's tag on the ring is its slot and generation.
#[derive(Default)]
struct Slots {
    conns: Vec<Option<UConn>>,
    free: Vec<usize>,
    gen: u32,
    /// Tags of connections whose replies could not be queued (the submission queue was full
    /// and the kernel refused more): retried every turn, their bytes kept.
    retry: Vec<u64>,
}

impl Slots {
    fn insert(&mut self, fd: OwnedFd, proto: crate::proto::Proto) -> (usize, u64) {
        self.gen = self.gen.wrapping_add(1);
        let conn = UConn {
            fd,
            session: Session::new(proto),
            out: Vec::new(),
            sending: false,
            closing: false,
            last: Instant::now(),
            gen: self.gen,
        };
        let slot = match self.free.pop() {
            Some(i) => {
                self.conns[i] = Some(conn);
                i
            }
            None => {
                self.conns.push(Some(conn));
                self.conns.len() - 1
            }
        };
        (slot, tag(slot, self.gen))
    }

    fn get(&mut self, tag: u64) -> Option<(usize, &mut UConn)> {
        let (slot, gen) = (tag as u32 as usize, (tag >> 32) as u32);
        match self.conns.get_mut(slot) {
            Some(Some(c)) if c.gen == gen => Some((slot, c)),
            _ => None,
        }
    }

    /// Closes a connection: shutdown first, so its armed multishot receive ends and the kernel
    /// drops its reference to the socket.
    fn close(&mut self, w: Worker<'_>, slot: usize) {
        if let Some(conn) = self.conns[slot].take() {
            let _ = sys::socket::shutdown(&conn.fd);
            drop(conn);
            self.free.push(slot);
            w.release();
        }
    }
}

fn tag(slot: usize, gen: u32) -> u64 {
    slot as u64 | (gen as u64) << 32
}

fn worker(w: Worker<'_>) -> Result<(), Error> {
    let mut ring = Ring::new(4096, 512, 16 * 1024).map_err(|e| Error::Io {
        what: "the uring model cannot run on this kernel (use --model epoll)".into(),
        source: e,
    })?;
    // Each ring accepts from its own listener in the server's SO_REUSEPORT group: one multishot
    // accept on a shared listener would take every connection into one ring.
    let own = own_listener(w)?;
    let listener = own.as_ref().unwrap_or(&w.ctx.listener);
    let mut spare = Acceptor::new(true);
    w.ready();
    ring.accept_multi(listener.as_fd()).map_err(io_err("io_uring accept"))?;
    let mut slots = Slots::default();
    let mut cqes: Vec<Completion> = Vec::new();
    let mut ticker = Ticker::default();
    // Set when accepting must pause (out of descriptors with nothing to drain).
    let mut rearm_accept_at: Option<Instant> = None;
    while !w.stopping() {
        if rearm_accept_at.is_some_and(|t| Instant::now() >= t) {
            rearm_accept_at = None;
            ring.accept_multi(listener.as_fd()).map_err(io_err("io_uring accept"))?;
        }
        ring.wait(if rearm_accept_at.is_some() { TICK / 10 } else { TICK })
            .map_err(io_err("io_uring_enter"))?;
        ring.completions(&mut cqes);
        w.count(Counter::Loops, 1);
        w.count(Counter::Events, cqes.len() as u64);
        for cqe in cqes.drain(..) {
            match cqe {
                Completion::Accept { conn, more } => {
                    if !on_accept(w, listener, &mut ring, &mut slots, &mut spare, conn, more)? {
                        rearm_accept_at = Some(Instant::now() + TICK / 10);
                    }
                }
                Completion::Recv { tag, data, more } => on_recv(w, &mut ring, &mut slots, tag, data, more),
                Completion::Send { tag, sent, buf } => on_send(w, &mut ring, &mut slots, tag, sent, buf),
            }
        }
        for tag in std::mem::take(&mut slots.retry) {
            if let Some((_, conn)) = slots.get(tag) {
                if !flush(&mut ring, conn, tag) {
                    slots.retry.push(tag);
                }
            }
        }
        if ticker.due() && w.ctx.cfg.idle_timeout.is_some() {
            let now = Instant::now();
            for slot in 0..slots.conns.len() {
                if slots.conns[slot].as_ref().is_some_and(|u| w.idle_expired(u.last, now)) {
                    slots.close(w, slot);
                }
            }
        }
        w.flush_syscalls();
    }
    for slot in 0..slots.conns.len() {
        slots.close(w, slot);
    }
    // The ring is torn down asynchronously and its accept holds the listener: stop it now.
    if let Some(own) = &own {
        let _ = sys::socket::shutdown(own);
    }
    Ok(())
}

/// Handles an accept completion; returns `false` when accepting must pause (out of descriptors
/// with nothing pending to drain: the kernel would fail the next accept at once).
fn on_accept(
    w: Worker<'_>,
    listener: &OwnedFd,
    ring: &mut Ring,
    slots: &mut Slots,
    spare: &mut Acceptor,
    conn: std::io::Result<OwnedFd>,
    more: bool,
) -> Result<bool, Error> {
    match conn {
        Ok(fd) => {
            if let Some(fd) = w.admit(fd) {
                w.count(Counter::Useful, 1);
                let (slot, tag) = slots.insert(fd, w.ctx.cfg.proto);
                let fd = slots.conns[slot].as_ref().expect("just inserted").fd.as_fd();
                if ring.recv_multi(fd, tag).is_err() {
                    slots.close(w, slot);
                }
            }
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE)) => {
            // Out of descriptors: drain a pending connection through the spare slot.
            if !spare.shed(listener, w) && !more {
                return Ok(false);
            }
        }
        Err(_) => w.count(Counter::AcceptLost, 1),
    }
    if !more && !w.stopping() {
        ring.accept_multi(listener.as_fd()).map_err(io_err("io_uring accept"))?;
    }
    Ok(true)
}

fn on_recv(
    w: Worker<'_>,
    ring: &mut Ring,
    slots: &mut Slots,
    tag: u64,
    data: std::io::Result<Option<RecvBuf>>,
    more: bool,
) {
    let Some((slot, conn)) = slots.get(tag) else {
        if let Ok(Some(buf)) = data {
            ring.recycle(buf);
        }
        return;
    };
    match data {
        Ok(Some(buf)) => {
            w.count(Counter::Useful, 1);
            conn.last = Instant::now();
            let fed = w.on_input(&mut conn.session, ring.buffer(&buf), &mut conn.out);
            ring.recycle(buf);
            conn.closing |= fed.close;
            let queued = flush(ring, conn, tag);
            let done = conn.closing && !conn.sending && conn.out.is_empty();
            let rearm_failed = !done && !more && ring.recv_multi(conn.fd.as_fd(), tag).is_err();
            if !queued {
                slots.retry.push(tag);
            }
            if done || rearm_failed {
                slots.close(w, slot);
            }
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
            // Every provided buffer was in use: arm the receive again.
            if !more && ring.recv_multi(conn.fd.as_fd(), tag).is_err() {
                slots.close(w, slot);
            }
        }
        // The peer finished sending; let the last replies go out, then close.
        Ok(None) if conn.sending => conn.closing = true,
        _ => slots.close(w, slot),
    }
}

fn on_send(
    w: Worker<'_>,
    ring: &mut Ring,
    slots: &mut Slots,
    tag: u64,
    sent: std::io::Result<usize>,
    mut buf: Vec<u8>,
) {
    let Some((slot, conn)) = slots.get(tag) else {
        return;
    };
    conn.sending = false;
    let Ok(n) = sent else {
        return slots.close(w, slot);
    };
    w.count(Counter::BytesOut, n as u64);
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
    if !flush(ring, conn, tag) {
        slots.retry.push(tag);
    } else if conn.closing && !conn.sending && conn.out.is_empty() {
        slots.close(w, slot);
    }
}

/// Starts a send of the pending replies unless one is in flight. `false` when the send could
/// not be queued: the replies stay in `out`, to be retried.
fn flush(ring: &mut Ring, conn: &mut UConn, tag: u64) -> bool {
    if conn.sending || conn.out.is_empty() {
        return true;
    }
    let data = std::mem::take(&mut conn.out);
    match ring.send(conn.fd.as_fd(), data, tag) {
        Ok(()) => {
            conn.sending = true;
            true
        }
        Err((_, data)) => {
            conn.out = data;
            false
        }
    }
}
