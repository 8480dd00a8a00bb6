//! # procs-accept — master + N worker processes, each its own epoll on the shared socket (nginx)
//!
//! **Mechanism.** The master binds, forks `--workers` processes and supervises them (a worker
//! that dies is replaced). Each worker runs its own epoll loop and accepts from the inherited
//! listener. `--accept` picks how they share it:
//! - `all`: every worker watches the listener; each connection wakes them all (thundering herd,
//!   visible as `accept_lost`).
//! - `exclusive`: EPOLLEXCLUSIVE; the kernel wakes one waiter per connection.
//! - `mutex`: nginx's accept_mutex, a lock in shared memory. Only its holder watches the
//!   listener; a worker with more than 7/8 of its share of connections skips trying for a while
//!   (`ngx_accept_disabled`).
//!
//! **Product.** nginx (master / worker processes; accept_mutex, then EPOLLEXCLUSIVE, then reuseport).
//!
//! **Trade-offs.** Processes isolate crashes (one dead worker loses only its connections); the
//! herd or the lock costs wake-ups and skews the spread of connections.
//!
//! **Seed** (docs/seeds.md). 002 #4 (described, not measured).

use std::os::fd::AsFd;
use std::sync::atomic::Ordering;

use crate::server::drivers::accept::Acceptor;
use crate::server::drivers::evloop::{serve_listener, EventLoop, LISTENER};
use crate::server::drivers::poller::Epoll;
use crate::server::Discipline;
use crate::server::{io_err, workers, AcceptGuard, Ctx, Error, Family, Flag, Model, Worker, Workers};
use crate::sys;

pub const MODEL: Model = Model {
    name: "procs-accept",
    family: Family::EpollArchitecture,
    mechanism: "master forks N workers, each epoll + accept on the shared socket; --accept all|exclusive|mutex",
    product: "nginx",
    seed: "002 #4",
    workers: Workers::Processes,
    flags: &[Flag::Accept],
    run,
    // Its spread depends on --accept (EPOLLEXCLUSIVE wake-ups, or nginx's balancing mutex): not
    // modelled.
    queueing: Discipline::Unknown,
    data: crate::store::Toucher::Processes,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    workers::processes(ctx, worker, true)
}

/// One worker process: the shared event loop, watching the listener as `--accept` says.
fn worker(w: Worker<'static>) -> Result<(), Error> {
    let listener = &w.ctx.listener;
    let ev = EventLoop::new(w, Epoll::level()?);
    match w.ctx.cfg.accept.unwrap_or(AcceptGuard::Exclusive) {
        AcceptGuard::All => serve_listener(ev, listener, 1, |ev| ev.watch(listener, LISTENER)),
        AcceptGuard::Exclusive => serve_listener(ev, listener, 1, |ev| {
            ev.poller
                .register_exclusive(listener.as_fd(), LISTENER)
                .map_err(io_err("watching the listener (EPOLLEXCLUSIVE)"))
        }),
        AcceptGuard::Mutex => with_accept_mutex(ev),
    }
}

/// nginx's accept_mutex: try the lock before each wait; only the holder watches the listener.
fn with_accept_mutex(mut ev: EventLoop<'_, Epoll>) -> Result<(), Error> {
    let ctx = ev.w.ctx;
    let lock = ctx.stats.accept_mutex();
    let me = sys::process::pid() as u64;
    let share = (ctx.max_conns / ctx.workers).max(8) as i64;
    let mut acceptor = Acceptor::new(true);
    let mut accept = |ev: &mut EventLoop<Epoll>, _listener: u64| ev.accept_from(&mut acceptor, &ctx.listener, 1);
    let mut watching = false;
    let mut disabled: i64 = 0;
    while !ctx.stopping() {
        let busy = disabled > 0 || ctx.share_full(ev.connections());
        disabled = (disabled - 1).max(0);
        if busy {
            // Too busy, or holding this process's share of connections: leave the lock.
            if watching {
                ev.unwatch(&ctx.listener)?;
                watching = false;
            }
        } else if lock
            .compare_exchange(0, me, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            if !watching {
                ev.watch(&ctx.listener, LISTENER)?;
                watching = true;
            }
        } else if watching {
            ev.unwatch(&ctx.listener)?;
            watching = false;
        }
        let before = ev.connections();
        ev.turn(&mut accept)?;
        let _ = lock.compare_exchange(me, 0, Ordering::AcqRel, Ordering::Relaxed);
        if ev.connections() > before {
            // Recomputed on accept, as nginx does: connection_n / 8 - free_connection_n.
            disabled = share / 8 - (share - ev.connections() as i64);
        }
    }
    let _ = lock.compare_exchange(me, 0, Ordering::AcqRel, Ordering::Relaxed);
    ev.close_all();
    Ok(())
}
