//! # io-threads — N I/O threads around one executor (redis 6, valkey 8)
//!
//! **Mechanism.** An acceptor loop hands connections in turn to `--workers` I/O threads, each
//! an epoll loop that reads, parses and writes its connections. Every keyed command (resp,
//! memcache) goes, copied with its connection's protocol and a ticket, to the inbox of one
//! executor thread: it runs the command against its own table (`owned`: one thread touches
//! data, no lock), encodes the reply and posts it back to the I/O thread's inbox; the reply
//! goes out in its connection's order. The executor never touches a socket (asserted in debug
//! builds). An inbox is a locked list and an eventfd written only when the list was empty.
//! Both sides park when idle: the I/O threads in `epoll_wait`, the executor in `poll` on its
//! eventfd (valkey 8 parks idle I/O threads; redis 6's spin, which on two shared CPUs took
//! redis 7.0 from 88 K to 36 K GET/s here: not offered). Over http, echo, packet and h2 there is
//! no command: the I/O threads serve requests as multi-reactor's reactors do, the executor idle.
//! The stats' last worker is the executor (`keyed_executed` counts its commands).
//!
//! **Product.** redis 6 / valkey 8 with `io-threads N`.
//!
//! **Trade-offs.** Parsing and socket I/O spread over N threads while the data stays
//! single-threaded and lock-free; every command pays two hand-offs (a lock, an eventfd write
//! when the other side was idle, a wake-up) and a copy. One executor is the limit once its
//! commands' own cost fills a core.
//!
//! **Seed** (docs/seeds.md). Not in the seeds.

use crate::server::crossing::hops::{Here, Hops};
use crate::server::drivers::handoff::{accept_in_turn, with_mailbox_workers_and};
use crate::server::{io_err, Assign, Ctx, Discipline, Error, Family, Model, Worker, Workers, TICK};
use crate::sys;

pub const MODEL: Model = Model {
    name: "io-threads",
    family: Family::EpollArchitecture,
    mechanism: "acceptor loop hands connections in turn to N I/O threads that read, parse and write; one executor thread runs every keyed command against its own table, jobs and replies crossing by queues",
    product: "redis 6 / valkey 8 io-threads",
    workers: Workers::Threads,
    extra_threads: 1,
    run,
    queueing: Discipline::PerWorker(Assign::RoundRobin),
    data: crate::store::Toucher::OneThread,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    // The workers are the I/O threads, then the executor.
    let io = ctx.workers - 1;
    if ctx.store.is_some() {
        let hops = Hops::executor(io).map_err(io_err("eventfd"))?;
        let _ = ctx.hops.set(Box::leak(Box::new(hops)));
    }
    with_mailbox_workers_and(ctx, io, executor, |mailboxes| accept_in_turn(ctx, mailboxes))
}

/// The executor: takes the commands posted to its inbox, runs them, posts the replies back.
fn executor(w: Worker<'_>) -> Result<(), Error> {
    sys::forbid_socket_io();
    w.ready();
    let (mut posts, mut parked) = (Vec::new(), Default::default());
    while !w.stopping() {
        match (w.ctx.hops.get(), w.ctx.store.as_ref()) {
            (Some(hops), Some(store)) => {
                hops.inbox(w.index).wait(TICK);
                let here = Here {
                    index: w.index,
                    counters: w.counters,
                };
                hops.take(here, store, &mut posts, &mut parked, |_, _, _| {});
                here.sweep(store);
            }
            _ => std::thread::sleep(TICK),
        }
        w.flush_syscalls();
    }
    Ok(())
}
