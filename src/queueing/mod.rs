//! Queueing predictions: what a design's way of handing requests to its workers implies for
//! latency and capacity, worked out without a server by a small seeded discrete-event
//! simulation of its queues under a cell's arrivals and service times ([`simulate`]), checked
//! against the closed forms of M/M/1 and M/M/k ([`erlang`]).
//!
//! What is modelled: the load generator's connections (each with one request in flight at most,
//! the free ones taken in the order they came free, requests waiting at the client when none is
//! free, latency from the intended send time); the design's dispatch ([`Discipline`]); each
//! request's work (its CPU part and its wait, as `--work` draws them) and the design's own CPU
//! per request (`design_cpu`: its syscalls, wake-ups and copies, measured where a bench cell
//! gives it); and the server's CPUs, shared by the workers computing at once as the kernel
//! shares them, in slices ([`Sharing::Slices`], [`base_slice`]) or, for comparison, ideally
//! ([`Sharing::Processor`]), so that with `cpu:` work the CPU count, not the worker count,
//! bounds the servers. What is not: wake-up preemption, context switches beyond the measured
//! CPU per request, caches, the client's own cost.

pub mod command;
mod cpu;
pub mod erlang;
pub mod keyed;
mod run;
mod sim;
mod time;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::server::request::work::CEILING;
use crate::server::{Model, Work};

pub use crate::server::{Assign, Discipline};

pub use cpu::Sharing;
pub use sim::simulate;

/// The kernel's base slice, and where it came from: `/sys/kernel/debug/sched/base_slice_ns`
/// where the kernel exposes it, else its default computed as the kernel does (0.75 ms ×
/// (1 + log2 of the online CPUs, at most 8)).
pub fn base_slice() -> (Duration, String) {
    match crate::sys::procfs::base_slice_ns() {
        Some(ns) => (
            Duration::from_nanos(ns),
            "the kernel's base_slice_ns (debugfs)".to_string(),
        ),
        None => {
            let cpus = crate::sys::procfs::online_cpus().unwrap_or(1);
            (
                default_slice(cpus),
                format!(
                    "0.75 ms × (1 + log2 {} CPUs), the kernel's default (not exposed here)",
                    cpus.min(8)
                ),
            )
        }
    }
}

/// The kernel's default base slice on a machine with `cpus` online CPUs: 0.75 ms scaled by
/// `1 + ilog2(min(cpus, 8))` (`sysctl_sched_base_slice`, `SCHED_TUNABLESCALING_LOG`).
pub fn default_slice(cpus: usize) -> Duration {
    let factor = 1 + cpus.clamp(1, 8).ilog2();
    Duration::from_micros(750) * factor
}

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

/// A prediction: latency from the intended send time, and the throughput the server keeps up.
/// Latencies are `None` where the offered rate is past what the design can serve (no steady
/// state: the queue grows for as long as the run lasts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// The mean latency (µs), which the explain card sets the measured mean against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_us: Option<f64>,
    /// The highest rate the design serves with this work: all its servers (or CPUs) busy.
    pub capacity_rps: f64,
    /// In a closed loop, the throughput the loop reaches; in an open one, the offered rate
    /// where it is served.
    pub throughput_rps: f64,
    /// Each request class's predicted latency, in the load's order (empty without classes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassPrediction>,
    /// The design's CPU per request the simulation added to the work (µs; `None`: none known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design_cpu_us: Option<f64>,
    /// The slice the CPUs were shared in (µs; `None`: ideal processor sharing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_us: Option<f64>,
    /// The capacity is the CPUs over the cost per request (the CPUs bind before the workers
    /// do): a cost bound, not a result of the queueing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capacity_cost_bound: bool,
    /// Where the design's CPU per request came from (a calibration cell, and its conditions;
    /// `None`: none measured, or results from before it was said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs_from: Option<String>,
    /// A keyed store's lock or shard hops: the p99 they add (µs), the prediction's p99 less
    /// that of the same design without them (`None`: no store part modelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_p99_us: Option<f64>,
}

/// One request class's predicted latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassPrediction {
    pub name: String,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
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

