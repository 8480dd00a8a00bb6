//! # select — one thread, select()
//!
//! **Mechanism.** Each iteration builds two bit sets (read interest, write interest) holding the
//! listener and every connection, calls `select()`, then tests every connection's bit. The
//! kernel and the loop both scan all descriptors on every call: O(n) per wake-up.
//!
//! **Product.** Early single-process servers, portable code (select exists everywhere).
//!
//! **Trade-offs.** No threads, no locks; the sets are rebuilt on every call, and descriptors at
//! or above FD_SETSIZE (1024) cannot be watched at all: setting their bit corrupts memory in C.
//! Here such connections are refused (closed and counted as `rejected_fdsetsize`) and the rest
//! keep working.
//!
//! **Seed.** 000 (select is the ancestor of its epoll server).

use std::os::fd::AsRawFd;

use crate::server::conn::{Conn, ConnTable, Ticker, Want};
use crate::server::{accept::Acceptor, io_err, Counter, Ctx, Error, Family, Model, Workers, READ_BUF, TICK};
use crate::sys;
use crate::sys::select::{FdSet, FD_SETSIZE};

pub const MODEL: Model = Model {
    name: "select",
    family: Family::Multiplexing,
    mechanism: "one thread, select() over bit sets rebuilt every call; fds >= 1024 refused",
    product: "early single-process servers",
    seed: "000",
    workers: Workers::None,
    one_conn_per_worker: false,
    default_max_conns: None,
    reuseport: false,
    run,
};

fn run(ctx: &Ctx) -> Result<(), Error> {
    let listener = &ctx.listener;
    sys::fd::set_nonblocking(listener, true).map_err(io_err("making the listener non-blocking"))?;
    let lfd = listener.as_raw_fd();
    let c = ctx.stats.worker(0);
    let mut acceptor = Acceptor::new(true).refuse_fds_from(FD_SETSIZE);
    let mut conns = ConnTable::new();
    let mut buf = vec![0u8; READ_BUF];
    let mut ticker = Ticker::default();
    while !ctx.stopping() {
        let (mut rd, mut wr) = (FdSet::new(), FdSet::new());
        rd.insert(lfd);
        let mut max_fd = lfd;
        for (fd, conn) in conns.iter() {
            if conn.want() == Want::Write {
                wr.insert(fd)
            } else {
                rd.insert(fd)
            };
            max_fd = max_fd.max(fd);
        }
        sys::select::select(max_fd + 1, &mut rd, &mut wr, TICK).map_err(io_err("select"))?;
        c.add(Counter::Loops, 1);
        // The loop examines every watched descriptor, ready or not.
        c.add(Counter::Events, conns.len() as u64 + 1);
        if rd.contains(lfd)
            && acceptor.accept_ready(ctx, listener, c, 1, |fd| {
                conns.insert(Conn::new(ctx, fd));
            })
        {
            c.add(Counter::Useful, 1);
        }
        let ready: Vec<i32> = conns.fds().filter(|&fd| rd.contains(fd) || wr.contains(fd)).collect();
        for fd in ready {
            let conn = conns.get_mut(fd).expect("ready fd is in the table");
            if conn.drive(ctx, c, &mut buf, false) == Want::Close {
                conns.close(ctx, c, fd);
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
