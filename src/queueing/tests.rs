use std::time::Duration;

use super::erlang::*;
use super::*;

fn work(spec: &str) -> Vec<Class> {
    vec![Class {
        name: String::new(),
        weight: 1.0,
        work: spec.parse().unwrap(),
        cap: Duration::from_secs(10),
    }]
}

pub(super) fn setup(discipline: Discipline, workers: usize, rate: f64, spec: &str) -> Setup {
    Setup {
        discipline,
        workers,
        cpus: 1,
        sharing: Sharing::Processor,
        design_cpu: Duration::ZERO,
        connections: None,
        arrivals: Arrivals::Open { rate, poisson: true },
        classes: work(spec),
        requests: 200_000,
        seed: 1,
        reserve: None,
        lock: None,
        shards: None,
    }
}

fn within(measured: f64, expected: f64, pct: f64) -> bool {
    (measured / expected - 1.0).abs() * 100.0 <= pct
}

#[test]
fn erlang_c_and_the_sojourn_quantiles_have_their_textbook_values() {
    assert!(
        (erlang_c(1, 0.5) - 0.5).abs() < 1e-12,
        "one server: the chance to wait is ρ"
    );
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
    // One server: the M/M/k tail is the M/M/1 one.
    let (a, b) = (
        mmk_sojourn_quantile(1, 500.0, 1000.0, 0.99),
        mm1_sojourn_quantile(500.0, 1000.0, 0.99),
    );
    assert!(within(a, b, 0.01), "{a} {b}");
    assert!(within(b, 0.0092103, 0.01), "ln(100) / 500 s: {b}");
}

/// The hidden probe's case: M/M/4 at ρ = 0.7 (sleep:exp(1ms), 2,800 req/s, one shared queue).
#[test]
fn a_shared_queue_of_four_is_m_m_4() {
    let s = setup(Discipline::Shared, 4, 2800.0, "sleep:exp(1ms)");
    let run = simulate(&s).unwrap();
    for q in [0.5, 0.9, 0.99] {
        let (sim, exact) = (run.percentile(q), mmk_sojourn_quantile(4, 2800.0, 1000.0, q));
        assert!(within(sim, exact, 5.0), "q{q}: simulated {sim}, Erlang C {exact}");
    }
    assert!(within(run.throughput, 2800.0, 2.0), "{}", run.throughput);
    let p = predict(&s).unwrap();
    assert!(within(
        p.p99_us.unwrap(),
        mmk_sojourn_quantile(4, 2800.0, 1000.0, 0.99) * 1e6,
        5.0
    ));
    assert!(
        within(p.capacity_rps, 4000.0, 1.0),
        "4 workers / 1 ms: {}",
        p.capacity_rps
    );
}

#[test]
fn one_worker_is_m_m_1_and_per_worker_queues_split_at_random_are_four_of_them() {
    let run = simulate(&setup(Discipline::Shared, 1, 500.0, "sleep:exp(1ms)")).unwrap();
    let exact = mm1_sojourn_quantile(500.0, 1000.0, 0.99);
    assert!(
        within(run.percentile(0.99), exact, 5.0),
        "{} {exact}",
        run.percentile(0.99)
    );
    // No connections modelled: each request goes to a worker at random, so each worker is an
    // M/M/1 queue at a quarter of the rate.
    let s = setup(Discipline::PerWorker(Assign::RoundRobin), 4, 2800.0, "sleep:exp(1ms)");
    let run = simulate(&s).unwrap();
    let exact = mm1_sojourn_quantile(700.0, 1000.0, 0.99);
    assert!(
        within(run.percentile(0.99), exact, 5.0),
        "{} {exact}",
        run.percentile(0.99)
    );
}

/// The shape blocking-calls measures: at 70 % load over 500 connections, a queue per worker has
/// about twice the p99 of one shared queue, and a thread per connection has the service's own.
#[test]
fn partitioned_queues_wait_longer_than_a_shared_one_and_threads_not_at_all() {
    // A thread per connection is bounded only by its CPU per request: 10 µs here.
    let with_conns = |d: Discipline| Setup {
        connections: Some(500),
        requests: 100_000,
        design_cpu: Duration::from_micros(10),
        ..setup(d, 4, 2800.0, "sleep:exp(1ms)")
    };
    let p99 = |d: Discipline| predict(&with_conns(d)).unwrap().p99_us.unwrap();
    let shared = p99(Discipline::Shared);
    let round_robin = p99(Discipline::PerWorker(Assign::RoundRobin));
    let random = p99(Discipline::PerWorker(Assign::Random));
    let threads = p99(Discipline::PerConnection);
    assert!(round_robin > 1.5 * shared, "{round_robin} {shared}");
    assert!(
        random > round_robin,
        "an uneven spread queues more: {random} {round_robin}"
    );
    assert!(within(threads, 4605.0, 5.0), "exp(1ms)'s own p99: {threads}");
}

