//! The simulation behind [`predict`](super::predict): events taken in time order — arrivals,
//! a request's CPU part ending (or its slice), its wait ending, a closed loop's next send — over
//! the client's connections, the design's queues and workers, and the CPUs shared by the
//! workers computing at once ([`Cpus`]: processor sharing or the kernel's slices). Each
//! request's CPU part is its work's and the design's own cost per request; a keyed store's
//! lock or shard hop (`keyed`) splits it, the part under the lock or at the key's owner last.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::cpu::Cpus;
use super::keyed::{Locks, Then};
pub use super::run::Run;
use super::setup::{Arrivals, Setup};
use super::time::{At, Timeline};
use super::{Assign, Discipline};
use crate::rng::Rng;

/// A request inside the server.
#[derive(Debug, Clone, Copy)]
struct Job {
    /// When the client meant to send it.
    intended: f64,
    /// Its connection (`usize::MAX`: none modelled).
    conn: usize,
    worker: usize,
    /// Its wait (a blocking call), after its CPU part.
    wait: f64,
    /// Its class (by its place in the setup's classes), and whether it was drawn yet (at its
    /// arrival where the dispatch looks at it, else when a worker takes it).
    class: usize,
    drawn: bool,
    /// What it does after the CPU part it computes now (a lock, a hop).
    then: Then,
}

const NO_CONN: usize = usize::MAX;

struct Sim<'a> {
    s: &'a Setup,
    rng: Rng,
    /// Cumulative class weights.
    classes: Vec<f64>,
    /// Each class is short (under the reservation's bound: a reserved worker takes it).
    short: Vec<bool>,
    now: f64,
    // The client.
    free: VecDeque<usize>,
    backlog: VecDeque<f64>,
    worker_of: Vec<usize>,
    // The server: one queue (shared) or one per worker, and the idle workers.
    queues: Vec<VecDeque<Job>>,
    idle: Vec<usize>,
    idle_mark: Vec<bool>,
    // Requests computing, waiting (by time), and closed-loop sends (by time).
    cpus: Cpus,
    waiting: Timeline,
    sends: Timeline,
    slots: Vec<Job>,
    spare: Vec<usize>,
    order: u64,
    // Open-loop arrivals.
    next_arrival: f64,
    arrivals_left: usize,
    // What is recorded.
    completed: usize,
    warmup: usize,
    latencies: Vec<f64>,
    by_class: Vec<Vec<f64>>,
    first_recorded: f64,
    /// A keyed store's locks (none without one).
    locks: Locks,
    /// The draws of a keyed store's keys (their stripes and owners), a stream of their own: a
    /// run with the store's lock and one without see the same arrivals.
    keys: Rng,
}

/// Simulates `setup`; `None` where it cannot be (a closed loop without connections).
pub fn simulate(setup: &Setup) -> Option<Run> {
    let closed = matches!(setup.arrivals, Arrivals::Closed { .. });
    if (closed && setup.connections.is_none()) || setup.classes.is_empty() {
        return None;
    }
    let mut sim = Sim::new(setup);
    sim.run();
    let span = sim.now - sim.first_recorded;
    Run::of(
        std::mem::take(&mut sim.latencies),
        std::mem::take(&mut sim.by_class),
        span,
    )
}

