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

use crate::server::drivers::handoff::{accept_in_turn, with_mailbox_workers};
use crate::server::{io_err, Ctx, Error, Family, Model, Workers};
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
    shards: true,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    // The base loop holds the listener only; its wake-ups count in worker 0's block.
    with_mailbox_workers(ctx, |mailboxes| accept_in_turn(ctx, mailboxes))
}
