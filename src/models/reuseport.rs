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
//! **Seed.** Not in the seeds; the modern answer to seed 002's accept designs.

use crate::server::evloop::{EventLoop, LISTENER};
use crate::server::{accept::Acceptor, io_err, workers, Ctx, Error, Family, Model, Workers};
use crate::sys;
use crate::sys::epoll::IN;

pub const MODEL: Model = Model {
    name: "reuseport",
    family: Family::EpollArchitecture,
    mechanism: "N threads, each its own SO_REUSEPORT listener on the same port and its own epoll",
    product: "nginx reuseport, envoy",
    seed: "-",
    workers: Workers::Threads,
    one_conn_per_worker: false,
    default_max_conns: None,
    reuseport: true,
    run,
};

fn run(ctx: &Ctx) -> Result<(), Error> {
    workers::threads(ctx, |ctx, i| {
        // Worker 0 uses the server's listener (bound with SO_REUSEPORT); the others join its group.
        let own = match i {
            0 => None,
            _ => Some(
                sys::socket::listen(ctx.addr, ctx.cfg.backlog, true).map_err(io_err(format!("worker {i}: listen")))?,
            ),
        };
        let listener = own.as_ref().unwrap_or(&ctx.listener);
        sys::fd::set_nonblocking(listener, true).map_err(io_err("making a listener non-blocking"))?;
        let mut ev = EventLoop::new(ctx, i, false)?;
        ev.watch(listener, LISTENER, IN)?;
        let mut acceptor = Acceptor::new(true);
        ctx.worker_ready(i);
        ev.run(|ev, _listener| ev.accept_from(&mut acceptor, listener, 1))
    })
}
