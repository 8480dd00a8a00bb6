//! A cell's queueing prediction (`crate::queueing`): its model's discipline and workers, the
//! server's CPUs, and the experiment's connections, arrivals and work, simulated. A cell gets
//! one only where its work is known and its design and load are ones the simulation models.

use crate::bench::record::scenario::Experiment;
use crate::load::{Arrivals as LoadArrivals, Pacing};
use crate::queueing::{
    base_slice, capacity_within, classes_of, discipline_of, predict, Arrivals, Prediction, Setup, Sharing,
};

/// Requests each prediction simulates (a tenth more as its warm-up).
const REQUESTS: usize = 100_000;

/// The prediction for `entry` (a model entry) at `connections`, the server on `cpus` CPUs
/// (their list as `--cpus` takes it), the design costing `measured_cpu_us` of server CPU per
/// request as measured (its own cost is that less the work's mean CPU); `None` where there is
/// none to make: no work, a peer, pipelining or one request per connection (connection set-up
/// dominates), a design not modelled or not bounded.
pub(in crate::bench) fn prediction(
    x: &Experiment,
    entry: &str,
    connections: usize,
    cpus: &str,
    measured_cpu_us: Option<f64>,
) -> Option<Prediction> {
    predict(&with_design_cpu(
        setup_of(x, entry, connections, cpus)?,
        measured_cpu_us,
    ))
}

/// The work each request of `x` asks of `entry` on average: (CPU, waiting) in µs; `None`
/// where no work is known (none, a peer, a load the simulation does not take).
pub(in crate::bench) fn work_means(x: &Experiment, entry: &str, connections: usize, cpus: &str) -> Option<(f64, f64)> {
    let (_, args) = crate::bench::record::serve_line(entry, x, "127.0.0.1", cpus).ok()?;
    if args.work_spec.parse::<crate::server::Work>().ok()?.is_none() && !args.work_from_request {
        // No work asked for: none, known.
        return Some((0.0, 0.0));
    }
    let (all, cpu) = setup_of(x, entry, connections, cpus)?.means();
    Some((cpu * 1e6, (all - cpu) * 1e6))
}

/// `setup` with the design's own CPU per request: what was measured per request less the
/// work's mean CPU (never below zero).
fn with_design_cpu(mut setup: Setup, measured_cpu_us: Option<f64>) -> Setup {
    if let Some(m) = measured_cpu_us.filter(|m| m.is_finite() && *m > 0.0) {
        let work_cpu_us = setup.means().1 * 1e6;
        setup.design_cpu = std::time::Duration::from_secs_f64((m - work_cpu_us).max(0.0) / 1e6);
    }
    setup
}

/// The highest rate at which `x`'s target (its `slo`, every request's bounds) holds in the
/// prediction for `entry`; `None` without a target, with a class's bound (the search over
/// rates judges every request's bounds only), or without a prediction.
pub(in crate::bench) fn capacity_at_slo(
    x: &Experiment,
    entry: &str,
    connections: usize,
    cpus: &str,
    measured_cpu_us: Option<f64>,
) -> Option<f64> {
    let slo = x.load.slo.as_ref()?;
    let bounds: Vec<(f64, f64)> = slo
        .0
        .iter()
        .map(|b| {
            b.class
                .is_none()
                .then(|| (b.quantile.fraction(), b.max.as_secs_f64() * 1e6))
        })
        .collect::<Option<_>>()?;
    capacity_within(
        &with_design_cpu(setup_of(x, entry, connections, cpus)?, measured_cpu_us),
        &bounds,
    )
}

