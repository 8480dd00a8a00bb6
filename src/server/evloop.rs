//! One worker's epoll loop: its epoll instance, its connections, its read buffer and its
//! counters. The epoll architectures differ in who accepts and how connections reach a loop;
//! what happens to a connection once it is in a loop is this file, the same for all of them.
//!
//! Connections use their fd number as token; the model registers its own descriptors
//! (listener, wake-up eventfd) with [`LISTENER`] / [`WAKE`] and handles them in `on_token`.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::accept::Acceptor;
use super::conn::{Conn, ConnTable, Ticker, Want};
use super::{io_err, Counter, Counters, Ctx, Error, READ_BUF, TICK};
use crate::sys::epoll::{Epoll, Events, ET, IN, OUT, RDHUP};

/// Token of a listening socket.
pub const LISTENER: u64 = u64::MAX;
/// Token of a wake-up eventfd.
pub const WAKE: u64 = u64::MAX - 1;

/// A worker's event loop.
pub struct EventLoop<'a> {
    pub ctx: &'a Ctx,
    /// This worker's counters.
    pub c: Counters,
    pub ep: Epoll,
    conns: ConnTable,
    events: Events,
    buf: Vec<u8>,
    ticker: Ticker,
    /// Edge-triggered: connections registered once for IN | OUT | ET, read until EAGAIN.
    edge: bool,
}

impl<'a> EventLoop<'a> {
    /// A loop counting into worker `worker`'s block.
    pub fn new(ctx: &'a Ctx, worker: usize, edge: bool) -> Result<Self, Error> {
        Ok(EventLoop {
            ctx,
            c: ctx.stats.worker(worker),
            ep: Epoll::new().map_err(io_err("epoll_create"))?,
            conns: ConnTable::new(),
            events: Events::with_capacity(1024),
            buf: vec![0u8; READ_BUF],
            ticker: Ticker::default(),
            edge,
        })
    }

    /// Registers a descriptor of the model's own (listener, eventfd) under `token`.
    pub fn watch(&self, fd: &impl AsRawFd, token: u64, flags: u32) -> Result<(), Error> {
        self.ep.add(fd, token, flags).map_err(io_err("epoll_ctl ADD"))
    }

    /// Takes a new connection into this loop.
    pub fn add(&mut self, fd: OwnedFd) {
        let flags = if self.edge { IN | OUT | RDHUP | ET } else { IN };
        if self.ep.add(&fd, fd.as_raw_fd() as u64, flags).is_ok() {
            self.conns.insert(Conn::new(self.ctx, fd));
        } else {
            self.ctx.release(self.c);
        }
    }

    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// One iteration: wait (up to a tick), hand the model's own tokens to `on_token`, drive the
    /// ready connections, sweep idle ones once per tick.
    pub fn turn(&mut self, on_token: &mut impl FnMut(&mut Self, u64)) -> Result<(), Error> {
        let mut events = std::mem::take(&mut self.events);
        let n = self
            .ep
            .wait(&mut events, TICK.as_millis() as i32)
            .map_err(io_err("epoll_wait"))?;
        self.c.add(Counter::Loops, 1);
        self.c.add(Counter::Events, n as u64);
        for (token, _flags) in events.iter() {
            if token >= WAKE {
                on_token(self, token);
            } else {
                self.drive(token as RawFd);
            }
        }
        self.events = events;
        if self.ticker.due() {
            self.conns.close_idle(self.ctx, self.c);
        }
        self.c.flush_syscalls();
        Ok(())
    }

    /// Turns until the server stops, then closes every connection.
    pub fn run(&mut self, mut on_token: impl FnMut(&mut Self, u64)) -> Result<(), Error> {
        while !self.ctx.stopping() {
            self.turn(&mut on_token)?;
        }
        self.close_all();
        Ok(())
    }

    /// Closes every connection (shutdown).
    pub fn close_all(&mut self) {
        self.conns.close_all(self.ctx, self.c);
    }

    /// Accepts up to `max` connections from `listener` into this loop (a listener event).
    pub fn accept_from(&mut self, acceptor: &mut Acceptor, listener: &impl AsRawFd, max: usize) {
        let (ctx, c) = (self.ctx, self.c);
        let mut fresh = Vec::new();
        if acceptor.accept_ready(ctx, listener, c, max, |fd| fresh.push(fd)) {
            c.add(Counter::Useful, 1);
        }
        for fd in fresh {
            self.add(fd);
        }
    }

    fn drive(&mut self, fd: RawFd) {
        let Some(conn) = self.conns.get_mut(fd) else { return };
        let before = conn.want();
        match conn.drive(self.ctx, self.c, &mut self.buf, self.edge) {
            Want::Close => self.conns.close(self.ctx, self.c, fd),
            // Level-triggered: watch for what the connection now waits for.
            want if !self.edge && want != before => {
                let flags = if want == Want::Write { OUT } else { IN };
                if self.ep.modify(&conn.fd, fd as u64, flags).is_err() {
                    self.conns.close(self.ctx, self.c, fd);
                }
            }
            _ => {}
        }
    }
}
