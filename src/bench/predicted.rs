//! A cell's queueing prediction (`crate::queueing`): its model's discipline and workers, the
//! server's CPUs, and the experiment's connections, arrivals and work, simulated. A cell gets
//! one only where its work is known and its design and load are ones the simulation models.

use crate::bench::record::scenario::Experiment;
use crate::load::{Arrivals as LoadArrivals, Pacing};
use crate::queueing::{capacity_within, classes_of, discipline_of, predict, Arrivals, Prediction, Setup};

/// Requests each prediction simulates (a tenth more as its warm-up).
const REQUESTS: usize = 100_000;

/// The prediction for `entry` (a model entry) at `connections`, the server on `cpus` CPUs
/// (their list as `--cpus` takes it); `None` where there is none to make: no work, a peer,
/// pipelining or one request per connection (connection set-up dominates), a design not
/// modelled.
pub(super) fn prediction(x: &Experiment, entry: &str, connections: usize, cpus: &str) -> Option<Prediction> {
    predict(&setup_of(x, entry, connections, cpus)?)
}

/// The highest rate at which `x`'s target (its `slo`, every request's bounds) holds in the
/// prediction for `entry`; `None` without a target, with a class's bound (the simulation keeps
/// no classes' latencies apart), or without a prediction.
pub(super) fn capacity_at_slo(x: &Experiment, entry: &str, connections: usize, cpus: &str) -> Option<f64> {
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
    capacity_within(&setup_of(x, entry, connections, cpus)?, &bounds)
}

/// What is simulated for `entry` at `connections` on `cpus`.
fn setup_of(x: &Experiment, entry: &str, connections: usize, cpus: &str) -> Option<Setup> {
    let (model, args) = crate::bench::record::serve_line(entry, x, "127.0.0.1", cpus).ok()?;
    let server_cpus = crate::units::parse_cpus(cpus).ok()?.len();
    let mut load = x.clone();
    // A capacity search's probes are open loops from 1,000 req/s (their rate is set per probe).
    if load.load.slo.is_some() && load.load.rate.is_none() {
        load.load.rate = Some(1000.0);
    }
    let spec = load
        .load_args(std::net::SocketAddr::from(([127, 0, 0, 1], 1)), connections)
        .resolve()
        .ok()?;
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
    let mix: Vec<(f64, &str)> = match spec.classes.is_empty() {
        true => vec![(1.0, target.as_str())],
        false => spec.classes.iter().map(|c| (c.weight, c.path.as_str())).collect(),
    };
    let work: crate::server::Work = args.work_spec.parse().ok()?;
    let classes = classes_of(&mix, &work, args.work_from_request, args.max_work)?;
    let workers = model.worker_count(args.workers, server_cpus);
    Some(Setup {
        discipline: discipline_of(model, workers, connections),
        workers,
        cpus: server_cpus,
        connections: Some(connections),
        arrivals,
        classes,
        requests: REQUESTS,
        seed: x.load.seed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn experiment(keys: &str) -> Experiment {
        crate::bench::record::scenario::experiment_of("\"queue-pool\", \"thread\", \"prefork\"", "500", keys).unwrap()
    }

    #[test]
    fn a_cell_with_known_work_gets_the_prediction_of_its_design() {
        let x = experiment("work = \"sleep:exp(1ms)\"\nworkers = 4\nrate = 2800\narrivals = \"poisson\"");
        let pool = prediction(&x, "queue-pool", 500, "0").unwrap();
        assert!((pool.capacity_rps - 4000.0).abs() < 1.0, "{pool:?}");
        let p99 = pool.p99_us.unwrap();
        assert!(
            (4500.0..8000.0).contains(&p99),
            "M/M/4 at 0.7 with its client: {pool:?}"
        );
        let thread = prediction(&x, "thread", 500, "0").unwrap();
        assert!(thread.p99_us.unwrap() < p99, "{thread:?}");
        // prefork serves a connection at a time: 500 connections on 4 workers are not modelled.
        assert!(prediction(&x, "prefork", 500, "0").is_none());
        assert!(
            prediction(&x, "prefork", 4, "0").is_some(),
            "4 connections on 4 workers"
        );
    }

    #[test]
    fn no_work_or_pipelining_has_no_prediction_and_classes_mix_their_work() {
        assert!(prediction(&experiment("rate = 1000"), "queue-pool", 500, "0").is_none());
        let piped = experiment("work = \"cpu:100us\"\npipeline = 4");
        assert!(prediction(&piped, "queue-pool", 500, "0").is_none());
        let classes =
            experiment("work_from_request = true\nmix = [\"a=99:/?cpu=20us\", \"b=1:/?cpu=5ms\"]\nrate = 2000");
        let p = prediction(&classes, "queue-pool --workers 2", 500, "0").unwrap();
        // One CPU: 1 / (0.99 × 20 µs + 0.01 × 5 ms) = 14,327 req/s.
        assert!((p.capacity_rps - 14_327.0).abs() < 20.0, "{p:?}");
    }
}
