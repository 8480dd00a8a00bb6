//! The scheduler: processors (Go's P), each with a run queue; carriers (OS threads, Go's M)
//! that run green threads while they hold one; stealing between run queues; and a blocking
//! call's hand-off.
//!
//! A carrier holding processor `p` takes its next thread from, in order: its own preempted
//! threads once the others in line have had a turn, `p`'s run queue, the global queue (where
//! the netpoller puts what it wakes), a look at the netpoller, half of another processor's run
//! queue. With none, it puts `p` on the idle list and, without a processor, either blocks in
//! the netpoller (one carrier at a time) or waits to be woken. A carrier about to block in a
//! system call puts its processor on the idle list for another carrier (woken, or started when
//! every carrier is busy), and after the call takes one back: its own if free, else any, else
//! it asks for its own and the carrier running it hands it back at its next turn.
//!
//! Preempted threads stay with their carrier (they resume on its OS thread): while it is in a
//! blocking call made by another of its threads, they wait for the call to end.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::netpoll::{Netpoll, Woken};
use super::stacks::Stacks;
use super::thread::{Body, Resume, Suspend, G};
use crate::server::Counter;
use crate::server::Ctx;
use crate::server::TICK;
use crate::server::{io_err, Error};
use crate::sync::lock;
use crate::sys;
use crate::sys::green::CoroutineResult;

/// How a green thread's body ended: how deep its stack went (what its connection's parking
/// saw), and whether it panicked.
pub(super) struct Ran {
    pub(super) deepest: usize,
    pub(super) panicked: bool,
}

/// One green runtime: a server's.
pub struct Runtime {
    ctx: &'static Ctx,
    slice: Duration,
    procs: Vec<Proc>,
    global: Mutex<VecDeque<G>>,
    idle: Mutex<Idle>,
    /// Carriers without a processor wait here for work.
    work: Condvar,
    /// Carriers back from a blocking call wait here for a processor.
    returned: Condvar,
    poll: Netpoll,
    /// A carrier is blocked in the netpoller.
    polling: AtomicBool,
    /// Green threads not finished.
    live: AtomicUsize,
    next_id: AtomicU64,
    carriers: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// Carriers alive, and blocking calls in flight.
    threads: AtomicUsize,
    in_calls: AtomicUsize,
    stacks: Stacks,
}

/// A processor: its run queue, and how many carriers back from a blocking call ask for it.
struct Proc {
    queue: Mutex<VecDeque<G>>,
    wanted: AtomicUsize,
}

/// The idle processors, the carriers without one, and those waiting to return.
#[derive(Default)]
struct Idle {
    procs: Vec<usize>,
    /// Carriers without a processor and not in a blocking call (waiting, polling, or on their
    /// way to): a hand-off starts a carrier only where there is none.
    free: usize,
    /// Of those, the ones waiting on `work`, the wake-ups sent them not yet taken, and the ones
    /// holding preempted threads.
    waiting: usize,
    woken: usize,
    stranded: usize,
    returning: usize,
}

impl Idle {
    /// An idle processor no returning carrier is owed.
    fn spare(&self) -> bool {
        self.procs.len() > self.returning
    }
}

/// A carrier's own state: the threads preempted on it (they resume here only), how many of
/// the others go before the next of them, its turns, and its poll buffers.
struct Carrier {
    preempted: VecDeque<G>,
    others_first: usize,
    /// The others were counted again once before the next preempted thread.
    recounted: bool,
    turns: u64,
    events: sys::epoll::Events,
    woken: Woken,
}

// Which runtime and processor the OS thread running now holds: a carrier's, in a
// thread-local. Read in functions never inlined, as every thread-local on a green thread's
// path (`tests/structure/` holds them to it): a thread-local's address kept by an inlined
// caller across a park could be another carrier's.

