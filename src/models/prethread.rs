//! # prethread — N threads blocked in accept() on one socket
//!
//! **Mechanism.** `--workers` threads are started up front; each loops: blocking `accept()` on
//! the shared listener, serve the connection to its end. Same as `prefork`, with threads.
//!
//! **Product.** Thread-pool servers with blocking I/O (Tomcat's classic BIO connector).
//!
//! **Trade-offs.** Cheaper than processes and no per-connection thread creation; concurrency is
//! still capped at the pool size and one slow client holds a thread.
//!
//! **Seed** (docs/seeds.md). muduo's table of server models; not measured in the seeds.

use crate::server::drivers::blocking;
use crate::server::Streams;
use crate::server::{io_err, workers, Ctx, Error, Family, Model, Workers};

pub const MODEL: Model = Model {
    name: "prethread",
    family: Family::Blocking,
    mechanism: "N threads each block in accept() on the shared socket, serve one connection at a time",
    product: "blocking thread pools (Tomcat BIO)",
    seed: "muduo table",
    workers: Workers::Threads,
    one_conn_per_worker: true,
    run,
    streams: Streams::OnePerWorker,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    blocking::prepare_listener(&ctx.listener).map_err(io_err("setting the accept timeout"))?;
    workers::threads(ctx, blocking::accept_and_serve)
}
