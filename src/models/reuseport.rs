//! # reuseport — N threads, each with its own SO_REUSEPORT listener and loop
//!
//! **Mechanism.** Every worker thread binds its own listening socket to the same port with
//! SO_REUSEPORT; the kernel hashes each new connection (by its 4-tuple) to one listener, so
//! exactly one worker is woken and it never loses a race. Each worker runs its own epoll loop.
//!
//! **Product.** nginx `listen ... reuseport`, envoy, muduo's shorturl example.
//!
//! **Trade-offs.** No herd, no accept lock, no hand-off; the split is by hash, not by load, so
//! one busy worker still gets its share of new connections.
//!
//! **Seed** (docs/seeds.md). Not in the seeds; the modern answer to seed 002's accept designs.

use crate::server::drivers::accept::own_listener;
use crate::server::drivers::evloop::accept_loop;
use crate::server::drivers::poller::Epoll;
use crate::server::{workers, Ctx, Error, Family, Model, Workers};
use crate::server::{Assign, Discipline};

pub const MODEL: Model = Model {
    name: "reuseport",
    family: Family::EpollArchitecture,
    mechanism: "N threads, each its own SO_REUSEPORT listener on the same port and its own epoll",
    product: "nginx reuseport, envoy",
    seed: "-",
    workers: Workers::Threads,
    reuseport: true,
    run,
    queueing: Discipline::PerWorker(Assign::Random),
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    workers::threads(ctx, |w| {
        let own = own_listener(w)?;
        accept_loop(w, Epoll::level()?, own.as_ref().unwrap_or(&ctx.listener), 1)
    })
}
