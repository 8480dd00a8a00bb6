//! A non-blocking connection driven by readiness, and the fd-indexed table of them that the
//! single-threaded event loops (select, poll, epoll, ...) share.
//!
//! `drive` does everything after a readiness event: flush pending output, read (once, or
//! until EAGAIN for edge-triggered loops), feed the protocol session, do the `--work`, write.
//! While output is pending it stops reading (back-pressure) and asks for writability.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Instant;

use super::{Counter, Counters, Ctx};
use crate::proto::Session;
use crate::sys;

/// What the connection waits for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Read,
    /// Output is pending: wait for writability (reading is paused).
    Write,
    /// Done: close it.
    Close,
}

/// One connection of an event loop.
pub struct Conn {
    pub fd: OwnedFd,
    session: Session,
    /// Output not yet taken by the kernel, from `sent` on.
    out: Vec<u8>,
    sent: usize,
    /// The session asked to close once `out` is written.
    closing: bool,
    /// Last time bytes arrived (idle timeout).
    pub last_active: Instant,
    /// What the last `drive` asked for.
    want: Want,
}

impl Conn {
    pub fn new(ctx: &Ctx, fd: OwnedFd) -> Conn {
        Conn {
            fd,
            session: Session::new(ctx.cfg.proto),
            out: Vec::new(),
            sent: 0,
            closing: false,
            last_active: Instant::now(),
            want: Want::Read,
        }
    }

    /// What the connection waits for (the interest a select / poll loop should register).
    pub fn want(&self) -> Want {
        self.want
    }

    /// Handles readiness. `buf` is the worker's read buffer; `until_eagain` reads until the
    /// socket is drained (edge-triggered), otherwise one read per event (level-triggered).
    /// Counts bytes, requests and, when anything moved, one useful event.
    pub fn drive(&mut self, ctx: &Ctx, c: Counters, buf: &mut [u8], until_eagain: bool) -> Want {
        let mut moved = false;
        let want = self.drive_inner(ctx, c, buf, until_eagain, &mut moved);
        if moved {
            c.add(Counter::Useful, 1);
        }
        self.want = want;
        want
    }

    fn drive_inner(&mut self, ctx: &Ctx, c: Counters, buf: &mut [u8], until_eagain: bool, moved: &mut bool) -> Want {
        if let Some(stop) = self.settle(c, moved) {
            return stop;
        }
        loop {
            match sys::fd::read(&self.fd, buf) {
                Ok(0) => return Want::Close,
                Ok(n) => {
                    *moved = true;
                    self.last_active = Instant::now();
                    let fed = super::on_input(ctx.cfg.work, c, &mut self.session, &buf[..n], &mut self.out);
                    self.closing |= fed.close;
                    if let Some(stop) = self.settle(c, moved) {
                        return stop;
                    }
                    if !until_eagain {
                        return Want::Read;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Want::Read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Want::Close,
            }
        }
    }

    /// Flushes pending output; `Some(want)` when the connection must stop reading: output is
    /// still pending (back-pressure), the write failed, or the session asked to close.
    fn settle(&mut self, c: Counters, moved: &mut bool) -> Option<Want> {
        match self.flush(c, moved) {
            Ok(true) if self.closing => Some(Want::Close),
            Ok(true) => None,
            Ok(false) => Some(Want::Write),
            Err(_) => Some(Want::Close),
        }
    }

    /// Writes pending output; `Ok(true)` when all of it went out.
    fn flush(&mut self, c: Counters, moved: &mut bool) -> io::Result<bool> {
        while self.sent < self.out.len() {
            match sys::fd::write(&self.fd, &self.out[self.sent..]) {
                Ok(n) => {
                    *moved = true;
                    self.sent += n;
                    c.add(Counter::BytesOut, n as u64);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.sent = 0;
        Ok(true)
    }
}

/// Connections of one event loop, indexed by descriptor number.
#[derive(Default)]
pub struct ConnTable {
    slots: Vec<Option<Conn>>,
    len: usize,
}

impl ConnTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a connection under its descriptor number, which it returns.
    pub fn insert(&mut self, conn: Conn) -> RawFd {
        let fd = conn.fd.as_raw_fd();
        let i = fd as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        if self.slots[i].replace(conn).is_none() {
            self.len += 1;
        }
        fd
    }

    #[inline]
    pub fn get_mut(&mut self, fd: RawFd) -> Option<&mut Conn> {
        self.slots.get_mut(fd as usize).and_then(Option::as_mut)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Descriptors of the open connections, in increasing order.
    pub fn fds(&self) -> impl Iterator<Item = RawFd> + '_ {
        self.iter().map(|(fd, _)| fd)
    }

    /// `(fd, connection)` pairs, in increasing fd order.
    pub fn iter(&self) -> impl Iterator<Item = (RawFd, &Conn)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|c| (i as RawFd, c)))
    }

    /// Closes one connection (the kernel drops it from any epoll set) and counts it.
    pub fn close(&mut self, ctx: &Ctx, c: Counters, fd: RawFd) {
        if let Some(slot) = self.slots.get_mut(fd as usize) {
            if slot.take().is_some() {
                self.len -= 1;
                ctx.release(c);
            }
        }
    }

    /// Closes connections idle past `--idle-timeout`; returns how many.
    pub fn close_idle(&mut self, ctx: &Ctx, c: Counters) -> usize {
        if ctx.cfg.idle_timeout.is_none() || self.len == 0 {
            return 0;
        }
        let now = Instant::now();
        let idle: Vec<RawFd> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                s.as_ref()
                    .filter(|conn| ctx.idle_expired(conn.last_active, now))
                    .map(|_| i as RawFd)
            })
            .collect();
        for &fd in &idle {
            self.close(ctx, c, fd);
        }
        idle.len()
    }

    /// Closes everything (shutdown).
    pub fn close_all(&mut self, ctx: &Ctx, c: Counters) {
        let fds: Vec<RawFd> = self.fds().collect();
        for fd in fds {
            self.close(ctx, c, fd);
        }
    }
}

/// Runs `f` at most once per [`super::TICK`]: the periodic idle sweep of event loops.
pub struct Ticker {
    next: Instant,
}

impl Default for Ticker {
    fn default() -> Self {
        Ticker {
            next: Instant::now() + super::TICK,
        }
    }
}

impl Ticker {
    /// `true` when a tick has passed since the last `true`.
    pub fn due(&mut self) -> bool {
        let now = Instant::now();
        if now >= self.next {
            self.next = now + super::TICK;
            true
        } else {
            false
        }
    }
}
