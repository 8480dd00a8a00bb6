//! # offload — one event loop for I/O, a pool for the work (Netty's executeBlocking)
//!
//! **Mechanism.** One thread runs an epoll loop: it accepts, reads, parses and writes. Each
//! request's `--work` (with `--offload-over D`, only work whose mean is over D: shorter work is
//! done on the loop) is drawn on the loop and handed, with the response's ticket, to a pool of
//! `--workers` threads (default: the CPUs, at least 4, libuv's pool) through one locked queue; the request's response waits in its session
//! ([`Later::Pending`](crate::proto::later::Later::Pending)). A worker does the work, posts the
//! ticket to the loop's completion list and writes an eventfd; the loop wakes, and each
//! response goes out in its connection's order (HTTP/1.1's pipelined requests wait behind it;
//! HTTP/2's streams complete in any order). A reset HTTP/2 stream cancels its queued work (a
//! cancel that comes after a worker took the job finds nothing to cancel and keeps nothing). What
//! the session cannot answer later is served on the loop, work and all: a request with a body
//! (POST, PUT), echo and packet messages, and event streams (whose events are the loop's
//! timers), all counted `offload_inline`. `--offload-over D` keeps a request on the loop when
//! its work as drawn (not its distribution's mean) is D or less. Past 16,384 queued jobs,
//! work is done on the loop too (counted `offload_inline`): back-pressure, not a queue
//! without end. A connection that closes cancels its queued work, and a stopping server drops
//! what is still queued instead of running it (counted `offload_cancelled`).
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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::server::crossing::completions::Completions;
use crate::server::drivers::accept::Acceptor;
use crate::server::drivers::evloop::{EventLoop, LISTENER};
use crate::server::drivers::poller::Epoll;
use crate::server::request::offload::perform;
use crate::server::{io_err, workers, Counter, Ctx, Error, Family, Flag, Model, Worker, Workers};
use crate::server::{Discipline, Reserve, TICK};
use crate::server::{Job, Offloader};
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
    /// Tickets of the queued jobs still wanted. A cancelled job stays in its queue, dead,
    /// until a worker pops it and drops it; a cancel that comes after a worker took the job
    /// finds nothing here and leaves nothing behind.
    live: HashSet<u64>,
}

impl Queues {
    fn push(&mut self, job: Job, short: bool) {
        self.live.insert(job.ticket);
        match short {
            true => self.short.push_back(job),
            false => self.any.push_back(job),
        }
    }

    /// Cancels the jobs of `tickets` still queued: how many were.
    fn cancel(&mut self, tickets: &[u64]) -> usize {
        tickets.iter().filter(|t| self.live.remove(t)).count()
    }

    /// The next job for a worker: a reserved one takes short jobs only; the others the oldest
    /// of either. Dead (cancelled) jobs are dropped on the way: `popped` counts every job taken
    /// off a queue, dead or not.
    fn pop(&mut self, reserved: bool, popped: &mut usize) -> Option<Job> {
        loop {
            let job = match (reserved, self.short.front(), self.any.front()) {
                (true, _, _) => self.short.pop_front(),
                (false, Some(s), Some(a)) if a.queued < s.queued => self.any.pop_front(),
                (false, Some(_), _) => self.short.pop_front(),
                (false, None, _) => self.any.pop_front(),
            }?;
            *popped += 1;
            if self.live.remove(&job.ticket) {
                return Some(job);
            }
        }
    }
}

/// What the loop and the pool share.
struct Pool {
    queue: Mutex<Queues>,
    ready: Condvar,
    /// Where done work goes: the loop's completion queue.
    done: Completions,
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
    fn takes(&self, work: Duration) -> bool {
        (self.over.is_zero() || work > self.over) && self.waiting.load(Ordering::Relaxed) < QUEUE_MAX
    }

    fn submit(&self, w: Worker<'_>, job: Job) {
        w.count(Counter::OffloadQueued, 1);
        let short = self.reserve.is_some_and(|r| job.mean < r.under);
        let mut q = lock(&self.queue);
        self.waiting.fetch_add(1, Ordering::Relaxed);
        q.push(job, short);
        drop(q);
        // Reserved workers may not take it: wake them all, the one that can takes it.
        self.ready.notify_all();
    }

