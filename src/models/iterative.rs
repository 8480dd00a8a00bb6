//! # iterative — one connection at a time
//!
//! **Mechanism.** One process, one thread: block in `accept()`, serve that connection until it
//! closes, then accept the next. Everything else waits in the listen backlog.
//!
//! **Product.** None in production; it is the textbook baseline every other model improves on.
//!
//! **Trade-offs.** No concurrency cost at all (no context switches, no locks), so with
//! one-request connections it is fast; a single slow or keep-alive client blocks everyone, and
//! clients beyond the backlog time out.
//!
//! **Seed** (docs/seeds.md). 000: 13,870 / 18,187 / 17,195 rps at ab -c 1 / 10 / 100; timeouts at c=150.

use crate::server::drivers::blocking;
use crate::server::Streams;
use crate::server::{io_err, Ctx, Error, Family, Model};

pub const MODEL: Model = Model {
    name: "iterative",
    family: Family::Blocking,
    mechanism: "one thread: blocking accept, serve the connection to its end, repeat",
    product: "- (textbook baseline)",
    seed: "000",
    one_conn_per_worker: true,
    run,
    streams: Streams::OnePerWorker,
    data: crate::store::Toucher::OneThread,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    blocking::prepare_listener(&ctx.listener).map_err(io_err("setting the accept timeout"))?;
    blocking::accept_and_serve(ctx.worker(0))
}
