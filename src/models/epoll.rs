//! # epoll — one thread, epoll, level- or edge-triggered
//!
//! **Mechanism.** Descriptors are registered once with `epoll_ctl`; `epoll_wait` returns only
//! the ready ones, so a wake-up costs O(ready), not O(watched). `--trigger level` (default):
//! an fd is reported while ready; one accept / one read per event, interest switched between
//! EPOLLIN and EPOLLOUT as output backs up. `--trigger edge`: reported when readiness changes;
//! registered once for IN | OUT | ET, the loop must accept and read until EAGAIN or it loses
//! the edge.
//!
//! **Product.** The core of nginx, redis, memcached, libevent and libuv on Linux.
//!
//! **Trade-offs.** Scales with idle connections; one thread, so one slow request stalls all
//! (see the epoll architectures for the multi-core designs).
//!
//! **Seed.** 000 (ET, accept until EAGAIN: 13,380 / 16,692 / 16,044 / 14,087 rps at
//! c = 1 / 10 / 100 / 1,000), 003 (poll vs epoll).

use std::os::fd::{AsRawFd, RawFd};

use crate::server::conn::{Conn, ConnTable, Ticker, Want};
use crate::server::{accept::Acceptor, io_err, Counter, Ctx, Error, Family, Model, Trigger, Workers, READ_BUF, TICK};
use crate::sys;
use crate::sys::epoll::{Epoll, Events, ET, IN, OUT, RDHUP};

/// The listener's token; connections use their fd number.
const LISTENER: u64 = u64::MAX;

pub const MODEL: Model = Model {
    name: "epoll",
    family: Family::Multiplexing,
    mechanism: "one thread, epoll_wait returns only ready fds; --trigger level|edge",
    product: "nginx, redis, libevent, libuv",
    seed: "000, 003",
    workers: Workers::None,
    one_conn_per_worker: false,
    default_max_conns: None,
    run,
};

fn run(ctx: &Ctx) -> Result<(), Error> {
    let edge = ctx.cfg.trigger == Trigger::Edge;
    let listener = &ctx.listener;
    sys::fd::set_nonblocking(listener, true).map_err(io_err("making the listener non-blocking"))?;
    let ep = Epoll::new().map_err(io_err("epoll_create"))?;
    let (listen_flags, conn_flags) = if edge {
        (IN | ET, IN | OUT | RDHUP | ET)
    } else {
        (IN, IN)
    };
    ep.add(listener, LISTENER, listen_flags)
        .map_err(io_err("registering the listener"))?;
    let c = ctx.stats.worker(0);
    let mut acceptor = Acceptor::new(true);
    let mut conns = ConnTable::new();
    let mut events = Events::with_capacity(1024);
    let mut buf = vec![0u8; READ_BUF];
    let mut ticker = Ticker::default();
    while !ctx.stopping() {
        let n = ep
            .wait(&mut events, TICK.as_millis() as i32)
            .map_err(io_err("epoll_wait"))?;
        c.add(Counter::Loops, 1);
        c.add(Counter::Events, n as u64);
        for (token, _flags) in events.iter() {
            if token == LISTENER {
                if acceptor.accept_ready(ctx, listener, c, edge, |fd| {
                    if ep.add(&fd, fd.as_raw_fd() as u64, conn_flags).is_ok() {
                        conns.insert(Conn::new(ctx, fd));
                    } else {
                        ctx.release(c);
                    }
                }) {
                    c.add(Counter::Useful, 1);
                }
                continue;
            }
            let fd = token as RawFd;
            let Some(conn) = conns.get_mut(fd) else {
                continue;
            };
            let before = conn.want();
            match conn.drive(ctx, c, &mut buf, edge) {
                Want::Close => conns.close(ctx, c, fd),
                // Level-triggered: watch for what the connection now waits for.
                want if !edge && want != before => {
                    let flags = if want == Want::Write { OUT } else { IN };
                    if ep.modify(&conn.fd, token, flags).is_err() {
                        conns.close(ctx, c, fd);
                    }
                }
                _ => {}
            }
        }
        if ticker.due() {
            conns.close_idle(ctx, c);
        }
        c.flush_syscalls();
    }
    conns.close_all(ctx, c);
    Ok(())
}
