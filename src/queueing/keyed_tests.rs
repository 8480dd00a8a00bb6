//! A keyed store in the simulation (`keyed`): one lock against stripes, a hot shard's owner as
//! a second queue, a pipelined batch's critical sections.

use std::time::Duration;

use super::tests::setup;
use super::*;

/// A keyed store's command of 10 µs on 2 workers and 2 CPUs at 80,000 a second. Under one
/// lock held for all of it the critical sections run one at a time (the lock at 0.8, the
/// workers at 0.4 each): its p99 is well above the unlocked store's, and its capacity is the
/// lock's (100,000 a second, not 200,000); over 64 stripes the same holds barely contend.
#[test]
fn one_lock_serialises_its_critical_sections_and_stripes_spread_them() {
    use super::keyed::{cumulative, Lock};
    let base = Setup {
        cpus: 2,
        design_cpu: Duration::from_micros(10),
        connections: Some(50),
        ..setup(Discipline::Shared, 2, 80_000.0, "cpu:0us")
    };
    let locked = |stripes: usize| Setup {
        lock: Some(Lock {
            stripes: cumulative(&vec![1.0; stripes]),
            hold: Duration::from_micros(10),
            commands: 1,
        }),
        ..base.clone()
    };
    let p99 = |s: &Setup| simulate(s).unwrap().percentile(0.99);
    let (free, one, striped) = (p99(&base), p99(&locked(1)), p99(&locked(64)));
    assert!(one > 2.0 * free, "one lock {one} against none {free}");
    assert!(striped < 1.3 * free, "64 stripes {striped} against none {free}");
    assert!((locked(1).capacity_rps() - 100_000.0).abs() < 1.0);
    assert!((base.capacity_rps() - 200_000.0).abs() < 1.0);
}

/// Shards, one per worker: where every key is worker 0's, every command's last part (here
/// all of it) queues at worker 0, a second queue, and the p99 grows well past the unsharded
/// store's and past that of keys spread evenly over the shards (whose hops share the work
/// out: each command then lands on a worker at random).
#[test]
fn a_hot_shards_owner_is_a_second_queue_every_hop_waits_in() {
    use super::keyed::{cumulative, Shards};
    let base = Setup {
        cpus: 2,
        design_cpu: Duration::from_micros(10),
        connections: Some(50),
        ..setup(Discipline::PerWorker(Assign::RoundRobin), 2, 80_000.0, "cpu:0us")
    };
    let sharded = |owners: &[f64]| Setup {
        shards: Some(Shards {
            owners: cumulative(owners),
            cost: Duration::from_micros(10),
            commands: 1,
        }),
        ..base.clone()
    };
    let run = |s: &Setup| simulate(s).unwrap();
    let (plain, hot, even) = (run(&base), run(&sharded(&[1.0, 0.0])), run(&sharded(&[1.0, 1.0])));
    let p99 = |r: &sim::Run| r.percentile(0.99);
    assert!(
        p99(&hot) > 1.5 * p99(&plain),
        "hot {} against plain {}",
        p99(&hot),
        p99(&plain)
    );
    assert!(
        p99(&hot) > 1.5 * p99(&even),
        "hot {} against even {}",
        p99(&hot),
        p99(&even)
    );
    // Every command still answered at the offered rate.
    assert!((hot.throughput / 80_000.0 - 1.0).abs() < 0.05, "{}", hot.throughput);
}

/// A pipelined batch of 16 commands is one request whose 16 critical sections run one after
/// another, each on its own key's stripe: over 64 stripes two workers' batches seldom meet on
/// a stripe, so the p99 stays near the unlocked store's; under one lock every section of every
/// batch queues for it. Every batch is answered at the offered rate either way.
#[test]
fn a_batchs_critical_sections_each_take_their_own_keys_stripe() {
    use super::keyed::{cumulative, Lock};
    let base = Setup {
        cpus: 2,
        design_cpu: Duration::from_micros(160),
        connections: Some(50),
        ..setup(Discipline::Shared, 2, 5_000.0, "cpu:0us")
    };
    let locked = |stripes: usize| Setup {
        lock: Some(Lock {
            stripes: cumulative(&vec![1.0; stripes]),
            hold: Duration::from_micros(10),
            commands: 16,
        }),
        ..base.clone()
    };
    let run = |s: &Setup| simulate(s).unwrap();
    let (free, one, striped) = (run(&base), run(&locked(1)), run(&locked(64)));
    let p99 = |r: &sim::Run| r.percentile(0.99);
    assert!(
        p99(&one) > 1.5 * p99(&free),
        "one lock {} against none {}",
        p99(&one),
        p99(&free)
    );
    assert!(
        p99(&striped) < 1.2 * p99(&free),
        "64 stripes {} against none {}",
        p99(&striped),
        p99(&free)
    );
    for r in [&free, &one, &striped] {
        assert!((r.throughput / 5_000.0 - 1.0).abs() < 0.05, "{}", r.throughput);
    }
    // The lock's bound counts every command's section: 1 / (16 × 10 µs) batches a second.
    assert!(
        (locked(1).capacity_rps() - 6_250.0).abs() < 1.0,
        "{}",
        locked(1).capacity_rps()
    );
}