/// The runtime a carrier runs for, and the processor it holds.
type Holding = Option<(&'static Runtime, usize)>;

thread_local! {
    /// This carrier's [`Holding`].
    static HELD: std::cell::Cell<Holding> = const { std::cell::Cell::new(None) };
}

/// What this carrier holds.
#[inline(never)]
fn held() -> Holding {
    HELD.with(|h| h.get())
}

#[inline(never)]
fn hold(h: Holding) {
    HELD.with(|c| c.set(h));
}

/// Every this many turns a carrier looks at the global queue and the netpoller first.
const FAIRNESS: u64 = 61;

pub(super) fn slice() -> Option<Duration> {
    let (rt, _) = held()?;
    sys::green::inside::<Resume, Suspend>().then_some(rt.slice)
}

pub(super) fn blocking<R>(f: impl FnOnce() -> R) -> R {
    let Some((rt, p)) = held().filter(|_| sys::green::inside::<Resume, Suspend>()) else {
        return f();
    };
    hold(None);
    let now = rt.in_calls.fetch_add(1, Ordering::AcqRel) + 1;
    let w0 = rt.ctx.worker(0);
    w0.counters.raise(Counter::GreenCallsPeak, now as u64);
    w0.count(Counter::GreenHandoffs, 1);
    rt.hand_off(p);
    let r = f();
    rt.in_calls.fetch_sub(1, Ordering::AcqRel);
    let q = rt.take_back(p);
    hold(Some((rt, q)));
    r
}

/// Waits on `cv` up to a tick; whether a notification (not the tick) ended it.
fn wait<'a>(cv: &Condvar, g: MutexGuard<'a, Idle>) -> (MutexGuard<'a, Idle>, bool) {
    let (g, r) = cv.wait_timeout(g, TICK).unwrap_or_else(|e| e.into_inner());
    (g, !r.timed_out())
}

