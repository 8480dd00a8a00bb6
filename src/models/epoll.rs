//! # epoll — one thread, epoll, level- or edge-triggered
//!
//! **Mechanism.** Descriptors are registered once with `epoll_ctl`; `epoll_wait` returns only
//! the ready ones, so a wake-up costs O(ready), not O(watched). `--trigger level` (default):
//! an fd is reported while ready; one accept / one read per event, interest switched between
//! EPOLLIN and EPOLLOUT as output backs up. `--trigger edge`: reported when readiness changes;
//! registered once for IN | OUT | ET, the loop must accept and read until EAGAIN or it loses
//! the edge.
//!
//! **Product.** The core of nginx, redis, memcached, libevent and libuv on Linux.
//!
//! **Trade-offs.** Scales with idle connections; one thread, so one slow request stalls all
//! (see the epoll architectures for the multi-core designs).
//!
//! **Seed** (docs/seeds.md). 000 (ET, accept until EAGAIN: 13,380 / 16,692 / 16,044 / 14,087 rps at
//! c = 1 / 10 / 100 / 1,000), 003 (poll vs epoll).

use crate::server::drivers::evloop::accept_loop;
use crate::server::drivers::poller::Epoll;
use crate::server::Discipline;
use crate::server::{Ctx, Error, Family, Flag, Model, Trigger};

pub const MODEL: Model = Model {
    name: "epoll",
    family: Family::Multiplexing,
    mechanism: "one thread, epoll_wait returns only ready fds; --trigger level|edge",
    product: "nginx, redis, libevent, libuv",
    seed: "000, 003",
    flags: &[Flag::Trigger],
    run,
    queueing: Discipline::Shared,
    data: crate::store::Toucher::OneThread,
    ..Model::BASE
};

/// The shared event loop over the epoll backend: one accept per listener event when
/// level-triggered, until EAGAIN when edge-triggered.
fn run(ctx: &'static Ctx) -> Result<(), Error> {
    let trigger = ctx.cfg.trigger.unwrap_or(Trigger::Level);
    accept_loop(ctx.worker(0), Epoll::new(trigger)?, &ctx.listener, 1)
}
