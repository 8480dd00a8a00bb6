//! # reactor — one epoll loop does accept, I/O and handling (redis)
//!
//! **Mechanism.** A single thread runs one event loop: the listener and every connection are
//! in one epoll set; a listener event accepts up to 1,000 connections (redis's
//! `MAX_ACCEPTS_PER_CALL`, 1000 in redis 7's `connection.h`), a connection event reads, runs
//! the handler and writes, all inline.
//!
//! **Product.** redis (ae.c + ae_epoll.c), and any single-threaded libevent / libuv server.
//!
//! **Trade-offs.** No locks, no hand-offs, no context switches: the cheapest design per request,
//! and it cannot use a second core. One slow request (`--work cpu:1ms`) stalls every other
//! connection: compare with `queue-pool` and `dispatch`.
//!
//! **Seed** (docs/seeds.md). 002 #1: 100k QPS for redis's design, the baseline of the seed's comparison.

use crate::server::drivers::evloop::accept_loop;
use crate::server::drivers::poller::Epoll;
use crate::server::Discipline;
use crate::server::{Ctx, Error, Family, Model};

/// Connections accepted per listener event at most (redis: MAX_ACCEPTS_PER_CALL).
const MAX_ACCEPTS_PER_CALL: usize = 1000;

pub const MODEL: Model = Model {
    name: "reactor",
    family: Family::EpollArchitecture,
    mechanism: "one thread, one epoll loop: accept (up to 1000 per event), read, handle, write",
    product: "redis",
    seed: "002 #1",
    run,
    queueing: Discipline::Shared,
    data: crate::store::Toucher::OneThread,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    accept_loop(ctx.worker(0), Epoll::level()?, &ctx.listener, MAX_ACCEPTS_PER_CALL)
}
