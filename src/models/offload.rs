//! # offload — one event loop for I/O, a pool for the work (Netty's executeBlocking)
//!
//! **Mechanism.** One thread runs an epoll loop: it accepts, reads, parses and writes. Each
//! request's `--work` (with `--offload-over D`, only work whose mean is over D: shorter work is
//! done on the loop) is drawn on the loop and handed, with the response's ticket, to a pool of
//! `--workers` threads (default: the CPUs, at least 4, libuv's pool) through one locked queue; the request's response waits in its session
//! ([`Later::Pending`](crate::proto::later::Later::Pending)). A worker does the work, posts the
//! ticket to the loop's completion list and writes an eventfd; the loop wakes, and each
//! response goes out in its connection's order (HTTP/1.1's pipelined requests wait behind it;
//! HTTP/2's streams complete in any order). A reset HTTP/2 stream cancels its queued work. What
//! the session cannot answer later is served on the loop, work and all: a request with a body
//! (POST, PUT), echo and packet messages, and event streams (whose events are the loop's
//! timers). Past 16,384 queued jobs, work is done on the loop too: back-pressure, not a queue
//! without end. The work of a connection that closed still runs; its completion finds nothing.
//!
//! **Reservation** (`--reserve under=D:K`): K of the workers take only jobs whose work has a
//! mean under D (the short class); the others take the oldest job of any class. Short requests
//! never queue behind long ones on the reserved workers (Perséphone's DARC, SOSP '21; Minos).
//!
//! **Product.** Netty / Vert.x `executeBlocking`, tokio's `spawn_blocking`, libuv's thread
//! pool, nginx's thread pools for blocking file I/O.
//!
//! **Queueing.** `muxlab predict --model offload` simulates the pool as one shared queue and a
//! reservation as a class-aware dispatch; the loop's parsing is not in it.
//!
//! **Trade-offs.** Long or blocking work no longer stalls the other connections (compare with
//! `reactor` in `blocking-calls` and `head-of-line`); each offloaded request pays two hand-offs
//! (a lock, a condition variable, an eventfd write and a wake-up of the loop), pure overhead
//! for short uniform work. One loop parses everything: past one core's worth of I/O it is the
//! limit.
//!
//! **Seed** (docs/seeds.md). Not in the seeds.

use std::collections::{HashSet, VecDeque};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::server::evloop::{EventLoop, LISTENER, WAKE};
use crate::server::offload::{perform, Job, Offloader};
use crate::server::poller::Epoll;
use crate::server::{accept::Acceptor, io_err, workers, Counter, Ctx, Error, Family, Flag, Model, Worker, Workers};
use crate::server::{Discipline, Reserve, TICK};
use crate::sync::{lock, wait_timeout};
use crate::sys;

pub const MODEL: Model = Model {
    name: "offload",
    family: Family::EpollArchitecture,
    mechanism: "one epoll loop accepts, reads, parses and writes; each request's work goes to a pool of N threads through one queue, completions come back over an eventfd",
    product: "Netty/Vert.x executeBlocking, tokio spawn_blocking, libuv",
    workers: Workers::Threads,
    // A pool for blocking work is sized by the work, not the CPUs: libuv's default of 4.
    min_workers: 4,
    flags: &[Flag::OffloadOver, Flag::Reserve],
    run,
    queueing: Discipline::Shared,
    ..Model::BASE
};

/// Connections accepted per listener event at most.
const ACCEPTS_PER_EVENT: usize = 1000;

/// The jobs waiting: those of the short class (only with `--reserve`) and all the others.
#[derive(Default)]
struct Queues {
    short: VecDeque<Job>,
    any: VecDeque<Job>,
}

impl Queues {
    /// The next job for a worker: a reserved one takes short jobs only; the others the oldest
    /// of either.
    fn pop(&mut self, reserved: bool) -> Option<Job> {
        if reserved {
            return self.short.pop_front();
        }
        match (self.short.front(), self.any.front()) {
            (Some(s), Some(a)) if a.queued < s.queued => self.any.pop_front(),
            (Some(_), _) => self.short.pop_front(),
            (None, _) => self.any.pop_front(),
        }
    }
}

/// What the loop and the pool share.
struct Pool {
    queue: Mutex<Queues>,
    ready: Condvar,
    /// Completions for the loop, and the eventfd that wakes it for them.
    done: Mutex<Vec<(RawFd, u64)>>,
    wake: sys::eventfd::EventFd,
    /// Tickets whose responses will never be written (their streams were reset).
    cancelled: Mutex<HashSet<u64>>,
    /// `--offload-over` (zero: every request's work goes to the pool).
    over: Duration,
    reserve: Option<Reserve>,
    /// Jobs waiting in the queue: past [`QUEUE_MAX`] work is done on the loop (which then
    /// reads no more until it is done: back-pressure instead of a queue without end).
    waiting: AtomicUsize,
}

/// The most jobs the queue holds.
const QUEUE_MAX: usize = 16 * 1024;

impl Offloader for Pool {
    fn takes(&self, mean: Duration) -> bool {
        (self.over.is_zero() || mean > self.over) && self.waiting.load(Ordering::Relaxed) < QUEUE_MAX
    }

