//! # queue-pool — 1 epoll thread, ONE locked queue, N worker threads (thrift)
//!
//! **Mechanism.** The main thread owns epoll and the listener. Connections are registered
//! EPOLLIN | EPOLLONESHOT; when one is ready the main thread takes it out of the shared table
//! and pushes it onto a single mutex-protected queue; `--workers` threads pop from it, do the
//! read, the handling and the write, put the connection back and re-arm it with EPOLL_CTL_MOD
//! (ONESHOT guarantees one thread at a time per connection).
//!
//! **Product.** Thrift's TNonblockingServer with a thread manager (THsHaServer).
//!
//! **Trade-offs.** Slow handlers (`--work`) run in parallel and do not stall the loop; every
//! request pays two hand-offs, a lock on one shared queue (contention grows with workers), a
//! condition-variable wake-up and an epoll_ctl. A connection's timeouts (its deadlines,
//! giving back buffers, an event stream's next event) are entries in the epoll thread's heap
//! (its wait times out then): the connection is queued like a ready one, and a worker that
//! arms an earlier one wakes the epoll thread through an eventfd.
//!
//! **Seed** (docs/seeds.md). 002 #2: acceptor + 1 locked queue + N workers, 60k QPS, below the single reactor.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use crate::server::drivers::accept::Acceptor;
use crate::server::drivers::conn::{Conn, ConnTable, Ticker, Want};
use crate::server::Discipline;
use crate::server::{io_err, workers, Counter, Ctx, Error, Family, Model, Worker, Workers, READ_BUF, TICK};
use crate::sync::{lock, wait_timeout};
use crate::sys;
use crate::sys::epoll::{Epoll, Events, IN, ONESHOT, OUT};
use crate::timer::Timers;

const LISTENER: u64 = u64::MAX;
const WAKE: u64 = u64::MAX - 1;

pub const MODEL: Model = Model {
    name: "queue-pool",
    family: Family::EpollArchitecture,
    mechanism: "1 epoll thread accepts and detects readiness; one locked queue; N workers do I/O (ONESHOT)",
    product: "Thrift nonblocking server",
    seed: "002 #2",
    workers: Workers::Threads,
    run,
    queueing: Discipline::Shared,
    ..Model::BASE
};

/// What the epoll thread and the workers share.
struct Shared {
    ep: Epoll,
    /// Connections not being processed, by fd.
    idle: Mutex<ConnTable>,
    /// The one queue of ready connections, each with when the poller found it ready (what its
    /// requests' time in the server counts from: their wait in this queue is inside it), and
    /// the timer entry that made it ready (`None`: readiness).
    ready: Mutex<VecDeque<(Conn, Instant, Option<Instant>)>>,
    wake: Condvar,
    /// When connections' timeouts come (each one's earliest); the eventfd that wakes the epoll
    /// thread for one earlier than it planned.
    timers: Mutex<Timers<u64>>,
    poke: sys::eventfd::EventFd,
}

fn run(ctx: &'static Ctx) -> Result<(), Error> {
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    let shared = Shared {
        ep: Epoll::new().map_err(io_err("epoll_create"))?,
        idle: Mutex::new(ConnTable::new()),
        ready: Mutex::new(VecDeque::new()),
        wake: Condvar::new(),
        timers: Mutex::new(Timers::new()),
        poke: sys::eventfd::EventFd::new().map_err(io_err("eventfd"))?,
    };
    shared
        .ep
        .add(&ctx.listener, LISTENER, IN)
        .map_err(io_err("registering the listener"))?;
    shared
        .ep
        .add(&shared.poke, WAKE, IN)
        .map_err(io_err("registering the eventfd"))?;
    let result = workers::threads_and(ctx, |w| worker(w, &shared), || poller(ctx.worker(0), &shared));
    // Every thread has stopped: close what is left, parked or queued, each with its farewell
    // (a stopping server's: an event stream's last chunk).
    let mut idle = lock(&shared.idle);
    for fd in idle.fds().collect::<Vec<_>>() {
        if let Some(conn) = idle.get_mut(fd) {
            conn.stopping();
        }
    }
    drop(idle);
    lock(&shared.ready).iter_mut().for_each(|(conn, _, _)| conn.stopping());
    let left = lock(&shared.idle).len() + lock(&shared.ready).len();
    for _ in 0..left {
        ctx.worker(0).release();
    }
    result
}

