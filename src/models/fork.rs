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
//! **Seed.** 000: 2,415 / 2,531 / 2,501 / 1,582 / 1,396 rps at c = 1 / 10 / 100 / 500 / 1,000.

use std::os::fd::AsRawFd;

use crate::server::{accept::Acceptor, blocking, io_err, Counter, Ctx, Error, Family, Model, Workers};
use crate::sys;
use crate::sys::process::Fork;

pub const MODEL: Model = Model {
    name: "fork",
    family: Family::Blocking,
    mechanism: "blocking accept, fork() a child process to serve each connection",
    product: "inetd, CGI",
    seed: "000",
    workers: Workers::None,
    one_conn_per_worker: false,
    default_max_conns: Some(1000),
    reuseport: false,
    run,
};

fn run(ctx: &Ctx) -> Result<(), Error> {
    blocking::prepare_listener(&ctx.listener).map_err(io_err("setting the accept timeout"))?;
    let c = ctx.stats.worker(0);
    let mut acceptor = Acceptor::new(false);
    let mut children = 0usize;
    while let Some(fd) = blocking::accept(ctx, &mut acceptor, &ctx.listener, c) {
        match sys::process::fork() {
            Ok(Fork::Child) => {
                let _ = sys::signal::worker_defaults();
                sys::process::die_with_parent(sys::signal::SIGTERM);
                sys::fd::close_inherited(ctx.listener.as_raw_fd());
                blocking::serve(ctx, c, fd);
                sys::process::exit_now(0);
            }
            Ok(Fork::Parent(_)) => children += 1,
            Err(_) => {
                c.add(Counter::RejectedEmfile, 1);
                ctx.release(c);
            }
        }
        // Reap whoever has finished, without blocking.
        while let Ok(Some(_)) = sys::process::wait(-1, true) {
            children -= 1;
        }
    }
    // Stopping: children see the shared stop flag within a tick, close and exit.
    while children > 0 {
        match sys::process::wait(-1, false) {
            Ok(Some(_)) => children -= 1,
            Ok(None) => break,
            Err(_) => {}
        }
    }
    Ok(())
}