    fn submit(&self, w: Worker<'_>, job: Job) {
        w.count(Counter::OffloadQueued, 1);
        let short = self.reserve.is_some_and(|r| job.mean < r.under);
        let mut q = lock(&self.queue);
        self.waiting.fetch_add(1, Ordering::Relaxed);
        match short {
            true => q.short.push_back(job),
            false => q.any.push_back(job),
        }
        drop(q);
        // Reserved workers may not take it: wake them all, the one that can takes it.
        self.ready.notify_all();
    }

    fn cancel(&self, _: Worker<'_>, tickets: &[u64]) {
        lock(&self.cancelled).extend(tickets);
    }
}

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    let pool: &'static Pool = Box::leak(Box::new(Pool {
        queue: Mutex::new(Queues::default()),
        ready: Condvar::new(),
        done: Mutex::new(Vec::new()),
        wake: sys::eventfd::EventFd::new().map_err(io_err("eventfd"))?,
        cancelled: Mutex::new(HashSet::new()),
        over: ctx.cfg.offload_over.unwrap_or(Duration::ZERO),
        reserve: ctx.cfg.reserve,
        waiting: AtomicUsize::new(0),
    }));
    let _ = ctx.offload.set(pool);
    let reserved = ctx.cfg.reserve.map_or(0, |r| r.workers);
    workers::threads_and(
        ctx,
        |w| work(w, pool, w.index < reserved),
        || serve(ctx.worker(0), pool),
    )
}

/// The loop: accepts, drives connections, and writes the responses whose work is done.
fn serve(w: Worker<'static>, pool: &'static Pool) -> Result<(), Error> {
    let ctx = w.ctx;
    let mut ev = EventLoop::new(w, Epoll::level()?);
    ev.watch(&ctx.listener, LISTENER)?;
    ev.watch(&pool.wake, WAKE)?;
    let mut acceptor = Acceptor::new(true);
    let mut done = Vec::new();
    ev.run(|ev, token| match token {
        LISTENER => ev.accept_from(&mut acceptor, &ctx.listener, ACCEPTS_PER_EVENT),
        _ => {
            let _ = pool.wake.drain();
            std::mem::swap(&mut done, &mut *lock(&pool.done));
            for (fd, ticket) in done.drain(..) {
                ev.complete(fd, ticket);
            }
        }
    })
}

/// A pool thread: takes a job, does its work, posts its ticket back to the loop.
fn work(w: Worker<'_>, pool: &Pool, reserved: bool) -> Result<(), Error> {
    w.ready();
    loop {
        let job = {
            let mut q = lock(&pool.queue);
            loop {
                if let Some(job) = q.pop(reserved) {
                    pool.waiting.fetch_sub(1, Ordering::Relaxed);
                    break job;
                }
                if w.stopping() {
                    return Ok(());
                }
                q = wait_timeout(&pool.ready, q, TICK);
            }
        };
        {
            let mut cancelled = lock(&pool.cancelled);
            if !cancelled.is_empty() && cancelled.remove(&job.ticket) {
                w.count(Counter::OffloadCancelled, 1);
                continue;
            }
        }
        w.count(Counter::OffloadWaitNs, job.queued.elapsed().as_nanos() as u64);
        if reserved {
            w.count(Counter::OffloadReserved, 1);
        }
        perform(w, &job);
        w.count(Counter::OffloadDone, 1);
        {
            // A reset that came while the work was done: nothing to drop any more.
            let mut cancelled = lock(&pool.cancelled);
            if !cancelled.is_empty() {
                cancelled.remove(&job.ticket);
            }
        }
        lock(&pool.done).push((job.conn, job.ticket));
        let _ = pool.wake.notify();
        w.flush_syscalls();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn job(ticket: u64, mean_us: u64, queued: Instant) -> Job {
        Job {
            conn: 3,
            ticket,
            cpu: Duration::ZERO,
            wait: Duration::ZERO,
            mean: Duration::from_micros(mean_us),
            row: None,
            queued,
        }
    }

    #[test]
    fn reserved_workers_take_only_short_jobs_and_the_others_take_the_oldest() {
        let t0 = Instant::now();
        let at = |us| t0 + Duration::from_micros(us);
        let mut q = Queues::default();
        q.any.push_back(job(1, 5000, at(0)));
        q.short.push_back(job(2, 20, at(1)));
        q.any.push_back(job(3, 5000, at(2)));
        q.short.push_back(job(4, 20, at(3)));
        assert_eq!(
            q.pop(true).map(|j| j.ticket),
            Some(2),
            "a reserved worker skips the long one"
        );
        assert_eq!(q.pop(false).map(|j| j.ticket), Some(1), "the oldest of either");
        assert_eq!(q.pop(false).map(|j| j.ticket), Some(3));
        assert_eq!(q.pop(true).map(|j| j.ticket), Some(4));
        assert!(q.pop(true).is_none() && q.pop(false).is_none());
        q.any.push_back(job(5, 5000, at(4)));
        assert!(q.pop(true).is_none(), "a long job never goes to a reserved worker");
    }
}
