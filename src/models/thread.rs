//! # thread — one thread per connection
//!
//! **Mechanism.** The main thread blocks in `accept()`; each connection gets a new thread that
//! serves it with blocking reads and writes, then ends. The descriptor moves into the thread by
//! value (seed 000 passed `&connfd`, racing with the next accept).
//!
//! **Product.** Thrift's TThreadPoolServer style, classic Java servers, seed 001's echo server.
//!
//! **Trade-offs.** Simple code that scales to thousands of mostly idle connections (seed 001:
//! < 2 % throughput drop from 100 to 15,000 connections); each connection costs a stack and a
//! thread creation, and many runnable threads mean context switches.
//!
//! **Seed** (docs/seeds.md). 000 (13,108 rps at c=1, timeouts at c=10 from its backlog), 001.

use std::thread;

use crate::server::drivers::blocking;
use crate::server::Counter;
use crate::server::Discipline;
use crate::server::Streams;
use crate::server::{Ctx, Error, Family, Model};

/// Stack of a connection thread: the read buffer is on the heap, so this is plenty.
const STACK: usize = 128 * 1024;

pub const MODEL: Model = Model {
    name: "thread",
    family: Family::Blocking,
    mechanism: "blocking accept in the main thread, a new thread serves each connection",
    product: "Thrift TThreadPoolServer, classic Java servers",
    seed: "000, 001",
    run,
    queueing: Discipline::PerConnection,
    streams: Streams::ThreadEach,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    let (w, mut accepting) = blocking::Accepting::start(ctx)?;
    // The scope joins every connection thread before run returns.
    thread::scope(|s| {
        while let Some(fd) = accepting.next() {
            let spawned = thread::Builder::new()
                .stack_size(STACK)
                .spawn_scoped(s, move || blocking::serve(w, fd));
            if spawned.is_err() {
                // Out of threads: the closure (and the connection) was dropped.
                w.count(Counter::SpawnFailed, 1);
                w.release();
            }
        }
    });
    Ok(())
}
