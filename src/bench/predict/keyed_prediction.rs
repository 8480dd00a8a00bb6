//! A keyed store's queueing prediction: the design's dispatch and CPUs as every cell's
//! (`predicted`), its commands costing the CPU per command its calibration cell measured, with
//! its store beside: one lock or `striped:N` (each command holding its key's stripe for the
//! critical section the calibration timed) or `sharded` (a command whose key another worker
//! owns has that worker run its table part, a second queue). The stripes and owners are drawn
//! as the load draws its keys: uniform over the keyspace, or zipf — the keys hashed as the
//! store hashes them. A pipelined batch is one job of N commands: their critical sections one
//! after another, each on its own key's stripe (a sharded batch's commands of other workers'
//! keys go to the first such owner: exact with two workers). The p99 the lock or hops add is
//! the prediction's p99 less that of the same design without them (the same arrivals: the
//! keys are drawn from a stream of their own): how much of a gap is contention. Not modelled:
//! io-threads' executor (a queue every command crosses), the client beside threaded stores on
//! the same CPUs, and a hot shard's own bound on capacity.

use std::time::Duration;

use crate::bench::record::scenario::Experiment;
use crate::load::keyed::KeyDist;
use crate::load::{Arrivals as LoadArrivals, Pacing};
use crate::queueing::keyed::{cumulative, Lock, Shards};
use crate::queueing::{base_slice, discipline_of, predict, Arrivals, Class, Prediction, Setup, Sharing};
use crate::store::Kind;

/// Commands each prediction simulates (a tenth more as its warm-up).
const REQUESTS: usize = 60_000;

/// The prediction for model `entry` at `connections` on `cpus`, its commands costing
/// `cpu_us` of server CPU each and holding their lock (or running at their owner) for
/// `hold_us`; `None` where it is not modelled.
pub(in crate::bench) fn prediction(
    x: &Experiment,
    entry: &str,
    connections: usize,
    cpus: &str,
    cpu_us: f64,
    hold_us: Option<f64>,
) -> Option<Prediction> {
    let (model, args) = crate::bench::record::serve_line(entry, x, "127.0.0.1", cpus).ok()?;
    if !x.proto.is_keyed() || model.extra_threads > 0 || cpu_us <= 0.0 {
        return None;
    }
    let server_cpus = crate::units::parse_cpus(cpus).ok()?.len();
    let workers = model.worker_count(args.workers, server_cpus);
    let spec = crate::load::resolve(x.load_args(std::net::SocketAddr::from(([127, 0, 0, 1], 1)), connections)).ok()?;
    let plan = spec.keyed.as_ref()?;
    let batch = x.load.pipeline.max(1);
    let per_job = |us: f64| Duration::from_secs_f64(us * batch as f64 / 1e6);
    let arrivals = match spec.pacing {
        Pacing::Rate(rate) => Arrivals::Open {
            rate: rate / batch as f64,
            poisson: x.load.arrivals == LoadArrivals::Poisson,
        },
        Pacing::Think(think) => Arrivals::Closed { think },
        Pacing::Closed => Arrivals::Closed { think: Duration::ZERO },
    };
    let kind = args.store_kind.unwrap_or(model.data.default_store(workers));
    // A command's critical section (a wall-clock time: a holder preempted inside it makes it
    // longer) is at most the command's CPU, here as in the simulation.
    let hold = hold_us.map(|h| Duration::from_secs_f64(h.min(cpu_us) / 1e6));
    let lock = match (kind, hold) {
        (Kind::Locked, Some(hold)) => Some(Lock {
            stripes: vec![1.0],
            hold,
            commands: batch,
        }),
        (Kind::Striped(n), Some(hold)) => Some(Lock {
            stripes: cumulative(&shares(plan.keys, plan.dist, n)),
            hold,
            commands: batch,
        }),
        _ => None,
    };
    let discipline = discipline_of(model, workers, connections);
    // Hops go from one worker's queue to another's: a design with a queue per worker.
    let shards = match (kind, hold, discipline) {
        (Kind::Sharded, Some(cost), crate::queueing::Discipline::PerWorker(_)) => Some(Shards {
            owners: cumulative(&shares(plan.keys, plan.dist, workers)),
            cost,
            commands: batch,
        }),
        _ => None,
    };
    let setup = Setup {
        discipline,
        workers,
        cpus: server_cpus,
        sharing: Sharing::Slices(base_slice().0.as_secs_f64()),
        design_cpu: per_job(cpu_us),
        connections: Some(connections),
        arrivals,
        classes: vec![Class {
            name: String::new(),
            weight: 1.0,
            work: crate::server::Work::default(),
            cap: crate::server::work::CEILING,
        }],
        requests: REQUESTS,
        seed: x.load.seed,
        reserve: None,
        lock,
        shards,
    };
    let with = predict(&setup)?;
    let store_part = match setup.lock.is_some() || setup.shards.is_some() {
        true => predict(&Setup {
            lock: None,
            shards: None,
            ..setup.clone()
        })
        .and_then(|without| Some((with.p99_us? - without.p99_us?).max(0.0))),
        false => None,
    };
    let n = batch as f64;
    Some(Prediction {
        capacity_rps: with.capacity_rps * n,
        throughput_rps: with.throughput_rps * n,
        design_cpu_us: with.design_cpu_us.map(|us| us / n),
        store_p99_us: store_part,
        ..with
    })
}

