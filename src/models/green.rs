//! # green — goroutines: a green thread per connection, M:N over the workers
//!
//! **Mechanism.** Each connection gets a green thread (a stackful coroutine) that serves it in
//! blocking style, the same code `thread` runs. `--workers` processors, each with a run queue,
//! are held by carrier OS threads that run the green threads and steal from each other's
//! queues; a read or write that would block parks the thread at the netpoller (one epoll
//! instance) and the carrier runs the next. `cpu:` work yields every `--green-slice` (10 ms);
//! `sleep:` work is a blocking call: its carrier hands its processor to another carrier first
//! and takes one back after. The accept loop is a green thread too. (Runtime:
//! `server/green/`.)
//!
//! **Product.** Go's goroutines (net/http, every Go server); Java 21's virtual threads.
//!
//! **Trade-offs.** Blocking-style code at an event loop's cost per idle connection: a parked
//! thread holds its stack's top pages, not an OS thread. Work stealing spreads load over the
//! cores; a blocking call costs an OS thread for its length (and a hand-off), so many at once
//! mean many carriers. Preemption is cooperative: code other than muxlab's `cpu:` work holds
//! its processor until it parks. Stacks are fixed (no growth as in Go): an overflow kills the
//! process on the guard page.
//!
//! **Seed** (docs/seeds.md). Not in the seeds: the third answer to "a thread per connection,
//! or async?".

use std::time::Duration;

use crate::server::drivers::accept::{Accepted, Acceptor};
use crate::server::drivers::blocking;
use crate::server::green::{self, Parking, DEFAULT_SLICE};
use crate::server::{io_err, Counter, Ctx, Discipline, Error, Family, Flag, Model, Streams, Workers, TICK};
use crate::sys;

pub const MODEL: Model = Model {
    name: "green",
    family: Family::Completion,
    mechanism: "a green thread per connection in blocking style, M:N over the workers' run queues with stealing, parked at one epoll netpoller",
    product: "Go goroutines, Java virtual threads",
    seed: "-",
    workers: Workers::Threads,
    flags: &[Flag::GreenSlice],
    run,
    queueing: Discipline::Green,
    streams: Streams::GreenEach,
    ..Model::BASE
};

/// A green thread may move to another OS thread while parked, holding its connection: the
/// connection (its session, its buffers, its deadlines) is `Send`.
const _: () = {
    fn send<T: Send>() {}
    let _ = send::<crate::server::connection::Connection>;
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    let slice = ctx.cfg.green_slice.unwrap_or(DEFAULT_SLICE);
    green::run(ctx, slice, move |parking| accept(ctx, parking))
}

/// The accept loop, a green thread: each connection admitted gets a green thread of its own,
/// in turn counted in the workers' blocks.
fn accept(ctx: &'static Ctx, parking: &Parking) {
    let w = ctx.worker(0);
    let mut acceptor = Acceptor::new(true);
    let mut next = 0;
    while !ctx.stopping() {
        let got = acceptor.accept_one(w, &ctx.listener);
        w.count(Counter::Loops, 1);
        match got {
            Accepted::Conn(fd) => {
                w.count(Counter::Useful, 1);
                let cw = ctx.worker(next);
                next = (next + 1) % ctx.workers;
                if green::spawn(move |p| blocking::serve_waiting(cw, fd, p)).is_err() {
                    // No stack to be had: the connection was dropped with the closure.
                    w.count(Counter::SpawnFailed, 1);
                    w.release();
                }
            }
            Accepted::Refused => w.count(Counter::Useful, 1),
            Accepted::Empty => {
                parking.wait_for(&ctx.listener, sys::epoll::IN, TICK);
                w.count(Counter::Events, 1);
            }
            // Out of descriptors with the listener still readable: a pause, not a spin.
            Accepted::OutOfFds => parking.pause(Duration::from_millis(10)),
        }
        w.flush_syscalls();
    }
}