#[test]
fn cpu_work_is_bounded_by_the_cpus_not_the_workers() {
    let on = |cpus: usize| Setup {
        cpus,
        ..setup(Discipline::Shared, 4, 5000.0, "cpu:exp(100us)")
    };
    assert!(within(on(1).capacity_rps(), 10_000.0, 1.0));
    assert!(within(on(4).capacity_rps(), 40_000.0, 1.0));
    let (one, four) = (predict(&on(1)).unwrap(), predict(&on(4)).unwrap());
    assert!(one.p99_us.unwrap() > 1.5 * four.p99_us.unwrap(), "{one:?} {four:?}");
    // A thread per connection on one CPU: processor sharing, whose mean time in the system at
    // ρ = 0.5 is twice the service time, as FIFO's.
    let ps = Setup {
        connections: Some(200),
        ..on(1)
    };
    let ps = Setup {
        discipline: Discipline::PerConnection,
        ..ps
    };
    let run = simulate(&ps).unwrap();
    let mean = run.mean();
    assert!(within(mean, 200e-6, 5.0), "{mean}");
}

#[test]
fn a_closed_loop_keeps_its_connections_busy() {
    let s = Setup {
        connections: Some(10),
        arrivals: Arrivals::Closed { think: Duration::ZERO },
        requests: 20_000,
        ..setup(Discipline::Shared, 1, 0.0, "cpu:1ms")
    };
    let p = predict(&s).unwrap();
    assert!(within(p.throughput_rps, 1000.0, 1.0), "{p:?}");
    assert!(
        within(p.p50_us.unwrap(), 10_000.0, 1.0),
        "ten in line, 1 ms each: {p:?}"
    );
}

#[test]
fn past_capacity_there_is_no_latency_to_predict_and_unknown_designs_get_none() {
    let p = predict(&setup(Discipline::Shared, 1, 1000.0, "sleep:1ms")).unwrap();
    assert_eq!((p.p50_us, p.p99_us), (None, None));
    assert!(within(p.capacity_rps, 1000.0, 0.1));
    assert!(predict(&setup(Discipline::Unknown, 1, 100.0, "sleep:1ms")).is_none());
    let none = Setup {
        classes: Vec::new(),
        ..setup(Discipline::Shared, 1, 100.0, "sleep:1ms")
    };
    assert!(predict(&none).is_none());
}

#[test]
fn the_same_seed_gives_the_same_prediction() {
    let s = Setup {
        requests: 20_000,
        ..setup(Discipline::Shared, 2, 1500.0, "sleep:exp(1ms)")
    };
    assert_eq!(predict(&s), predict(&s));
    let other = Setup { seed: 2, ..s.clone() };
    assert_ne!(predict(&s), predict(&other));
}

/// M/M/1 at 1 ms: p99 <= 10 ms holds up to λ = μ − ln(100)/10 ms = 539.5 req/s.
#[test]
fn the_capacity_within_a_bound_is_where_the_closed_form_says() {
    let s = setup(Discipline::Shared, 1, 100.0, "sleep:exp(1ms)");
    let c = capacity_within(&s, &[(0.99, 10_000.0)]).unwrap();
    // Each step's p99 comes from 100,000 correlated requests (a few per cent of noise).
    assert!(within(c, 1000.0 - 100.0f64.ln() / 0.010, 5.0), "{c}");
    assert!(capacity_within(&s, &[(0.99, 1.0)]).is_none(), "1 µs cannot hold");
}

/// Fewer connections than workers: only as many workers can be busy at once.
#[test]
fn capacity_counts_only_the_workers_connections_can_keep_busy() {
    let s = Setup {
        connections: Some(2),
        ..setup(Discipline::Shared, 4, 100.0, "sleep:exp(1ms)")
    };
    assert!(within(s.capacity_rps(), 2000.0, 1.0), "{}", s.capacity_rps());
    let model = crate::models::find("fork").unwrap();
    assert_eq!(discipline_of(model, 1, 500), Discipline::PerConnection);
    assert_eq!(
        discipline_of(model, 1, 5000),
        Discipline::Unknown,
        "past its connection limit"
    );
    let prefork = crate::models::find("prefork").unwrap();
    assert_eq!(discipline_of(prefork, 4, 4), Discipline::PerConnection);
    assert_eq!(discipline_of(prefork, 4, 5), Discipline::Unknown);
}

