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

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

use crate::proto::Session;
use crate::server::accept::Acceptor;
use crate::server::conn::Ticker;
use crate::server::{io_err, on_input, workers, Counter, Counters, Ctx, Error, Family, Model, Workers, TICK};
use crate::sys;
use crate::sys::uring::{adopt_accepted, Completion, Ring};

pub const MODEL: Model = Model {
    name: "uring",
    family: Family::Completion,
    mechanism:
        "io_uring per worker, own SO_REUSEPORT listener: multishot accept, multishot recv into a buffer ring, send",
    product: "liburing examples, tokio-uring, glommio",
    seed: "-",
    workers: Workers::Threads,
    one_conn_per_worker: false,
    default_max_conns: None,
    reuseport: true,
    run,
};

/// Operation kinds, in the top byte of user_data; then a generation and the slot.
const ACCEPT: u64 = 1;
const RECV: u64 = 2;
const SEND: u64 = 3;

fn ud(op: u64, slot: usize, gen: u32) -> u64 {
    op << 56 | (gen as u64 & 0xFF_FFFF) << 32 | slot as u64
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
    gen: u32,
}

fn run(ctx: &Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    let result = workers::threads(ctx, worker);
    // A multishot accept holds a reference to the listener and rings are torn down
    // asynchronously after exit: stop listening now, so nothing is accepted after the stats line.
    let _ = sys::socket::shutdown(&ctx.listener);
    result
}

/// A worker's connections, by slot.
struct Slots {
    conns: Vec<Option<UConn>>,
    free: Vec<usize>,
    gen: u32,
}

impl Slots {
    fn insert(&mut self, conn: UConn) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.conns[i] = Some(conn);
                i
            }
            None => {
                self.conns.push(Some(conn));
                self.conns.len() - 1
            }
        }
    }
    fn get(&mut self, user_data: u64) -> Option<(usize, &mut UConn)> {
        let slot = (user_data & 0xFFFF_FFFF) as usize;
        let gen = ((user_data >> 32) & 0xFF_FFFF) as u32;
        match self.conns.get_mut(slot) {
            Some(Some(c)) if c.gen & 0xFF_FFFF == gen => Some((slot, c)),
            _ => None,
        }
    }
    /// Closes a connection: shutdown first, so its armed multishot receive ends and the kernel
    /// drops its reference to the socket.
    fn close(&mut self, ctx: &Ctx, c: Counters, slot: usize) {
        if let Some(conn) = self.conns[slot].take() {
            let _ = sys::socket::shutdown(&conn.fd);
            drop(conn);
            self.free.push(slot);
            ctx.release(c);
        }
    }
}

fn worker(ctx: &Ctx, i: usize) -> Result<(), Error> {
    let c = ctx.stats.worker(i);
    let mut ring = Ring::new(4096, 512, 16 * 1024).map_err(|e| Error::Io {
        what: "the uring model cannot run on this kernel (use --model epoll)".into(),
        source: e,
    })?;
    // Worker 0 uses the server's listener (bound with SO_REUSEPORT); the others join its group,
    // so the kernel spreads new connections over the rings.
    let own = match i {
        0 => None,
        _ => Some(sys::socket::listen(ctx.addr, ctx.cfg.backlog, true).map_err(io_err(format!("worker {i}: listen")))?),
    };
    let lst = own.as_ref().unwrap_or(&ctx.listener);
    sys::fd::set_nonblocking(lst, true).map_err(io_err("making a listener non-blocking"))?;
    let listener = lst.as_raw_fd();
    let mut spare = Acceptor::new(true);
    ctx.worker_ready(i);
    ring.accept_multi(listener, ud(ACCEPT, 0, 0))
        .map_err(io_err("io_uring accept"))?;
    let mut slots = Slots {
        conns: Vec::new(),
        free: Vec::new(),
        gen: 0,
    };
    let mut cqes: Vec<Completion> = Vec::new();
    let mut ticker = Ticker::default();
    // Set when accepting must pause (out of descriptors with nothing to drain).
    let mut rearm_accept_at: Option<Instant> = None;
    while !ctx.stopping() {
        if rearm_accept_at.is_some_and(|t| Instant::now() >= t) {
            rearm_accept_at = None;
            ring.accept_multi(listener, ud(ACCEPT, 0, 0))
                .map_err(io_err("io_uring accept"))?;
        }
        ring.wait(if rearm_accept_at.is_some() { TICK / 10 } else { TICK })
            .map_err(io_err("io_uring_enter"))?;
        ring.completions(&mut cqes);
        c.add(Counter::Loops, 1);
        c.add(Counter::Events, cqes.len() as u64);
        for cqe in &cqes {
            match cqe.user_data >> 56 {
                ACCEPT if !on_accept(ctx, c, lst, &mut ring, &mut slots, &mut spare, cqe)? => {
                    rearm_accept_at = Some(Instant::now() + TICK / 10);
                }
                ACCEPT => {}
                RECV => on_recv(ctx, c, &mut ring, &mut slots, cqe),
                SEND => on_send(ctx, c, &mut ring, &mut slots, cqe),
                _ => {}
            }
        }
        if ticker.due() && ctx.cfg.idle_timeout.is_some() {
            let now = Instant::now();
            for slot in 0..slots.conns.len() {
                if slots.conns[slot]
                    .as_ref()
                    .is_some_and(|u| ctx.idle_expired(u.last, now))
                {
                    slots.close(ctx, c, slot);
                }
            }
        }
        c.flush_syscalls();
    }
    for slot in 0..slots.conns.len() {
        slots.close(ctx, c, slot);
    }
    // The ring is torn down asynchronously and its accept holds the listener: stop it now.
    if let Some(own) = &own {
        let _ = sys::socket::shutdown(own);
    }
    Ok(())
}