/// Why a keyed cell of model `entry` has no prediction.
pub(in crate::bench) fn not_modelled(entry: &str) -> &'static str {
    let model = crate::models::find(crate::bench::record::scenario::model_name(entry));
    match model {
        Some(m) if m.extra_threads > 0 => {
            "not modelled: its executor, one thread every command crosses to and from, is not in the simulation"
        }
        _ => "not modelled: its dispatch is not one the simulation takes",
    }
}

/// Each of `n` stripes' (or shards') share of the commands when `keys` keys are drawn by
/// `dist`: the keys hashed as the store hashes them.
fn shares(keys: u64, dist: KeyDist, n: usize) -> Vec<f64> {
    let mut w = vec![0.0; n.max(1)];
    let s = match dist {
        KeyDist::Zipf(s) => s,
        KeyDist::Uniform | KeyDist::Sequential => 0.0,
    };
    for k in 0..keys {
        let p = match s {
            0.0 => 1.0,
            s => 1.0 / ((k + 1) as f64).powf(s),
        };
        w[crate::store::stripe_of(&crate::load::keyed::name(k), n)] += p;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn experiment(models: &str, keys: &str) -> Experiment {
        let text = format!(
            "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"resp\"\n\
             models = [{models}]\nconnections = [50]\nduration = \"1s\"\nworkers = 2\n{keys}"
        );
        crate::bench::record::scenario::parse(&text, "test")
            .unwrap()
            .experiments
            .remove(0)
    }

    /// One lock held for 4 of a command's 5 µs at 300,000 commands a second on 2 CPUs: the
    /// lock (at 1.2 of its capacity, 250,000) cannot keep up — no latency, a capacity of the
    /// lock's; over 64 stripes it can, and the store's part of the p99 is small.
    #[test]
    fn a_locked_stores_prediction_is_bounded_by_its_lock_and_stripes_lift_it() {
        let locked = experiment("\"queue-pool --store locked\"", "rate = 300000\n");
        let p = prediction(&locked, "queue-pool --store locked", 50, "0,1", 5.0, Some(4.0)).unwrap();
        assert!((p.capacity_rps - 250_000.0).abs() < 1.0, "{p:?}");
        assert_eq!(p.p99_us, None, "past the lock's capacity: no steady state");
        let striped = experiment("\"dispatch --store striped:64\"", "rate = 300000\n");
        let p = prediction(&striped, "dispatch --store striped:64", 50, "0,1", 5.0, Some(4.0)).unwrap();
        assert!(p.p99_us.is_some() && p.capacity_rps > 300_000.0, "{p:?}");
        // At 200,000 a second the one lock is at 0.8 and its waits are much of the p99; the
        // same holds over 64 stripes add a small part of it.
        let at = |x: &str, m: &str| {
            let e = experiment(
                &format!("\"{m}\""),
                &format!("rate = 200000\narrivals = \"poisson\"\n{x}"),
            );
            prediction(&e, m, 50, "0,1", 5.0, Some(4.0)).unwrap()
        };
        let (one, many) = (
            at("", "queue-pool --store locked"),
            at("", "dispatch --store striped:64"),
        );
        let (one_part, many_part) = (one.store_p99_us.unwrap(), many.store_p99_us.unwrap());
        assert!(one_part > 0.3 * one.p99_us.unwrap(), "{one:?}");
        assert!(many_part < one_part / 4.0, "{many:?} against {one:?}");
        // Without a timed critical section no lock is modelled, and nothing is put on it.
        let p = prediction(&striped, "dispatch --store striped:64", 50, "0,1", 5.0, None).unwrap();
        assert_eq!(p.store_p99_us, None);
    }

    /// A pipelined batch is one job of its commands: the same command rate and cost give the
    /// same capacity in commands, whatever the batch.
    #[test]
    fn a_batch_is_one_job_and_capacity_is_counted_in_commands() {
        let one = experiment("\"reactor\"", "rate = 100000\n");
        let piped = experiment("\"reactor\"", "rate = 100000\npipeline = 16\n");
        let a = prediction(&one, "reactor", 50, "0", 2.0, None).unwrap();
        let b = prediction(&piped, "reactor", 50, "0", 2.0, None).unwrap();
        assert!((a.capacity_rps - 500_000.0).abs() < 1.0, "{a:?}");
        assert!((b.capacity_rps - 500_000.0).abs() < 1.0, "{b:?}");
        assert!((b.throughput_rps / 100_000.0 - 1.0).abs() < 0.05, "{b:?}");
        assert_eq!(b.design_cpu_us, Some(2.0));
        assert!(
            prediction(&one, "io-threads", 50, "0,1", 2.0, None).is_none(),
            "its executor is not modelled"
        );
        assert!(not_modelled("io-threads --workers 2").contains("its executor"));
    }

    /// zipf 0.99 over 100,000 keys puts some 8 % of the commands on the hottest key, so its
    /// stripe of 64 carries far more than 1/64; uniform keys spread within a few per cent.
    #[test]
    fn hot_keys_make_hot_stripes() {
        let total = |w: &[f64]| w.iter().sum::<f64>();
        let z = shares(100_000, KeyDist::Zipf(0.99), 64);
        let hottest = z.iter().fold(0.0f64, |a, b| a.max(*b)) / total(&z);
        assert!(hottest > 0.08, "{hottest}");
        let u = shares(100_000, KeyDist::Uniform, 64);
        let most = u.iter().fold(0.0f64, |a, b| a.max(*b)) / total(&u);
        assert!(most < 1.0 / 64.0 * 1.1, "{most}");
    }
}