/// Processor sharing on two CPUs, and a closed loop with think time.
#[test]
fn two_cpus_halve_the_sharing_and_think_time_spaces_a_closed_loop() {
    // Ten connections, each computing 1 ms then thinking 9 ms: each CPU-busy a tenth of the
    // time, so ten of them keep one CPU busy and two CPUs half busy.
    let closed = |cpus: usize| Setup {
        cpus,
        connections: Some(10),
        arrivals: Arrivals::Closed {
            think: Duration::from_millis(9),
        },
        requests: 20_000,
        ..setup(Discipline::PerConnection, 1, 0.0, "cpu:1ms")
    };
    let one = simulate(&closed(1)).unwrap();
    let two = simulate(&closed(2)).unwrap();
    assert!(two.throughput > one.throughput, "{} {}", two.throughput, one.throughput);
    assert!(two.mean() < one.mean(), "{} {}", two.mean(), one.mean());
    // Two CPUs: at most 1,000 / (1 + 9) ms per connection = 1,000 req/s, nearly reached.
    assert!(within(two.throughput, 1000.0, 12.0), "{}", two.throughput);
}

/// M/M/1 two ways at ρ = 0.7: FIFO (one worker) and processor sharing (a thread per request on
/// one CPU). Both have the mean 1 / (μ − λ); FIFO's p99 is ln(100) / (μ − λ), and processor
/// sharing's tail is longer (a request's time grows with every arrival during it).
#[test]
fn processor_sharing_and_fifo_share_their_mean_and_not_their_tail() {
    let fifo = simulate(&setup(Discipline::Shared, 1, 7000.0, "cpu:exp(100us)")).unwrap();
    let ps = simulate(&setup(Discipline::PerConnection, 1, 7000.0, "cpu:exp(100us)")).unwrap();
    let mean = 1.0 / (10_000.0 - 7000.0);
    assert!(
        within(fifo.mean(), mean, 5.0) && within(ps.mean(), mean, 5.0),
        "{} {}",
        fifo.mean(),
        ps.mean()
    );
    let exact = mm1_sojourn_quantile(7000.0, 10_000.0, 0.99);
    assert!(
        within(fifo.percentile(0.99), exact, 5.0),
        "{} {exact}",
        fifo.percentile(0.99)
    );
    assert!(
        ps.percentile(0.99) > 1.15 * exact,
        "PS {} FIFO {exact}",
        ps.percentile(0.99)
    );
}

/// The head-of-line case: 99.5 % of requests 20 µs, 0.5 % 5 ms, 5,000 req/s, a thread per
/// connection on one CPU. Shared ideally, a short request barely notices a long one; in the
/// kernel's slices of 1.5 ms it waits for the rest of the long one's slice (measured on this
/// machine: a short p99 of 1.59 ms; the simulation, which leaves out wake-up preemption, waits
/// two slices where two long requests overlap, about 2 % of the time). A slice longer than any
/// request is FIFO.
#[test]
fn in_slices_a_short_request_waits_for_a_long_ones_slice() {
    let classes = |s: &mut Setup| {
        s.classes = vec![
            Class {
                name: "short".into(),
                weight: 995.0,
                work: "cpu:20us".parse().unwrap(),
                cap: Duration::from_secs(1),
            },
            Class {
                name: "long".into(),
                weight: 5.0,
                work: "cpu:5ms".parse().unwrap(),
                cap: Duration::from_secs(1),
            },
        ];
        s.connections = Some(100);
    };
    let short_p99 = |sharing: Sharing| {
        let mut s = setup(Discipline::PerConnection, 1, 5000.0, "cpu:20us");
        classes(&mut s);
        s.sharing = sharing;
        let p = predict(&s).unwrap();
        assert_eq!(p.classes.len(), 2, "{p:?}");
        assert_eq!(p.classes[0].name, "short");
        p.classes[0].p99_us.unwrap()
    };
    let ideal = short_p99(Sharing::Processor);
    let sliced = short_p99(Sharing::Slices(0.0015));
    let fifo = short_p99(Sharing::Slices(1.0));
    assert!(ideal < 200.0, "processor sharing: {ideal} µs");
    assert!((1000.0..3000.0).contains(&sliced), "a slice or two: {sliced} µs");
    assert!(fifo > 4000.0, "FIFO: behind the whole 5 ms: {fifo} µs");
}

/// A thread per connection whose work only waits is bounded by nothing but its own CPU per
/// request: without it there is no prediction ("not modelled"), with 20 µs it is 50,000 req/s.
#[test]
fn a_thread_per_connection_is_bounded_by_its_cpu_per_request() {
    let s = Setup {
        connections: Some(500),
        ..setup(Discipline::PerConnection, 1, 2800.0, "sleep:exp(1ms)")
    };
    assert!(predict(&s).is_none(), "unbounded: not modelled");
    let costed = Setup {
        design_cpu: Duration::from_micros(20),
        ..s
    };
    let p = predict(&costed).unwrap();
    assert!(within(p.capacity_rps, 50_000.0, 0.01), "{p:?}");
    assert_eq!(p.design_cpu_us, Some(20.0));
    // Its latency is the work's plus its CPU: exp(1ms)'s p99 and a little.
    assert!(within(p.p99_us.unwrap(), 4625.0, 5.0), "{p:?}");
}