/// What is simulated for `entry` at `connections` on `cpus`.
fn setup_of(x: &Experiment, entry: &str, connections: usize, cpus: &str) -> Option<Setup> {
    let (model, args) = crate::bench::record::serve_line(entry, x, "127.0.0.1", cpus).ok()?;
    let server_cpus = crate::units::parse_cpus(cpus).ok()?.len();
    let mut load = x.clone();
    // A capacity search's probes are open loops from 1,000 req/s (their rate is set per probe).
    if load.load.slo.is_some() && load.load.rate.is_none() {
        load.load.rate = Some(1000.0.into());
    }
    let spec =
        crate::load::resolve(load.load_args(std::net::SocketAddr::from(([127, 0, 0, 1], 1)), connections)).ok()?;
    if x.load.pipeline > 1 || x.load.close || x.load.requests_per_conn.is_some() {
        return None;
    }
    let arrivals = match spec.pacing {
        Pacing::Rate(rate) => Arrivals::Open {
            rate,
            poisson: x.load.arrivals == LoadArrivals::Poisson,
        },
        Pacing::Think(think) => Arrivals::Closed { think },
        Pacing::Closed => Arrivals::Closed {
            think: std::time::Duration::ZERO,
        },
    };
    let target = spec.target().path.clone();
    let mix: Vec<(&str, f64, &str)> = match spec.classes.is_empty() {
        true => vec![("", 1.0, target.as_str())],
        false => spec
            .classes
            .iter()
            .map(|c| (c.name.as_str(), c.weight, c.path.as_str()))
            .collect(),
    };
    let work: crate::server::Work = args.work_spec.parse().ok()?;
    let classes = classes_of(&mix, &work, args.work_from_request, args.max_work)?;
    let workers = model.worker_count(args.workers, server_cpus);
    Some(Setup {
        discipline: discipline_of(model, workers, connections),
        workers,
        cpus: server_cpus,
        sharing: Sharing::Slices(base_slice().0.as_secs_f64()),
        design_cpu: std::time::Duration::ZERO,
        connections: Some(connections),
        arrivals,
        classes,
        requests: REQUESTS,
        seed: x.load.seed,
        // Its serve flags' reservation (offload's class-aware dispatch).
        reserve: args.reserve,
        lock: None,
        shards: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn experiment(keys: &str) -> Experiment {
        crate::bench::record::scenario::experiment_of("\"queue-pool\", \"thread\", \"prefork\"", "500", keys).unwrap()
    }

    /// The pooled case is M/M/4 at ρ = 0.7 (Erlang C within 10 %, its client's connections
    /// and the slices barely move it); a thread per connection is bounded by its measured CPU
    /// per request alone (exactly 1 / 20 µs), and without one it is not modelled.
    #[test]
    fn a_cell_with_known_work_gets_the_prediction_of_its_design() {
        use crate::queueing::erlang::mmk_sojourn_quantile;
        let x = experiment("work = \"sleep:exp(1ms)\"\nworkers = 4\nrate = 2800\narrivals = \"poisson\"");
        let pool = prediction(&x, "queue-pool", 500, "0", None).unwrap();
        assert!((pool.capacity_rps - 4000.0).abs() < 1.0, "{pool:?}");
        let (p99, erlang) = (
            pool.p99_us.unwrap(),
            mmk_sojourn_quantile(4, 2800.0, 1000.0, 0.99) * 1e6,
        );
        assert!(
            (p99 / erlang - 1.0).abs() <= 0.10,
            "M/M/4 at 0.7: {p99} against Erlang C {erlang}"
        );
        assert!(pool.slice_us.is_some(), "shared in the kernel's slices");
        assert!(
            prediction(&x, "thread", 500, "0", None).is_none(),
            "unbounded: not modelled"
        );
        let thread = prediction(&x, "thread", 500, "0", Some(20.0)).unwrap();
        assert!((thread.capacity_rps / 50_000.0 - 1.0).abs() <= 0.01, "{thread:?}");
        assert_eq!(thread.design_cpu_us, Some(20.0));
        assert!(thread.p99_us.unwrap() < p99, "{thread:?}");
        // What was measured less the work's CPU (none here) is the design's; never below zero.
        let cpu = experiment("work = \"cpu:100us\"\nrate = 2000");
        let p = prediction(&cpu, "queue-pool", 50, "0", Some(130.0)).unwrap();
        assert!((p.design_cpu_us.unwrap() - 30.0).abs() < 1e-6, "{p:?}");
        assert!((p.capacity_rps - 1e6 / 130.0).abs() < 1.0, "{p:?}");
        let p = prediction(&cpu, "queue-pool", 50, "0", Some(80.0)).unwrap();
        assert_eq!(p.design_cpu_us, None, "{p:?}");
        // prefork serves a connection at a time: 500 connections on 4 workers are not modelled.
        assert!(prediction(&x, "prefork", 500, "0", None).is_none());
        assert!(
            prediction(&x, "prefork", 4, "0", Some(20.0)).is_some(),
            "4 connections on 4 workers"
        );
    }

    #[test]
    fn no_work_or_pipelining_has_no_prediction_and_classes_mix_their_work() {
        assert!(prediction(&experiment("rate = 1000"), "queue-pool", 500, "0", None).is_none());
        let piped = experiment("work = \"cpu:100us\"\npipeline = 4");
        assert!(prediction(&piped, "queue-pool", 500, "0", None).is_none());
        let classes =
            experiment("work_from_request = true\nmix = [\"a=99:/?cpu=20us\", \"b=1:/?cpu=5ms\"]\nrate = 2000");
        let p = prediction(&classes, "queue-pool --workers 2", 500, "0", None).unwrap();
        // One CPU: 1 / (0.99 × 20 µs + 0.01 × 5 ms) = 14,327 req/s.
        assert!((p.capacity_rps - 14_327.0).abs() < 20.0, "{p:?}");
    }
}