impl Runtime {
    /// Runs a green runtime of `ctx.workers` processors with `first` as its first thread,
    /// until the server stops and every thread has finished.
    pub(super) fn run(
        ctx: &'static Ctx,
        slice: Duration,
        first: impl FnOnce(sys::stack::Bounds) -> Ran + Send + 'static,
    ) -> Result<(), Error> {
        let rt: &'static Runtime = Box::leak(Box::new(Runtime {
            ctx,
            slice,
            procs: (0..ctx.workers)
                .map(|_| Proc {
                    queue: Mutex::new(VecDeque::new()),
                    wanted: AtomicUsize::new(0),
                })
                .collect(),
            global: Mutex::new(VecDeque::new()),
            idle: Mutex::new(Idle::default()),
            work: Condvar::new(),
            returned: Condvar::new(),
            poll: Netpoll::new().map_err(io_err("creating the netpoller"))?,
            polling: AtomicBool::new(false),
            live: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            carriers: Mutex::new(Vec::new()),
            threads: AtomicUsize::new(0),
            in_calls: AtomicUsize::new(0),
            stacks: Stacks::default(),
        }));
        let mut started = rt.go(first).map_err(io_err("starting the first green thread"));
        for p in 0..ctx.workers {
            if started.is_ok() {
                started = rt
                    .start_carrier(Some(p))
                    .map_err(io_err(format!("starting carrier {p}")));
            }
            if started.is_err() {
                // The carriers started stop with the server; they are joined below.
                ctx.request_stop();
                ctx.gate.leave(p);
            }
        }
        ctx.gate.arrive_and_wait(ctx.workers, &|| ctx.stopping());
        // Carriers started later (for blocking calls) add themselves: join until none is left.
        loop {
            // Popped in a statement of its own: the lock is not held through the join.
            let next = lock(&rt.carriers).pop();
            let Some(h) = next else { break };
            let _ = h.join();
        }
        started
    }

    /// Starts a green thread running `f`, from a green thread: in its processor's run queue.
    pub(super) fn spawn(f: impl FnOnce(sys::stack::Bounds) -> Ran + Send + 'static) -> std::io::Result<()> {
        match held() {
            Some((rt, _)) => rt.go(f),
            None => Err(std::io::Error::other("not on a green carrier")),
        }
    }

    /// Starts a green thread running `f` in the caller's processor's run queue (the global
    /// queue outside a carrier).
    pub(super) fn go(&'static self, f: impl FnOnce(sys::stack::Bounds) -> Ran + Send + 'static) -> std::io::Result<()> {
        let stack = self.stacks.take()?;
        let bounds = sys::stack::bounds(&stack);
        let ctx = self.ctx;
        let body: Body = sys::green::Coroutine::with_stack(stack, move |y, _: Resume| {
            sys::green::enter(y);
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(bounds))).unwrap_or(Ran {
                deepest: 0,
                panicked: true,
            });
            ctx.worker(0)
                .counters
                .raise(Counter::GreenStackPeak, ran.deepest as u64);
            if ran.panicked {
                eprintln!("muxlab: a green thread panicked: stopping the server");
                ctx.request_stop();
            }
            sys::green::leave();
        });
        let g = G {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            co: sys::green::Movable::new(body),
            resume: Resume::Go,
        };
        self.live.fetch_add(1, Ordering::AcqRel);
        match held() {
            Some((rt, p)) if std::ptr::eq(rt, self) => lock(&self.procs[p].queue).push_back(g),
            _ => lock(&self.global).push_back(g),
        }
        self.wake_one();
        Ok(())
    }

    /// Where the server stands: stopping with every thread finished.
    fn finished(&self) -> bool {
        self.ctx.stopping() && self.live.load(Ordering::Acquire) == 0
    }

    /// Starts a carrier holding processor `first`, or none (it counts as free until it takes
    /// one).
    fn start_carrier(&'static self, first: Option<usize>) -> std::io::Result<()> {
        if first.is_none() {
            lock(&self.idle).free += 1;
        }
        let spawned = std::thread::Builder::new()
            .name("green".into())
            .spawn(move || self.carrier(first));
        match spawned {
            Ok(h) => {
                let n = self.threads.fetch_add(1, Ordering::AcqRel) + 1;
                self.ctx.worker(0).counters.raise(Counter::GreenThreadsPeak, n as u64);
                lock(&self.carriers).push(h);
                Ok(())
            }
            Err(e) => {
                if first.is_none() {
                    lock(&self.idle).free -= 1;
                }
                Err(e)
            }
        }
    }

    /// A carrier's life: hold a processor and run threads, until the runtime is finished or
    /// this carrier is a spare no one needs.
    fn carrier(&'static self, first: Option<usize>) {
        if let Some(p) = first {
            self.ctx.worker(p).ready();
        }
        let mut c = Carrier {
            preempted: VecDeque::new(),
            others_first: 0,
            recounted: false,
            turns: 0,
            events: sys::epoll::Events::with_capacity(256),
            woken: Vec::new(),
        };
        let mut next = first;
        while let Some(p) = next.take().or_else(|| self.acquire(&mut c)) {
            hold(Some((self, p)));
            self.turns(&mut c);
        }
        hold(None);
        self.ctx.worker(0).flush_syscalls();
        self.threads.fetch_sub(1, Ordering::AcqRel);
        // Anyone still waiting looks again (the runtime may be finished).
        self.work.notify_all();
    }

    /// Runs threads while this carrier holds a processor.
    fn turns(&'static self, c: &mut Carrier) {
        while let Some((_, p)) = held() {
            if self.procs[p].wanted.load(Ordering::Acquire) > 0 {
                // A carrier back from a blocking call asks for it.
                self.give_up(p, c);
                return;
            }
            match self.next(p, c) {
                Some(g) => self.resume(c, g),
                None => {
                    self.give_up(p, c);
                    return;
                }
            }
        }
    }

    /// The next thread for processor `p`'s carrier.
    fn next(&self, p: usize, c: &mut Carrier) -> Option<G> {
        c.turns += 1;
        if c.others_first == 0 && !c.preempted.is_empty() {
            if c.recounted {
                c.recounted = false;
                return c.preempted.pop_front();
            }
            // Once per slice, the others that came in meanwhile (a new connection's thread,
            // what the netpoller has) go first too.
            c.recounted = true;
            self.look(c);
            c.others_first = lock(&self.procs[p].queue).len() + lock(&self.global).len();
            if c.others_first == 0 {
                c.recounted = false;
                return c.preempted.pop_front();
            }
        }
        if c.turns.is_multiple_of(FAIRNESS) {
            self.look(c);
            if let Some(g) = lock(&self.global).pop_front() {
                return Some(other(c, g));
            }
        }
        if let Some(g) = lock(&self.procs[p].queue).pop_front() {
            return Some(other(c, g));
        }
        if let Some(g) = lock(&self.global).pop_front() {
            return Some(other(c, g));
        }
        self.look(c);
        if let Some(g) = lock(&self.global).pop_front() {
            return Some(other(c, g));
        }
        if let Some(g) = self.steal(p) {
            return Some(other(c, g));
        }
        c.others_first = 0;
        c.recounted = false;
        c.preempted.pop_front()
    }

    /// A look at the netpoller without waiting: what it wakes goes to the global queue.
    fn look(&self, c: &mut Carrier) {
        self.poll.look(&mut c.events, &mut c.woken);
        self.inject(&mut c.woken);
    }

    /// Threads made runnable go to the global queue; an idle carrier is woken for them.
    fn inject(&self, woken: &mut Woken) {
        if woken.is_empty() {
            return;
        }
        lock(&self.global).extend(woken.drain(..));
        self.wake_one();
    }

    /// Half of another processor's run queue (the oldest); the first is returned, the rest
    /// go to `p`'s.
    fn steal(&self, p: usize) -> Option<G> {
        let n = self.procs.len();
        for k in 1..n {
            let victim = (p + k) % n;
            let mut taken: VecDeque<G> = {
                let mut q = lock(&self.procs[victim].queue);
                let half = q.len().div_ceil(2);
                q.drain(..half).collect()
            };
            if let Some(g) = taken.pop_front() {
                self.ctx.worker(p).count(Counter::GreenSteals, 1);
                lock(&self.procs[p].queue).extend(taken);
                return Some(g);
            }
        }
        None
    }

    /// Resumes `g` until it suspends or finishes.
    fn resume(&self, c: &mut Carrier, mut g: G) {
        let input = std::mem::replace(&mut g.resume, Resume::Go);
        let r = g.co.get_mut().resume(input);
        sys::green::leave();
        // The processor held now (a blocking call may have changed it).
        let p = held().map_or(0, |(_, p)| p);
        // What the scheduler's own calls cost (looks, arming) counts in the processor's worker.
        self.ctx.worker(p).flush_syscalls();
        match r {
            CoroutineResult::Yield(Suspend::Park { fd, events, until }) => {
                if let Some(g) = self.poll.park(g, fd, events, until) {
                    lock(&self.global).push_back(g);
                }
            }
            CoroutineResult::Yield(Suspend::Slice) => {
                // The others in line now (and what the netpoller has) go first.
                self.look(c);
                c.others_first = lock(&self.procs[p].queue).len() + lock(&self.global).len();
                c.recounted = false;
                self.ctx.worker(p).count(Counter::GreenSlices, 1);
                c.preempted.push_back(g);
            }
            CoroutineResult::Return(()) => {
                self.stacks.put(g.co.into_inner().into_stack());
                if self.live.fetch_sub(1, Ordering::AcqRel) == 1 && self.ctx.stopping() {
                    self.work.notify_all();
                    self.poll.wake();
                }
            }
        }
    }

    /// Work for a carrier without a processor: the global queue, or a run queue (an idle
    /// processor's, handed off with threads in it, or a busy one's to steal from).
    fn has_work(&self) -> bool {
        !lock(&self.global).is_empty() || self.procs.iter().any(|p| !lock(&p.queue).is_empty())
    }

    /// This carrier gives processor `p` up (nothing to run, or a returning carrier asks for
    /// it) and is free from now.
    fn give_up(&self, p: usize, c: &Carrier) {
        hold(None);
        let mut idle = lock(&self.idle);
        idle.procs.push(p);
        idle.free += 1;
        if !c.preempted.is_empty() {
            idle.stranded += 1;
        }
        if idle.returning > 0 {
            self.returned.notify_all();
        } else if idle.stranded > usize::from(!c.preempted.is_empty()) {
            // A carrier with preempted threads waits for a processor: it may be this one.
            self.work.notify_all();
        } else if self.has_work() {
            self.notify(&mut idle);
        }
    }

    /// A processor for a carrier that has none: when there is work (or its own preempted
    /// threads) and a spare processor. Meanwhile it blocks in the netpoller (if no other
    /// carrier does and it holds no preempted thread) or waits to be woken. `None` once the
    /// runtime is finished, or for a spare carrier idle a whole tick while another is free.
    fn acquire(&self, c: &mut Carrier) -> Option<usize> {
        let mut idle = lock(&self.idle);
        let stranded = !c.preempted.is_empty();
        let leave = |idle: &mut Idle| {
            idle.free -= 1;
            if stranded {
                idle.stranded -= 1;
            }
        };
        loop {
            if self.finished() {
                leave(&mut idle);
                return None;
            }
            if idle.spare() && (stranded || self.has_work()) {
                leave(&mut idle);
                return idle.procs.pop();
            }
            if !stranded && !self.polling.swap(true, Ordering::AcqRel) {
                drop(idle);
                self.poll.block(TICK, &mut c.events, &mut c.woken);
                if c.woken.is_empty() {
                    // A tick in silence: expired keys go on an idle server too.
                    self.ctx.worker(0).sweep_store();
                }
                self.polling.store(false, Ordering::Release);
                self.inject(&mut c.woken);
                idle = lock(&self.idle);
                continue;
            }
            idle.waiting += 1;
            let (mut g, notified) = wait(&self.work, idle);
            g.waiting -= 1;
            g.woken = g.woken.saturating_sub(1);
            idle = g;
            // A spare carrier (the workers' own, and one to poll, stay) with nothing to do for
            // a whole tick ends: carriers are started again when calls need them.
            let spare = idle.free > 2 && self.threads.load(Ordering::Acquire) > self.procs.len() + 1;
            if !notified && !stranded && spare && !self.has_work() {
                leave(&mut idle);
                return None;
            }
        }
    }

    /// Wakes one waiting carrier not already woken; else the one blocked in the netpoller.
    fn notify(&self, idle: &mut Idle) {
        if idle.waiting > idle.woken {
            idle.woken += 1;
            self.work.notify_one();
        } else if self.polling.load(Ordering::Acquire) {
            self.poll.wake();
        }
    }

    /// Wakes a carrier for new work, where a processor is spare.
    fn wake_one(&self) {
        let mut idle = lock(&self.idle);
        if idle.spare() {
            self.notify(&mut idle);
        }
    }

    /// A carrier enters a blocking call: `p` goes to another carrier (a free one, else a new
    /// one) so its run queue and the network go on.
    fn hand_off(&'static self, p: usize) {
        let mut idle = lock(&self.idle);
        idle.procs.push(p);
        if idle.returning > 0 {
            self.returned.notify_all();
            return;
        }
        if idle.free > 0 {
            if idle.stranded > 0 {
                self.work.notify_all();
            } else {
                self.notify(&mut idle);
            }
            return;
        }
        drop(idle);
        if self.start_carrier(None).is_err() {
            self.ctx.worker(p).count(Counter::SpawnFailed, 1);
        }
    }

    /// A carrier back from a blocking call takes a processor: `p` if it is idle, else any idle
    /// one, else it asks for `p` back and waits.
    fn take_back(&self, p: usize) -> usize {
        let mut idle = lock(&self.idle);
        idle.returning += 1;
        let mut asked = false;
        loop {
            let pick = idle
                .procs
                .iter()
                .position(|&q| q == p)
                .or_else(|| idle.procs.len().checked_sub(1));
            if let Some(i) = pick {
                let q = idle.procs.swap_remove(i);
                idle.returning -= 1;
                if asked {
                    self.procs[p].wanted.fetch_sub(1, Ordering::AcqRel);
                }
                return q;
            }
            if !asked {
                asked = true;
                self.procs[p].wanted.fetch_add(1, Ordering::AcqRel);
            }
            idle = wait(&self.returned, idle).0;
        }
    }
}

/// `g`, one of the threads that go before the next preempted one.
fn other(c: &mut Carrier, g: G) -> G {
    c.others_first = c.others_first.saturating_sub(1);
    g
}