/// Handles an accept completion; returns `false` when accepting must pause (out of descriptors
/// with nothing pending to drain: the kernel would fail the next accept at once).
#[allow(clippy::too_many_arguments)]
fn on_accept(
    ctx: &Ctx,
    c: Counters,
    listener: &OwnedFd,
    ring: &mut Ring,
    slots: &mut Slots,
    spare: &mut Acceptor,
    cqe: &Completion,
) -> Result<bool, Error> {
    if cqe.result >= 0 {
        let fd = adopt_accepted(cqe.result);
        if let Some(fd) = ctx.admit(c, fd) {
            c.add(Counter::Useful, 1);
            slots.gen = slots.gen.wrapping_add(1);
            let conn = UConn {
                fd,
                session: Session::new(ctx.cfg.proto),
                out: Vec::new(),
                sending: false,
                closing: false,
                last: Instant::now(),
                gen: slots.gen,
            };
            let raw = conn.fd.as_raw_fd();
            let gen = conn.gen;
            let slot = slots.insert(conn);
            if ring.recv_multi(raw, ud(RECV, slot, gen)).is_err() {
                slots.close(ctx, c, slot);
            }
        }
    } else if matches!(-cqe.result, libc::EMFILE | libc::ENFILE) {
        // Out of descriptors: drain a pending connection through the spare slot.
        if !spare.shed(listener, c) && !cqe.more {
            return Ok(false);
        }
    } else {
        c.add(Counter::AcceptLost, 1);
    }
    if !cqe.more && !ctx.stopping() {
        ring.accept_multi(listener.as_raw_fd(), ud(ACCEPT, 0, 0))
            .map_err(io_err("io_uring accept"))?;
    }
    Ok(true)
}

fn on_recv(ctx: &Ctx, c: Counters, ring: &mut Ring, slots: &mut Slots, cqe: &Completion) {
    let Some((slot, conn)) = slots.get(cqe.user_data) else {
        if let Some(bid) = cqe.buffer {
            ring.recycle(bid);
        }
        return;
    };
    if cqe.result > 0 {
        let bid = cqe.buffer.expect("a receive with data names its buffer");
        let n = cqe.result as usize;
        c.add(Counter::Useful, 1);
        conn.last = Instant::now();
        let fed = on_input(ctx.cfg.work, c, &mut conn.session, ring.buffer(bid, n), &mut conn.out);
        ring.recycle(bid);
        conn.closing |= fed.close;
        flush(ring, slot, conn);
        if conn.closing && !conn.sending && conn.out.is_empty() {
            return slots.close(ctx, c, slot);
        }
        if !cqe.more {
            let (raw, gen) = (conn.fd.as_raw_fd(), conn.gen);
            if ring.recv_multi(raw, ud(RECV, slot, gen)).is_err() {
                slots.close(ctx, c, slot);
            }
        }
    } else if cqe.result == -libc::ENOBUFS {
        // Every provided buffer was in use: arm the receive again.
        let (raw, gen) = (conn.fd.as_raw_fd(), conn.gen);
        if !cqe.more && ring.recv_multi(raw, ud(RECV, slot, gen)).is_err() {
            slots.close(ctx, c, slot);
        }
    } else if conn.sending && cqe.result == 0 {
        // The peer finished sending; let the last replies go out, then close.
        conn.closing = true;
    } else {
        slots.close(ctx, c, slot);
    }
}

fn on_send(ctx: &Ctx, c: Counters, ring: &mut Ring, slots: &mut Slots, cqe: &Completion) {
    let sent = ring.take_sent(cqe.user_data);
    let Some((slot, conn)) = slots.get(cqe.user_data) else {
        return;
    };
    conn.sending = false;
    let Some(mut buf) = sent else { return };
    if cqe.result < 0 {
        return slots.close(ctx, c, slot);
    }
    let n = cqe.result as usize;
    c.add(Counter::BytesOut, n as u64);
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
    flush(ring, slot, conn);
    if conn.closing && !conn.sending && conn.out.is_empty() {
        slots.close(ctx, c, slot);
    }
}

/// Starts a send of the pending replies unless one is in flight.
fn flush(ring: &mut Ring, slot: usize, conn: &mut UConn) {
    if conn.sending || conn.out.is_empty() {
        return;
    }
    let data = std::mem::take(&mut conn.out);
    if ring.send(conn.fd.as_raw_fd(), data, ud(SEND, slot, conn.gen)).is_ok() {
        conn.sending = true;
    }
}
