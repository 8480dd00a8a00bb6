//! # poll — one thread, poll()
//!
//! **Mechanism.** Each iteration fills an array of `pollfd` (the listener and every connection,
//! asking for POLLIN or POLLOUT), calls `poll()`, then walks the whole array for `revents`.
//! No FD_SETSIZE limit, but still O(n) per wake-up in the kernel and in the loop.
//!
//! **Product.** Portable servers before epoll / kqueue; many small daemons.
//!
//! **Trade-offs.** Fine with few connections or when most are busy; with many idle connections
//! nearly every entry scanned is idle. Seed 003's valgrind count: 0.48 % of poll's loop passes
//! found work, against 100 % for epoll. `events` here counts entries examined, so
//! `useful_events / events` is that ratio.
//!
//! **Seed.** 003: 20,000 conns, 1 s think: poll 6,665 ops/s at 65 % CPU vs epoll 6,871 at 8.6 %.

use crate::server::conn::{Conn, ConnTable, Ticker, Want};
use crate::server::{accept::Acceptor, io_err, Counter, Ctx, Error, Family, Model, Workers, READ_BUF, TICK};
use crate::sys;
use crate::sys::poll::{entry, PollFd, IN, OUT};
use std::os::fd::AsRawFd;

pub const MODEL: Model = Model {
    name: "poll",
    family: Family::Multiplexing,
    mechanism: "one thread, poll() over an array rebuilt every call, scanned for revents",
    product: "portable pre-epoll servers",
    seed: "003",
    workers: Workers::None,
    one_conn_per_worker: false,
    default_max_conns: None,
    reuseport: false,
    run,
};

fn run(ctx: &Ctx) -> Result<(), Error> {
    let listener = &ctx.listener;
    sys::fd::set_nonblocking(listener, true).map_err(io_err("making the listener non-blocking"))?;
    let c = ctx.stats.worker(0);
    let mut acceptor = Acceptor::new(true);
    let mut conns = ConnTable::new();
    let mut buf = vec![0u8; READ_BUF];
    let mut ticker = Ticker::default();
    let mut fds: Vec<PollFd> = Vec::new();
    while !ctx.stopping() {
        fds.clear();
        fds.push(entry(listener.as_raw_fd(), IN));
        fds.extend(
            conns
                .iter()
                .map(|(fd, conn)| entry(fd, if conn.want() == Want::Write { OUT } else { IN })),
        );
        sys::poll::poll(&mut fds, TICK.as_millis() as i32).map_err(io_err("poll"))?;
        c.add(Counter::Loops, 1);
        c.add(Counter::Events, fds.len() as u64);
        for p in &fds[1..] {
            if p.revents == 0 {
                continue;
            }
            let conn = conns.get_mut(p.fd).expect("polled fd is in the table");
            if conn.drive(ctx, c, &mut buf, false) == Want::Close {
                conns.close(ctx, c, p.fd);
            }
        }
        if fds[0].revents != 0
            && acceptor.accept_ready(ctx, listener, c, 1, |fd| {
                conns.insert(Conn::new(ctx, fd));
            })
        {
            c.add(Counter::Useful, 1);
        }
        if ticker.due() {
            conns.close_idle(ctx, c);
        }
        c.flush_syscalls();
    }
    conns.close_all(ctx, c);
    Ok(())
}
