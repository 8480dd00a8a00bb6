//! # dispatch — 1 acceptor thread, N workers each with a queue and a wake-up (memcached)
//!
//! **Mechanism.** A listener thread blocks in `accept()`; for each connection it picks the next
//! worker round-robin, pushes the connection onto that worker's queue and writes its eventfd
//! (memcached writes one byte per connection to the worker's notify pipe). Each worker runs its
//! own epoll loop and owns its connections for life.
//!
//! **Product.** memcached (thread.c: dispatch_conn_new, one CQ and notify pipe per worker).
//!
//! **Trade-offs.** Like `multi-reactor`, with one wake-up per connection instead of batching and a
//! blocking accept thread; a slow request stalls only its worker.
//!
//! **Seed** (docs/seeds.md). 002 #3: acceptor + N queues + N workers, 200k QPS, twice the single reactor.

use crate::server::drivers::accept::Acceptor;
use crate::server::drivers::blocking;
use crate::server::drivers::handoff::with_mailbox_workers;
use crate::server::{io_err, Ctx, Error, Family, Model, Workers};
use crate::server::{Assign, Discipline};

pub const MODEL: Model = Model {
    name: "dispatch",
    family: Family::EpollArchitecture,
    mechanism: "blocking acceptor thread; N worker loops, each with its own queue + eventfd wake-up",
    product: "memcached",
    seed: "002 #3",
    workers: Workers::Threads,
    run,
    queueing: Discipline::PerWorker(Assign::RoundRobin),
    shards: true,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    blocking::prepare_listener(&ctx.listener).map_err(io_err("setting the accept timeout"))?;
    with_mailbox_workers(ctx, |mailboxes| {
        let mut acceptor = Acceptor::new(true);
        let mut next = 0;
        // Counted in the block of the worker the connection goes to.
        while let Some(fd) = blocking::accept(ctx.worker(next), &mut acceptor, &ctx.listener) {
            mailboxes[next].post(fd, true);
            next = (next + 1) % mailboxes.len();
        }
        Ok(())
    })
}