/// The prediction for `setup`, or `None` where its discipline is not modelled or it has no
/// work to serve (the implementation's own cost is all there is: nothing to predict).
pub fn predict(setup: &Setup) -> Option<Prediction> {
    if setup.discipline == Discipline::Unknown || setup.classes.is_empty() {
        return None;
    }
    let (capacity, cost_bound) = setup.capacity_bound();
    if !capacity.is_finite() {
        return None;
    }
    let base = Prediction {
        p50_us: None,
        p99_us: None,
        mean_us: None,
        capacity_rps: capacity,
        throughput_rps: capacity,
        classes: Vec::new(),
        design_cpu_us: (!setup.design_cpu.is_zero()).then_some(setup.design_cpu.as_secs_f64() * 1e6),
        slice_us: match setup.computing().1 {
            Sharing::Slices(s) => Some(s * 1e6),
            Sharing::Processor => None,
        },
        capacity_cost_bound: cost_bound,
        costs_from: None,
        store_p99_us: None,
    };
    // Past capacity an open loop has no steady state; at it, the queue's wait has no bound.
    if let Arrivals::Open { rate, .. } = setup.arrivals {
        if rate >= capacity * 0.999 {
            return Some(base);
        }
    }
    // A random spread of connections over workers is one draw of many: the median of five
    // spreads (each a seed of its own), not one lucky or unlucky one.
    let spreads: u64 = match (setup.discipline, setup.connections) {
        (Discipline::PerWorker(Assign::Random), Some(_)) => 5,
        _ => 1,
    };
    let runs: Vec<sim::Run> = (0..spreads)
        .map(|k| {
            simulate(&Setup {
                seed: setup.seed.wrapping_add(k),
                ..setup.clone()
            })
        })
        .collect::<Option<_>>()?;
    let med = |f: &dyn Fn(&sim::Run) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let named = setup.classes.len() > 1 || setup.classes.iter().any(|c| !c.name.is_empty());
    let classes = match named {
        true => (0..setup.classes.len())
            .map(|k| {
                let q = |p: f64| {
                    let mut v: Vec<f64> = runs.iter().filter_map(|r| r.class_percentile(k, p)).collect();
                    v.sort_by(|a, b| a.total_cmp(b));
                    v.get(v.len() / 2).map(|s| s * 1e6)
                };
                ClassPrediction {
                    name: setup.classes[k].name.clone(),
                    p50_us: q(0.50),
                    p99_us: q(0.99),
                }
            })
            .collect(),
        false => Vec::new(),
    };
    Some(Prediction {
        p50_us: Some(med(&|r| r.percentile(0.50)) * 1e6),
        p99_us: Some(med(&|r| r.percentile(0.99)) * 1e6),
        mean_us: Some(med(&|r| r.mean()) * 1e6),
        throughput_rps: med(&|r| r.throughput),
        classes,
        ..base
    })
}

/// The highest open-loop rate at which every bound (quantile, most µs) holds in the
/// simulation of `setup` (its arrivals' rate replaced), by bisection to 1 % below the
/// saturation rate; `None` where nothing is modelled or not even a trickle holds.
pub fn capacity_within(setup: &Setup, bounds: &[(f64, f64)]) -> Option<f64> {
    if setup.discipline == Discipline::Unknown || setup.classes.is_empty() {
        return None;
    }
    let saturation = setup.capacity_rps();
    if !saturation.is_finite() {
        return None;
    }
    let poisson = matches!(setup.arrivals, Arrivals::Open { poisson: true, .. });
    let holds = |rate: f64| {
        let s = Setup {
            arrivals: Arrivals::Open { rate, poisson },
            requests: setup.requests.min(100_000),
            ..setup.clone()
        };
        simulate(&s).is_some_and(|run| bounds.iter().all(|&(q, max)| run.percentile(q) * 1e6 <= max))
    };
    let (mut lo, mut hi) = (saturation * 0.01, saturation);
    if !holds(lo) {
        return None;
    }
    while (hi - lo) / hi > 0.01 {
        let mid = (lo + hi) / 2.0;
        match holds(mid) {
            true => lo = mid,
            false => hi = mid,
        }
    }
    Some(lo)
}

#[cfg(test)]
mod keyed_tests;
#[cfg(test)]
mod tests;
