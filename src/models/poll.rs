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
//! **Seed** (docs/seeds.md). 003: 20,000 conns, 1 s think: poll 6,665 ops/s at 65 % CPU vs epoll 6,871 at 8.6 %.

use crate::server::drivers::evloop::accept_loop;
use crate::server::drivers::poller::Poll;
use crate::server::Discipline;
use crate::server::{Ctx, Error, Family, Model};

pub const MODEL: Model = Model {
    name: "poll",
    family: Family::Multiplexing,
    mechanism: "one thread, poll() over an array of every descriptor, scanned for revents",
    product: "portable pre-epoll servers",
    seed: "003",
    run,
    queueing: Discipline::Shared,
    data: crate::store::Toucher::OneThread,
    ..Model::BASE
};

/// The shared event loop over the poll backend.
fn run(ctx: &'static Ctx) -> Result<(), Error> {
    accept_loop(ctx.worker(0), Poll::new(), &ctx.listener, 1)
}
