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
//! **Seed** (docs/seeds.md). 000 (select is the ancestor of its epoll server).

use crate::server::drivers::evloop::accept_loop;
use crate::server::drivers::poller::Select;
use crate::server::Discipline;
use crate::server::Streams;
use crate::server::{Ctx, Error, Family, Model};

pub const MODEL: Model = Model {
    name: "select",
    family: Family::Multiplexing,
    mechanism: "one thread, select() over bit sets rebuilt every call; fds >= 1024 refused",
    product: "early single-process servers",
    seed: "000",
    run,
    queueing: Discipline::Shared,
    streams: Streams::UnderFdSetSize,
    data: crate::store::Toucher::OneThread,
    ..Model::BASE
};

/// The shared event loop over the select backend; the acceptor refuses descriptors past
/// FD_SETSIZE because the backend says it cannot watch them.
fn run(ctx: &'static Ctx) -> Result<(), Error> {
    accept_loop(ctx.worker(0), Select::new(), &ctx.listener, 1)
}