    fn cancel(&self, w: Worker<'_>, tickets: &[u64]) {
        let n = lock(&self.queue).cancel(tickets);
        w.count(Counter::OffloadCancelled, n as u64);
    }
}

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    let pool: &'static Pool = Box::leak(Box::new(Pool {
        queue: Mutex::new(Queues::default()),
        ready: Condvar::new(),
        done: Completions::new().map_err(io_err("eventfd"))?,
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
    ev.take_completions(&pool.done)?;
    let mut acceptor = Acceptor::new(true);
    ev.run(|ev, _listener| ev.accept_from(&mut acceptor, &ctx.listener, ACCEPTS_PER_EVENT))
}

/// A pool thread: takes a job, does its work, posts its ticket back to the loop.
fn work(w: Worker<'_>, pool: &Pool, reserved: bool) -> Result<(), Error> {
    w.ready();
    loop {
        let job = {
            let mut q = lock(&pool.queue);
            loop {
                if w.stopping() {
                    // Stopping: the connections are closing, and their work with them. What is
                    // still queued is dropped, not run, and counted.
                    let live: Vec<u64> = q.live.iter().copied().collect();
                    let dropped = q.cancel(&live);
                    w.count(Counter::OffloadCancelled, dropped as u64);
                    return Ok(());
                }
                let mut popped = 0;
                let job = q.pop(reserved, &mut popped);
                pool.waiting.fetch_sub(popped, Ordering::Relaxed);
                if let Some(job) = job {
                    break job;
                }
                q = wait_timeout(&pool.ready, q, TICK);
            }
        };
        w.count(Counter::OffloadWaitNs, job.queued.elapsed().as_nanos() as u64);
        if reserved {
            w.count(Counter::OffloadReserved, 1);
        }
        perform(w, &job);
        w.count(Counter::OffloadDone, 1);
        pool.done.post(job.conn, job.ticket);
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

    fn pop(q: &mut Queues, reserved: bool) -> Option<u64> {
        q.pop(reserved, &mut 0).map(|j| j.ticket)
    }

    #[test]
    fn reserved_workers_take_only_short_jobs_and_the_others_take_the_oldest() {
        let t0 = Instant::now();
        let at = |us| t0 + Duration::from_micros(us);
        let mut q = Queues::default();
        q.push(job(1, 5000, at(0)), false);
        q.push(job(2, 20, at(1)), true);
        q.push(job(3, 5000, at(2)), false);
        q.push(job(4, 20, at(3)), true);
        assert_eq!(pop(&mut q, true), Some(2), "a reserved worker skips the long one");
        assert_eq!(pop(&mut q, false), Some(1), "the oldest of either");
        assert_eq!(pop(&mut q, false), Some(3));
        assert_eq!(pop(&mut q, true), Some(4));
        assert!(pop(&mut q, true).is_none() && pop(&mut q, false).is_none());
        q.push(job(5, 5000, at(4)), false);
        assert!(
            pop(&mut q, true).is_none(),
            "a long job never goes to a reserved worker"
        );
    }

    /// A cancel that races the completion (it comes after a worker took the job) leaves
    /// nothing behind; one that comes first drops the job, which a worker passes over. The
    /// interleavings are driven step by step, not by timing.
    #[test]
    fn a_cancel_before_the_job_is_taken_drops_it_and_one_after_leaves_nothing() {
        let t0 = Instant::now();
        let mut q = Queues::default();
        // Taken, then cancelled (the reset raced the completion): nothing is kept.
        q.push(job(1, 100, t0), false);
        assert_eq!(pop(&mut q, false), Some(1));
        assert_eq!(q.cancel(&[1]), 0, "nothing queued to cancel");
        assert!(q.live.is_empty(), "the cancelled set cannot leak");
        // Cancelled while queued: the worker drops it and takes the next.
        q.push(job(2, 100, t0), false);
        q.push(job(3, 100, t0), false);
        assert_eq!(q.cancel(&[2, 2, 99]), 1);
        let mut popped = 0;
        assert_eq!(q.pop(false, &mut popped).map(|j| j.ticket), Some(3));
        assert_eq!(popped, 2, "the dead job left the queue too");
        assert!(q.live.is_empty() && q.short.is_empty() && q.any.is_empty());
        // A cancel for a ticket never queued, and one for a job the pool already finished.
        assert_eq!(q.cancel(&[7]), 0);
        assert!(q.live.is_empty());
    }
}
