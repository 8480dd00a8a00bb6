//! What is simulated ([`Setup`]): the design's dispatch and workers, the server's CPUs and how
//! they are shared, the arrivals and the request classes; the capacity its workers, CPUs and
//! locks bound; and the setups a model and a load give (`discipline_of`, `classes_of`).

use std::time::Duration;

use super::cpu::Sharing;
use super::keyed;
use super::Discipline;
use crate::server::work::CEILING;
use crate::server::{Model, Work};

/// How requests arrive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// An open loop at `rate` requests per second, with exponential gaps or a fixed interval.
    Open { rate: f64, poisson: bool },
    /// A closed loop: each connection sends its next request `think` after its response.
    Closed { think: Duration },
}

/// A class of requests: its name, its share of them, its work, and where its draws are cut.
#[derive(Debug, Clone)]
pub struct Class {
    pub name: String,
    pub weight: f64,
    pub work: Work,
    pub cap: Duration,
}

/// What is simulated.
#[derive(Debug, Clone)]
pub struct Setup {
    pub discipline: Discipline,
    /// Workers (1 for a single event loop; ignored for a thread per connection).
    pub workers: usize,
    /// The server's CPUs, and how the requests computing at once share them.
    pub cpus: usize,
    pub sharing: Sharing,
    /// The design's own CPU per request, beside the work's (zero: not known).
    pub design_cpu: Duration,
    /// The client's connections; `None` models none (requests reach the server as they arrive:
    /// the textbook open system). A closed loop needs them.
    pub connections: Option<usize>,
    pub arrivals: Arrivals,
    pub classes: Vec<Class>,
    /// Requests whose latency is recorded (a tenth as many more run first, as a warm-up).
    pub requests: usize,
    pub seed: u64,
    /// A shared queue's class-aware dispatch (`offload --reserve under=D:K`): the first K
    /// workers take only requests of a class whose work's mean is under D, the others the
    /// oldest request of any class; `None`: every worker takes any.
    pub reserve: Option<crate::server::Reserve>,
    /// A keyed store's locks: each request holds one for its critical section (`keyed`).
    pub lock: Option<keyed::Lock>,
    /// A keyed store's shards: a request whose key another worker owns has it run the rest.
    pub shards: Option<keyed::Shards>,
}

impl Setup {
    /// The mean work per request (CPU and wait), and its CPU part, in seconds.
    pub fn means(&self) -> (f64, f64) {
        let total: f64 = self.classes.iter().map(|c| c.weight).sum();
        let (mut all, mut cpu) = (0.0, 0.0);
        for c in &self.classes {
            let (m, p) = c.work.served_means(c.cap);
            all += c.weight / total * m.as_secs_f64();
            cpu += c.weight / total * p.as_secs_f64();
        }
        let design = self.design_cpu.as_secs_f64();
        (all + design, cpu + design)
    }

    /// The highest rate the design serves: its workers busy all the time, or the CPUs
    /// computing all the time, whichever binds first. A thread per connection has no workers to
    /// fill: only the CPUs bound it (the client's connections are the client's limit, not the
    /// design's), so with work that is all waiting and no design CPU known it has no bound.
    pub fn capacity_rps(&self) -> f64 {
        self.capacity_bound().0
    }

    /// What requests compute on, and how they share it: the CPUs, or for green threads the
    /// workers (at most the CPUs) in Go's slices (`--green-slice` is not followed: the
    /// prediction takes the default).
    pub fn computing(&self) -> (usize, Sharing) {
        match self.discipline {
            Discipline::Green => (
                self.workers.clamp(1, self.cpus.max(1)),
                Sharing::Slices(crate::server::green::DEFAULT_SLICE.as_secs_f64()),
            ),
            _ => (self.cpus, self.sharing),
        }
    }

    /// [`Setup::capacity_rps`], and whether the CPUs bind it (a cost bound: CPUs ÷ cost).
    pub fn capacity_bound(&self) -> (f64, bool) {
        let (mean, cpu) = self.means();
        // Servers that can be busy at once: a connection has one request in flight, so fewer
        // connections than workers leave workers idle.
        let conns = self.connections.map_or(f64::INFINITY, |n| n as f64);
        let servers = match self.discipline {
            Discipline::PerConnection | Discipline::Green => f64::INFINITY,
            _ => (self.workers.max(1) as f64).min(conns),
        };
        let by_servers = if mean > 0.0 { servers / mean } else { f64::INFINITY };
        let by_cpus = if cpu > 0.0 {
            self.computing().0.max(1) as f64 / cpu
        } else {
            f64::INFINITY
        };
        // A lock serves its critical sections one at a time: its busiest stripe bounds too.
        let by_lock = self.lock.as_ref().map_or(f64::INFINITY, |l| {
            let busiest = l
                .stripes
                .iter()
                .scan(0.0, |last, &c| {
                    let share = c - *last;
                    *last = c;
                    Some(share)
                })
                .fold(0.0, f64::max);
            let cpu_each = cpu / l.commands.max(1) as f64;
            match busiest.max(1.0 / l.stripes.len().max(1) as f64)
                * l.hold.as_secs_f64().min(cpu_each)
                * l.commands.max(1) as f64
            {
                h if h > 0.0 => 1.0 / h,
                _ => f64::INFINITY,
            }
        });
        let by_servers = by_servers.min(by_lock);
        (by_servers.min(by_cpus), by_cpus <= by_servers)
    }
}

/// `model`'s discipline with `workers` workers and `connections` connections: one that serves
/// a connection at a time per worker is a thread per connection while the connections fit its
/// workers, and not modelled past them (the rest wait in the listen backlog).
pub fn discipline_of(model: &Model, workers: usize, connections: usize) -> Discipline {
    // Past its default connection limit the rest wait unaccepted: not modelled.
    if model.default_max_conns.is_some_and(|m| connections > m) {
        return Discipline::Unknown;
    }
    match model.one_conn_per_worker {
        true if connections <= workers => Discipline::PerConnection,
        true => Discipline::Unknown,
        false => model.queueing,
    }
}

/// The service classes of a load whose request classes are `mix` (name, weight, request target):
/// each one's work as a server with `--work-from-request` reads its query (cut at `max_work`),
/// the others `work` (cut at its ceiling). `None` where a query names work the server refuses
/// (it answers 400: no service to predict) or no request does any work.
pub fn classes_of(
    mix: &[(&str, f64, &str)],
    work: &Work,
    from_request: bool,
    max_work: Duration,
) -> Option<Vec<Class>> {
    let mut classes = Vec::new();
    for &(name, weight, target) in mix {
        let named = match from_request {
            true => crate::server::query_work(target, max_work).ok()?,
            false => None,
        };
        classes.push(match named {
            Some(w) => Class {
                name: name.to_string(),
                weight,
                work: w,
                cap: max_work,
            },
            None => Class {
                name: name.to_string(),
                weight,
                work: work.clone(),
                cap: CEILING,
            },
        });
    }
    (!classes.iter().all(|c| c.work.is_none())).then_some(classes)
}
