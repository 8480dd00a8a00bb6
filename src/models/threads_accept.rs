//! # threads-accept — N threads, each its own epoll, all accepting on one socket
//!
//! **Mechanism.** `--workers` threads each run their own event loop with the shared listener
//! registered (level-triggered, no EPOLLEXCLUSIVE). A new connection wakes every idle thread;
//! one wins the accept, the others find EAGAIN (counted as `accept_lost`): the thundering herd.
//!
//! **Product.** The naive multi-threaded epoll server; what EPOLLEXCLUSIVE and SO_REUSEPORT
//! were added to the kernel to fix.
//!
//! **Trade-offs.** Uses every core with no hand-off; every connection costs N wake-ups, and
//! connections spread unevenly (whoever wakes first wins).
//!
//! **Seed** (docs/seeds.md). 002 #5 (described, not measured).

use crate::server::drivers::evloop::accept_loop;
use crate::server::drivers::poller::Epoll;
use crate::server::Discipline;
use crate::server::{workers, Ctx, Error, Family, Model, Workers};

pub const MODEL: Model = Model {
    name: "threads-accept",
    family: Family::EpollArchitecture,
    mechanism: "N threads, each with its own epoll, all watching and accepting the shared listener",
    product: "naive multi-threaded epoll servers",
    seed: "002 #5",
    workers: Workers::Threads,
    run,
    // Whoever wakes first takes the connection: a spread the wake-ups decide, not modelled.
    queueing: Discipline::Unknown,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    workers::threads(ctx, |w| accept_loop(w, Epoll::level()?, &ctx.listener, 1))
}