/// The kernel's default slice: 0.75 ms × (1 + log2 of the CPUs, at most 8).
#[test]
fn the_default_slice_grows_with_the_log_of_the_cpus_up_to_eight() {
    let ms = |n: usize| default_slice(n).as_secs_f64() * 1e3;
    assert_eq!([ms(1), ms(2), ms(4), ms(8), ms(16)], [0.75, 1.5, 2.25, 3.0, 3.0]);
    let (slice, from) = base_slice();
    assert!(slice >= Duration::from_micros(100), "{slice:?} {from}");
    // Where the scheduler's debugfs is there, its base slice; else the kernel's default, said.
    match crate::testing::host_fact(crate::sys::host::Fact::SchedDebugfs).present {
        true => assert!(from.contains("debugfs"), "{from}"),
        false => {
            let cpus = crate::sys::machine::online_cpus().unwrap();
            assert_eq!(slice, default_slice(cpus));
            assert!(from.contains("the kernel's default (not exposed here)"), "{from}");
        }
    }
}

/// offload --reserve under=1ms:1 (Perséphone's DARC): 99.5 % short requests (20 µs) and 0.5 %
/// long ones (5 ms) of waiting, on a pool of 2. Without a reservation a short request waits
/// whenever both workers hold long ones; with one worker kept for short work it never waits
/// behind a long one, and the long class pays for it.
#[test]
fn a_reserved_worker_keeps_the_short_class_from_queueing_behind_the_long_one() {
    let classes = vec![
        Class {
            name: "short".into(),
            weight: 995.0,
            work: "sleep:20us".parse().unwrap(),
            cap: Duration::from_secs(10),
        },
        Class {
            name: "long".into(),
            weight: 5.0,
            work: "sleep:5ms".parse().unwrap(),
            cap: Duration::from_secs(10),
        },
    ];
    let base = Setup {
        classes,
        ..setup(Discipline::Shared, 2, 20_000.0, "sleep:20us")
    };
    let reserved = Setup {
        reserve: Some(crate::server::Reserve {
            under: Duration::from_millis(1),
            workers: 1,
        }),
        ..base.clone()
    };
    let (plain, kept) = (simulate(&base).unwrap(), simulate(&reserved).unwrap());
    let short = |r: &sim::Run| r.class_percentile(0, 0.999).unwrap();
    let long = |r: &sim::Run| r.class_percentile(1, 0.99).unwrap();
    assert!(
        short(&kept) * 3.0 < short(&plain),
        "short p99.9: {} reserved against {} plain",
        short(&kept),
        short(&plain)
    );
    assert!(
        long(&kept) > long(&plain),
        "the long class waits for the one worker it may take"
    );
}

/// Green threads: a blocking call holds no worker (one worker carries 2,800 req/s of 1 ms
/// sleeps, bounded by its CPU per request only, where one shared-queue worker carries 1,000),
/// and computing shares the workers in Go's 10 ms slices (a short request waits a slice
/// behind a 50 ms one, not its whole length as behind one worker's FIFO).
#[test]
fn green_threads_block_off_their_workers_and_compute_in_slices() {
    let s = Setup {
        design_cpu: Duration::from_micros(20),
        connections: Some(500),
        cpus: 2,
        ..setup(Discipline::Green, 1, 2800.0, "sleep:exp(1ms)")
    };
    let p = predict(&s).unwrap();
    // One worker computes: 1 ÷ 20 µs, not the two CPUs' 100,000.
    assert!(within(p.capacity_rps, 50_000.0, 0.01), "{p:?}");
    assert!(within(p.p99_us.unwrap(), 4625.0, 5.0), "{p:?}");
    assert_eq!(p.slice_us, Some(10_000.0));
    let shared = predict(&Setup {
        discipline: Discipline::Shared,
        ..s.clone()
    })
    .unwrap();
    assert!(shared.p99_us.is_none() && shared.capacity_rps < 1000.0, "{shared:?}");
    let mixed = |discipline| {
        let mut classes = work("cpu:50ms");
        classes[0].weight = 1.0;
        let mut short = work("cpu:100us");
        short[0].name = "short".into();
        short[0].weight = 99.0;
        classes.extend(short);
        let s = Setup {
            classes,
            cpus: 2,
            ..setup(discipline, 1, 150.0, "none")
        };
        predict(&s).unwrap().classes[1].p99_us.unwrap()
    };
    let (green, fifo) = (mixed(Discipline::Green), mixed(Discipline::Shared));
    assert!(green < 12_000.0, "a slice at most: {green} µs");
    assert!(fifo > 20_000.0, "behind the whole 50 ms: {fifo} µs");
}
