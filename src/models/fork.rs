//! # fork — one process per connection
//!
//! **Mechanism.** The master blocks in `accept()` and `fork()`s a child for each connection;
//! the child closes the listener, serves the connection and exits. The master reaps children
//! and, on SIGTERM, waits for all of them.
//!
//! **Product.** inetd, the ancestor of Apache's prefork; CGI.
//!
//! **Trade-offs.** Total isolation; every connection pays a fork (page tables, copy-on-write
//! faults) and an exit, so short connections are slow, and processes are the most expensive unit
//! of concurrency. `--max-conns` defaults to 1,000 live children.
//!
//! **Seed** (docs/seeds.md). 000: 2,415 / 2,531 / 2,501 / 1,582 / 1,396 rps at c = 1 / 10 / 100 / 500 / 1,000.

use crate::server::drivers::blocking;
use crate::server::Discipline;
use crate::server::Streams;
use crate::server::{io_err, workers, Counter, Ctx, Error, Family, Model};
use crate::sys;

pub const MODEL: Model = Model {
    name: "fork",
    family: Family::Blocking,
    mechanism: "blocking accept, fork() a child process to serve each connection",
    product: "inetd, CGI",
    seed: "000",
    default_max_conns: Some(1000),
    run,
    queueing: Discipline::PerConnection,
    streams: Streams::ProcessEach,
    data: crate::store::Toucher::Processes,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    let (w, mut accepting) = blocking::Accepting::start(ctx)?;
    let mut children = 0usize;
    while let Some(fd) = accepting.next() {
        // The child serves the connection; the parent's copy of it is closed when the closure
        // is dropped here.
        let forked = workers::fork_child("a connection's child", || {
            // The child must not hold the listener: it stops listening with the master.
            sys::fd::replace_with_null(&ctx.listener).map_err(io_err("closing the inherited listener"))?;
            blocking::serve(w, fd);
            Ok(())
        });
        match forked {
            Ok(_) => children += 1,
            Err(_) => {
                w.count(Counter::SpawnFailed, 1);
                w.release();
            }
        }
        // Reap whoever has finished, without blocking (the metrics endpoint is not a
        // connection's).
        while let Ok(Some((pid, _))) = sys::process::wait(-1, true) {
            children -= usize::from(!ctx.not_the_designs(pid));
        }
    }
    // Stopping: children see the shared stop flag within a tick, close and exit.
    while children > 0 {
        match sys::process::wait(-1, false) {
            Ok(Some((pid, _))) => children -= usize::from(!ctx.not_the_designs(pid)),
            Ok(None) => break,
            Err(_) => {}
        }
    }
    Ok(())
}
