//! Queueing predictions: what a design's way of handing requests to its workers implies for
//! latency and capacity, worked out without a server by a small seeded discrete-event
//! simulation of its queues under a cell's arrivals and service times ([`simulate`]), checked
//! against the closed forms of M/M/1 and M/M/k ([`erlang`]).
//!
//! What is modelled: the load generator's connections (each with one request in flight at most,
//! the free ones taken in the order they came free, requests waiting at the client when none is
//! free, latency from the intended send time); the design's dispatch ([`Discipline`]); each
//! request's work (its CPU part and its wait, as `--work` draws them); and the server's CPUs,
//! shared equally by the workers computing at once (processor sharing), so that with `cpu:` work
//! the CPU count, not the worker count, bounds the servers. What is not: the implementation's
//! own cost per request (syscalls, wake-ups, copies), which is what a measurement beyond the
//! prediction shows.

pub mod command;
pub mod erlang;
mod sim;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::server::work::CEILING;
use crate::server::{Model, Work};

pub use crate::server::{Assign, Discipline};

pub use sim::simulate;

/// How requests arrive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// An open loop at `rate` requests per second, with exponential gaps or a fixed interval.
    Open { rate: f64, poisson: bool },
    /// A closed loop: each connection sends its next request `think` after its response.
    Closed { think: Duration },
}

/// A class of requests: its share of them, its work, and where its draws are cut.
#[derive(Debug, Clone)]
pub struct Class {
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
    /// The server's CPUs.
    pub cpus: usize,
    /// The client's connections; `None` models none (requests reach the server as they arrive:
    /// the textbook open system). A closed loop needs them.
    pub connections: Option<usize>,
    pub arrivals: Arrivals,
    pub classes: Vec<Class>,
    /// Requests whose latency is recorded (a tenth as many more run first, as a warm-up).
    pub requests: usize,
    pub seed: u64,
}

/// A prediction: latency from the intended send time, and the throughput the server keeps up.
/// Latencies are `None` where the offered rate is past what the design can serve (no steady
/// state: the queue grows for as long as the run lasts).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// The highest rate the design serves with this work: all its servers (or CPUs) busy.
    pub capacity_rps: f64,
    /// In a closed loop, the throughput the loop reaches; in an open one, the offered rate
    /// where it is served.
    pub throughput_rps: f64,
}

impl Setup {
    /// The mean work per request (CPU and wait), and its CPU part, in seconds.
    pub(crate) fn means(&self) -> (f64, f64) {
        let total: f64 = self.classes.iter().map(|c| c.weight).sum();
        let (mut all, mut cpu) = (0.0, 0.0);
        for c in &self.classes {
            let (m, p) = c.work.served_means(c.cap);
            all += c.weight / total * m.as_secs_f64();
            cpu += c.weight / total * p.as_secs_f64();
        }
        (all, cpu)
    }

    /// The highest rate served: servers busy all the time (the workers, or the connections of a
    /// thread per connection), or the CPUs computing all the time, whichever binds first.
    pub fn capacity_rps(&self) -> f64 {
        let (mean, cpu) = self.means();
        // Servers that can be busy at once: a connection has one request in flight, so fewer
        // connections than workers leave workers idle.
        let conns = self.connections.map_or(f64::INFINITY, |n| n as f64);
        let servers = match self.discipline {
            Discipline::PerConnection => conns,
            _ => (self.workers.max(1) as f64).min(conns),
        };
        let by_servers = if mean > 0.0 { servers / mean } else { f64::INFINITY };
        let by_cpus = if cpu > 0.0 {
            self.cpus.max(1) as f64 / cpu
        } else {
            f64::INFINITY
        };
        by_servers.min(by_cpus)
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

/// The service classes of a load whose request classes are `mix` (weight, request target):
/// each one's work as a server with `--work-from-request` reads its query (cut at `max_work`),
/// the others `work` (cut at its ceiling). `None` where a query names work the server refuses
/// (it answers 400: no service to predict) or no request does any work.
pub fn classes_of(mix: &[(f64, &str)], work: &Work, from_request: bool, max_work: Duration) -> Option<Vec<Class>> {
    let mut classes = Vec::new();
    for &(weight, target) in mix {
        let named = match from_request {
            true => crate::server::query_work(target, max_work).ok()?,
            false => None,
        };
        classes.push(match named {
            Some(w) => Class {
                weight,
                work: w,
                cap: max_work,
            },
            None => Class {
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
    let capacity = setup.capacity_rps();
    if !capacity.is_finite() {
        return None;
    }
    // Past capacity an open loop has no steady state; at it, the queue's wait has no bound.
    if let Arrivals::Open { rate, .. } = setup.arrivals {
        if rate >= capacity * 0.999 {
            return Some(Prediction {
                p50_us: None,
                p99_us: None,
                capacity_rps: capacity,
                throughput_rps: capacity,
            });
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
    Some(Prediction {
        p50_us: Some(med(&|r| r.percentile(0.50)) * 1e6),
        p99_us: Some(med(&|r| r.percentile(0.99)) * 1e6),
        capacity_rps: capacity,
        throughput_rps: med(&|r| r.throughput),
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
mod tests;
