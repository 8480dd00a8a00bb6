//! # prefork — N processes blocked in accept() on one socket
//!
//! **Mechanism.** The master binds, then forks `--workers` processes; each loops: blocking
//! `accept()` on the shared listener, serve the connection to its end. The kernel hands each
//! connection to one sleeping acceptor (no thundering herd for blocking accept since 2.6).
//! The master only supervises and, on SIGTERM, waits for every worker.
//!
//! **Product.** Apache's prefork MPM, gunicorn's sync workers.
//!
//! **Trade-offs.** Workers are isolated (a crash kills one connection) and need no locks;
//! concurrency is capped at the number of processes, each costs megabytes, and a keep-alive
//! client pins a whole process.
//!
//! **Seed** (docs/seeds.md). muduo's table of server models (Apache prefork); not measured in the seeds.

use crate::server::drivers::blocking;
use crate::server::Streams;
use crate::server::{io_err, workers, Ctx, Error, Family, Model, Workers};

pub const MODEL: Model = Model {
    name: "prefork",
    family: Family::Blocking,
    mechanism: "N forked processes each block in accept() on the shared socket, serve one connection at a time",
    product: "Apache prefork, gunicorn sync",
    seed: "muduo table",
    workers: Workers::Processes,
    one_conn_per_worker: true,
    run,
    streams: Streams::OnePerWorker,
    data: crate::store::Toucher::Processes,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    blocking::prepare_listener(&ctx.listener).map_err(io_err("setting the accept timeout"))?;
    workers::processes(ctx, blocking::accept_and_serve, false)
}