/// The epoll thread: accepts, and moves ready connections onto the queue.
fn poller(w: Worker<'_>, sh: &Shared) -> Result<(), Error> {
    let ctx = w.ctx;
    let mut acceptor = Acceptor::new(true);
    let mut events = Events::with_capacity(1024);
    let mut ticker = Ticker::default();
    let mut fired = Vec::new();
    while !ctx.stopping() {
        let timeout = lock(&sh.timers).timeout(Instant::now(), TICK);
        let n = sh.ep.wait_precise(&mut events, timeout).map_err(io_err("epoll_wait"))?;
        w.count(Counter::Loops, 1);
        w.count(Counter::Events, n as u64);
        let woke = Instant::now();
        for (token, _) in events.iter() {
            if token == WAKE {
                let _ = sh.poke.drain();
                continue;
            }
            if token == LISTENER {
                let mut fresh = Vec::new();
                if acceptor.accept_ready(w, &ctx.listener, 1, |fd| fresh.push(fd)) {
                    w.count(Counter::Useful, 1);
                }
                let mut idle = lock(&sh.idle);
                let mut timers = Vec::new();
                for fd in fresh {
                    let raw = fd.as_raw_fd();
                    if sh.ep.add(&fd, raw as u64, IN | ONESHOT).is_ok() {
                        let mut conn = Conn::new(w, fd);
                        timers.extend(conn.timer(w, woke).map(|at| (at, raw)));
                        idle.insert(conn);
                    } else {
                        w.release();
                    }
                }
                drop(idle);
                // This thread's next wait is worked out from the heap: no wake-up needed.
                let mut heap = lock(&sh.timers);
                timers.into_iter().for_each(|(at, raw)| heap.arm(at, raw as u64));
                continue;
            }
            let conn = lock(&sh.idle).take(token as RawFd);
            if let Some(conn) = conn {
                lock(&sh.ready).push_back((conn, woke, None));
                sh.wake.notify_one();
            }
        }
        let now = Instant::now();
        due(sh, now, &mut fired);
        if ticker.due(now) {
            // Entries of connections armed again go once they outnumber the connections (one
            // a worker holds keeps its entries: it may still hold one of them).
            let idle = lock(&sh.idle);
            let mut timers = lock(&sh.timers);
            if timers.len() > 2 * idle.len() + 64 {
                timers.retain(|at, token| idle.get(token as RawFd).is_none_or(|c| c.armed_for(at)));
            }
            drop((timers, idle));
            w.sweep_store();
            sys::mem::give_back();
        }
        w.flush_syscalls();
    }
    sh.wake.notify_all();
    Ok(())
}

/// A worker arms a connection's next due time: the epoll thread is woken when it is earlier
/// than any it planned for.
fn arm(sh: &Shared, at: Instant, fd: RawFd) {
    let mut timers = lock(&sh.timers);
    let earlier = timers.next().is_none_or(|e| at < e);
    timers.arm(at, fd as u64);
    drop(timers);
    if earlier {
        let _ = sh.poke.notify();
    }
}

/// Queues the connections whose timer entries came up by `now` (not the stale entries, nor a
/// connection a worker holds: it arms its next one when it puts it back).
fn due(sh: &Shared, now: Instant, fired: &mut Vec<(Instant, u64)>) {
    lock(&sh.timers).take_due(now, fired);
    for (at, token) in fired.drain(..) {
        let mut idle = lock(&sh.idle);
        if !idle.get_mut(token as RawFd).is_some_and(|c| c.armed_for(at)) {
            continue;
        }
        let conn = idle.take(token as RawFd).expect("just found");
        drop(idle);
        lock(&sh.ready).push_back((conn, now, Some(at)));
        sh.wake.notify_one();
    }
}

/// A pool thread: pop a ready connection, drive it, put it back and re-arm it.
fn worker(w: Worker<'_>, sh: &Shared) -> Result<(), Error> {
    let mut buf = vec![0u8; READ_BUF];
    w.ready();
    loop {
        let (mut conn, found, timer) = {
            let mut q = lock(&sh.ready);
            loop {
                if let Some(ready) = q.pop_front() {
                    break ready;
                }
                if w.stopping() {
                    return Ok(());
                }
                q = wait_timeout(&sh.wake, q, TICK);
            }
        };
        let fd: RawFd = conn.fd.as_raw_fd();
        let want = match timer {
            Some(at) => conn
                .on_timer(w, at, &mut buf, false, Instant::now())
                .unwrap_or(conn.want()),
            None => conn.drive_learned(w, &mut buf, Instant::now(), found),
        };
        match want {
            Want::Close => {
                conn.end(w);
                drop(conn);
                w.release();
            }
            want => {
                // A response owed later: watched for nothing (an error or hang-up only).
                let flags = match want {
                    Want::Write => OUT,
                    Want::Pending => 0,
                    _ => IN,
                };
                // Back in the table before re-arming: the next event may fire at once.
                let mut idle = lock(&sh.idle);
                idle.insert(conn);
                let parked = idle.get_mut(fd).expect("just put back");
                // An entry that came up while this worker held the connection was dropped:
                // a timer held for a time that has passed is armed again (at once).
                let next = parked.timer(w, Instant::now());
                if sh.ep.modify(&parked.fd, fd as u64, flags | ONESHOT).is_err() {
                    idle.take(fd);
                    w.release();
                } else if let Some(at) = next {
                    drop(idle);
                    arm(sh, at, fd);
                }
            }
        }
        w.flush_syscalls();
    }
}
