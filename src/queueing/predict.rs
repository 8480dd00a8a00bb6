//! A prediction ([`Prediction`]): the latency from the intended send time and the throughput
//! the simulation of a [`Setup`] gives (the median of several spreads where connections are
//! spread at random), and the highest rate at which latency bounds hold (`capacity_within`).

use serde::{Deserialize, Serialize};

use super::cpu::Sharing;
use super::run::Run;
use super::setup::{Arrivals, Setup};
use super::sim::simulate;
use super::{Assign, Discipline};

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
    let runs: Vec<Run> = (0..spreads)
        .map(|k| {
            simulate(&Setup {
                seed: setup.seed.wrapping_add(k),
                ..setup.clone()
            })
        })
        .collect::<Option<_>>()?;
    let med = |f: &dyn Fn(&Run) -> f64| {
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