impl<'a> Sim<'a> {
    fn new(s: &'a Setup) -> Sim<'a> {
        let mut rng = Rng::new(&[s.seed, 0x51A1]);
        let total: f64 = s.classes.iter().map(|c| c.weight).sum();
        let classes = s
            .classes
            .iter()
            .scan(0.0, |acc, c| {
                *acc += c.weight / total;
                Some(*acc)
            })
            .collect();
        let conns = s.connections.unwrap_or(0);
        let workers = s.workers.max(1);
        let worker_of = (0..conns)
            .map(|c| match s.discipline {
                Discipline::PerWorker(Assign::Random) => (rng.uniform() * workers as f64) as usize % workers,
                _ => c % workers,
            })
            .collect();
        // With a reservation, two queues: the short class's, and the others'.
        let queues = match s.discipline {
            Discipline::PerWorker(_) => workers,
            _ if s.reserve.is_some() => 2,
            _ => 1,
        };
        let short = s
            .classes
            .iter()
            .map(|c| s.reserve.is_some_and(|r| c.work.mean() < r.under))
            .collect();
        let warmup = s.requests / 10;
        Sim {
            s,
            rng,
            classes,
            short,
            now: 0.0,
            free: (0..conns).collect(),
            backlog: VecDeque::new(),
            worker_of,
            queues: vec![VecDeque::new(); queues],
            idle: (0..workers).rev().collect(),
            idle_mark: vec![true; workers],
            cpus: {
                let (cpus, sharing) = s.computing();
                Cpus::new(cpus, sharing)
            },
            waiting: BinaryHeap::new(),
            sends: BinaryHeap::new(),
            slots: Vec::new(),
            spare: Vec::new(),
            order: 0,
            next_arrival: 0.0,
            arrivals_left: warmup + s.requests,
            completed: 0,
            warmup,
            latencies: Vec::with_capacity(s.requests),
            by_class: vec![Vec::new(); s.classes.len()],
            first_recorded: 0.0,
            locks: Locks::new(s.lock.as_ref().map_or(0, |l| l.stripes.len())),
            keys: Rng::new(&[s.seed, 0x4B45_5953]),
        }
    }

    fn run(&mut self) {
        if let (Arrivals::Closed { think }, Some(n)) = (self.s.arrivals, self.s.connections) {
            // Each connection's first send at a random point of one cycle (think and a mean
            // service): a real client's jitter keeps connections out of lockstep, which a
            // simulation started all at once with fixed work would never leave.
            let cycle = think.as_secs_f64() + self.s.means().0;
            for _ in 0..n {
                let c = self.free.pop_front().expect("a connection per send");
                self.order += 1;
                let at = self.rng.uniform() * cycle;
                self.sends.push(Reverse((At(at), self.order, c)));
            }
        }
        let total = self.warmup + self.s.requests;
        while self.completed < total {
            let next = |t: &Timeline| t.peek().map(|Reverse((at, _, _))| at.0);
            let cpu_end = self.cpus.next(self.now);
            let open = matches!(self.s.arrivals, Arrivals::Open { .. }) && self.arrivals_left > 0;
            let candidates = [
                (cpu_end, 0),
                (next(&self.waiting), 1),
                (next(&self.sends), 2),
                (open.then_some(self.next_arrival), 3),
            ];
            let Some((t, kind)) = candidates
                .iter()
                .filter_map(|(t, k)| t.map(|t| (t, *k)))
                .min_by(|a, b| a.0.total_cmp(&b.0))
            else {
                break;
            };
            self.cpus.advance(self.now, t);
            self.now = t;
            match kind {
                0 => {
                    let Some(slot) = self.cpus.step(t) else { continue };
                    self.computed(slot);
                }
                1 => {
                    let Reverse((_, _, slot)) = self.waiting.pop().expect("peeked");
                    self.spare.push(slot);
                    let job = self.slots[slot];
                    self.complete(job);
                }
                2 => {
                    let Reverse((_, _, conn)) = self.sends.pop().expect("peeked");
                    self.send(conn, t);
                }
                _ => self.arrive(),
            }
        }
    }

    /// An open loop's request is due: on a free connection, or waiting at the client for one.
    fn arrive(&mut self) {
        let intended = self.now;
        self.arrivals_left -= 1;
        if let Arrivals::Open { rate, poisson } = self.s.arrivals {
            self.next_arrival += if poisson { self.rng.exp(1.0 / rate) } else { 1.0 / rate };
        }
        if self.s.connections.is_none() {
            return self.send(NO_CONN, intended);
        }
        match self.free.pop_front() {
            Some(c) => self.send(c, intended),
            None => self.backlog.push_back(intended),
        }
    }

    /// A request reaches the server on `conn`: to an idle worker, or into its queue.
    fn send(&mut self, conn: usize, intended: f64) {
        let mut job = Job {
            intended,
            conn,
            worker: 0,
            wait: 0.0,
            class: 0,
            drawn: false,
            then: Then::Done,
        };
        if self.s.reserve.is_some() && self.s.discipline == Discipline::Shared {
            return self.dispatch(job);
        }
        match self.s.discipline {
            // Its own thread, idle since a connection has one request in flight at most.
            Discipline::PerConnection | Discipline::Unknown | Discipline::Green => self.start(job),
            Discipline::Shared => match self.idle.pop() {
                Some(w) => {
                    self.idle_mark[w] = false;
                    job.worker = w;
                    self.start(job);
                }
                None => self.queues[0].push_back(job),
            },
            Discipline::PerWorker(_) => {
                let w = if conn == NO_CONN {
                    // No connections modelled: requests spread over the workers at random.
                    (self.rng.uniform() * self.idle_mark.len() as f64) as usize % self.idle_mark.len()
                } else {
                    self.worker_of[conn]
                };
                job.worker = w;
                if self.idle_mark[w] {
                    self.idle_mark[w] = false;
                    self.start(job);
                } else {
                    self.queues[w].push_back(job);
                }
            }
        }
    }

    /// Class-aware dispatch (a reservation): the request's class is known on arrival; a short
    /// one goes to an idle reserved worker, else to any idle one; a long one only to an idle
    /// worker that is not reserved; else it waits in its class's queue.
    fn dispatch(&mut self, mut job: Job) {
        job.class = self.rng.pick(&self.classes);
        job.drawn = true;
        let k = self.s.reserve.map_or(0, |r| r.workers);
        let short = self.short[job.class];
        let pick = match short {
            true => self
                .idle
                .iter()
                .position(|&w| w < k)
                .or((!self.idle.is_empty()).then_some(0)),
            false => self.idle.iter().position(|&w| w >= k),
        };
        match pick {
            Some(i) => {
                let w = self.idle.swap_remove(i);
                self.idle_mark[w] = false;
                job.worker = w;
                self.start(job);
            }
            None => self.queues[usize::from(!short)].push_back(job),
        }
    }

    /// The next request for worker `w` under a reservation: a reserved worker takes the short
    /// queue's only; the others the older of the two queues' first.
    fn next_for(&mut self, w: usize) -> Option<Job> {
        let k = self.s.reserve.map_or(0, |r| r.workers);
        if w < k {
            return self.queues[0].pop_front();
        }
        let older_long = match (self.queues[0].front(), self.queues[1].front()) {
            (Some(s), Some(l)) => l.intended < s.intended,
            (None, _) => true,
            (Some(_), None) => false,
        };
        self.queues[usize::from(older_long)].pop_front()
    }

    /// A worker takes `job`: draws its work, computes, then waits. A keyed store's command
    /// keeps its last part for its lock's critical section or for its key's owner.
    fn start(&mut self, mut job: Job) {
        let cpu = match job.then {
            // Sent by a hop: drawn where it began; its owner runs the rest.
            Then::Hopped { cpu } => {
                job.then = Then::Done;
                cpu
            }
            _ => self.draw(&mut job),
        };
        let slot = match self.spare.pop() {
            Some(i) => {
                self.slots[i] = job;
                i
            }
            None => {
                self.slots.push(job);
                self.slots.len() - 1
            }
        };
        match cpu > 0.0 {
            true => self.cpus.add(slot, cpu, self.now),
            false => self.computed(slot),
        }
    }

    /// Draws `job`'s class and work: the CPU it computes first (the rest, under a lock or at
    /// its key's owner, is in `job.then`).
    fn draw(&mut self, job: &mut Job) -> f64 {
        if !job.drawn {
            job.class = self.rng.pick(&self.classes);
        }
        let class = &self.s.classes[job.class];
        let (cpu, wait) = class.work.draw(&mut self.rng, class.cap);
        // The design's own cost per request is CPU too, beside the work's.
        let mut cpu = cpu.as_secs_f64() + self.s.design_cpu.as_secs_f64();
        job.wait = wait.as_secs_f64();
        job.then = Then::Done;
        if let Some(lock) = &self.s.lock {
            // Its commands' critical sections, one after another, each on its key's stripe.
            let n = lock.commands.max(1);
            let held = (lock.hold.as_secs_f64() * n as f64).min(cpu);
            let stripe = self.keys.pick(&lock.stripes);
            cpu -= held;
            job.then = Then::Lock {
                stripe,
                hold: held / n as f64,
                left: n,
            };
        } else if let Some(shards) = self
            .s
            .shards
            .as_ref()
            .filter(|_| job.conn != NO_CONN && matches!(self.s.discipline, Discipline::PerWorker(_)))
        {
            // Its commands' keys: those another worker owns are run there (by the first such
            // owner: exact with two workers), their part of the CPU with them.
            let owners: Vec<usize> = (0..shards.commands.max(1))
                .map(|_| self.keys.pick(&shards.owners))
                .collect();
            let foreign: Vec<usize> = owners.into_iter().filter(|&o| o != job.worker).collect();
            if let Some(&owner) = foreign.first().filter(|&&o| o < self.idle_mark.len()) {
                let part = (shards.cost.as_secs_f64() * foreign.len() as f64).min(cpu);
                cpu -= part;
                job.then = Then::Hop { owner, cpu: part };
            }
        }
        cpu
    }

    /// The CPU part `slot` computed has ended: its lock taken (or waited for) or released, its
    /// hop sent to the owner, or its wait begun, or it is done.
    fn computed(&mut self, slot: usize) {
        let job = self.slots[slot];
        match job.then {
            Then::Lock { stripe, hold, left } => {
                self.slots[slot].then = Then::Holding { stripe, hold, left };
                if self.locks.take(stripe, slot, hold) {
                    self.hold(slot, hold);
                }
                return;
            }
            Then::Holding { stripe, hold, left } => {
                self.slots[slot].then = Then::Done;
                if let Some((next, next_hold)) = self.locks.release(stripe) {
                    self.hold(next, next_hold);
                }
                if left > 1 {
                    // Its next command's critical section, on that command's stripe.
                    let stripes = &self.s.lock.as_ref().expect("a lock was held").stripes;
                    let stripe = self.keys.pick(stripes);
                    self.slots[slot].then = Then::Lock {
                        stripe,
                        hold,
                        left: left - 1,
                    };
                    return self.computed(slot);
                }
            }
            Then::Hop { owner, cpu } => {
                // Its worker goes on; the owner runs the rest when it comes to it.
                self.spare.push(slot);
                self.next_for_worker(job.worker);
                let hopped = Job {
                    worker: owner,
                    then: Then::Hopped { cpu },
                    ..job
                };
                if self.idle_mark[owner] {
                    self.idle_mark[owner] = false;
                    self.start(hopped);
                } else {
                    self.queues[owner].push_back(hopped);
                }
                return;
            }
            Then::Done | Then::Hopped { .. } => {}
        }
        if job.wait > 0.0 {
            self.push_wait(slot, self.now + job.wait);
        } else {
            self.spare.push(slot);
            self.complete(self.slots[slot]);
        }
    }

    /// `slot` holds its lock: it computes its critical section (zero: it is over at once).
    fn hold(&mut self, slot: usize, hold: f64) {
        match hold > 0.0 {
            true => self.cpus.add(slot, hold, self.now),
            false => self.computed(slot),
        }
    }

    fn push_wait(&mut self, slot: usize, at: f64) {
        self.order += 1;
        self.waiting.push(Reverse((At(at), self.order, slot)));
    }

    /// `job`'s response is out: its latency is recorded, its worker takes the next request,
    /// its connection sends the next one or comes free.
    fn complete(&mut self, job: Job) {
        self.completed += 1;
        if self.completed > self.warmup {
            if self.latencies.is_empty() {
                self.first_recorded = self.now;
            }
            self.latencies.push(self.now - job.intended);
            if let Some(k) = self.by_class.get_mut(job.class) {
                k.push(self.now - job.intended);
            }
        }
        self.next_for_worker(job.worker);
        if job.conn == NO_CONN {
            return;
        }
        match self.s.arrivals {
            Arrivals::Open { .. } => match self.backlog.pop_front() {
                Some(intended) => self.send(job.conn, intended),
                None => self.free.push_back(job.conn),
            },
            Arrivals::Closed { think } if think.is_zero() => self.send(job.conn, self.now),
            Arrivals::Closed { think } => {
                self.order += 1;
                let at = self.now + think.as_secs_f64();
                self.sends.push(Reverse((At(at), self.order, job.conn)));
            }
        }
    }

    /// Worker `worker` is free: it takes its next request, or idles.
    fn next_for_worker(&mut self, worker: usize) {
        if !matches!(self.s.discipline, Discipline::Shared | Discipline::PerWorker(_)) {
            return;
        }
        let q = if self.queues.len() == 1 { 0 } else { worker };
        let next = match self.s.reserve.is_some() && self.s.discipline == Discipline::Shared {
            true => self.next_for(worker),
            false => self.queues[q].pop_front(),
        };
        match next {
            Some(mut next) => {
                next.worker = worker;
                self.start(next);
            }
            None => {
                self.idle_mark[worker] = true;
                if self.s.discipline == Discipline::Shared {
                    self.idle.push(worker);
                }
            }
        }
    }
}
