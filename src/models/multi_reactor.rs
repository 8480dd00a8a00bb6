//! # multi-reactor — one acceptor loop, N reactor threads (muduo, netty)
//!
//! **Mechanism.** The main thread runs an epoll loop holding only the listener; it accepts and
//! hands each connection round-robin to one of `--workers` reactor threads through that
//! reactor's queue, waking it with an eventfd only when the queue was empty (one wake-up until
//! the loop runs, as netty's event loop does; muduo's `queueInLoop` writes its eventfd on every
//! call from another thread). Each reactor owns its connections for life: "one loop per
//! thread".
//!
//! **Product.** muduo's TcpServer with setThreadNum, netty's boss / worker event loop groups.
//!
//! **Trade-offs.** Accepting never competes with I/O, no herd, no locks on the I/O path; the
//! round-robin split ignores load, and a slow request stalls only its own reactor.
//!
//! **Seed** (docs/seeds.md). 002 #6: 1 acceptor + N reactors, 2M QPS on 24 cores, the fastest in the seed.

use crate::server::evloop::{EventLoop, LISTENER};
use crate::server::handoff::with_mailbox_workers;
use crate::server::poller::Epoll;
use crate::server::{accept::Accepted, accept::Acceptor, io_err, Counter, Ctx, Error, Family, Model, Workers};
use crate::server::{Assign, Discipline};
use crate::sys;

pub const MODEL: Model = Model {
    name: "multi-reactor",
    family: Family::EpollArchitecture,
    mechanism: "acceptor loop hands connections round-robin to N reactor threads (queue + eventfd)",
    product: "muduo, netty",
    seed: "002 #6",
    workers: Workers::Threads,
    run,
    queueing: Discipline::PerWorker(Assign::RoundRobin),
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    with_mailbox_workers(ctx, |mailboxes| {
        // The base loop: the listener only. Its wake-ups count in worker 0's block.
        let mut base = EventLoop::new(ctx.worker(0), Epoll::level()?);
        base.watch(&ctx.listener, LISTENER)?;
        let mut acceptor = Acceptor::new(true);
        let mut next = 0;
        base.run(|_, _listener| loop {
            let target = ctx.worker(next);
            match acceptor.accept_one(target, &ctx.listener) {
                Accepted::Conn(fd) => {
                    target.count(Counter::Useful, 1);
                    mailboxes[next].post(fd, false);
                    next = (next + 1) % mailboxes.len();
                }
                Accepted::Refused => {}
                Accepted::Empty | Accepted::OutOfFds => break,
            }
        })
    })
}
