//! The verdict's sentences and rankings, case by case.
use crate::bench::judge::verdict;
use crate::bench::record::scenario::parse;
use crate::bench::record::{Cell, Figures};

pub(super) fn cell(target: &str, conns: usize, repeat: usize, rps: f64, cpu: f64, syscalls: f64, bound: bool) -> Cell {
    Cell {
        experiment: "e".into(),
        target: target.into(),
        twin: false,
        calibration: None,
        connections: conns,
        repeat,
        placed: None,
        does_no_work: false,
        status: crate::bench::record::CellStatus::Ok,
        seconds: 1.0,
        figures: Figures {
            throughput_rps: rps,
            requests: 10_000,
            p99_us: Some(1e6 / rps),
            server_cpu_us_per_req: Some(cpu),
            server_cpu_cores: Some(0.5),
            syscalls_per_req: Some(syscalls),
            client_bound: bound,
            ..Figures::default()
        },
        load: None,
        server_stats: None,
    }
}

pub(super) fn experiment() -> crate::bench::record::scenario::Experiment {
    crate::bench::record::scenario::experiment_of("\"epoll\", \"poll\", \"thread\"", "10, 100", "").unwrap()
}

/// A request class's p99 is ranked as every request's is, set against its service time,
/// and the verdict says on how many server CPUs it ran.
#[test]
fn each_class_gets_a_p99_finding_against_its_service_time_and_the_cpus_are_said() {
    use crate::bench::record::ClassFigure;
    let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"reactor\", \"thread\"]\nconnections = [10]\nduration = \"1s\"\n\
                work_from_request = true\nmix = [\"short=995:/?cpu=20us\", \"long=5:/?cpu=5ms\"]\n\
                expect = [\"short p99: thread < reactor\"]\n";
    let x = parse(text, "t").unwrap().experiments.remove(0);
    // 995 short requests to 5 long ones: the short class's p99 has its 1,000 samples, the long
    // class's has 100 of them.
    let class = |name: &str, path: &str, p99: f64| ClassFigure {
        name: name.into(),
        path: path.into(),
        requests: if name == "short" { 1000 } else { 100 },
        p99_us: Some(p99),
        ..Default::default()
    };
    let mut cells = Vec::new();
    for r in 0..3 {
        for (t, short) in [("reactor", 6000.0), ("thread", 80.0 + r as f64)] {
            let mut c = cell(t, 10, r, 5000.0, 30.0, 2.0, false);
            c.figures.classes = vec![class("short", "/?cpu=20us", short), class("long", "/?cpu=5ms", 9000.0)];
            cells.push(c);
        }
    }
    let ctx = crate::bench::judge::Context {
        server_cpus: Some(1),
        ..crate::bench::judge::Context::DOCUMENTED
    };
    let v = crate::bench::judge::verdict_with(&x, &cells, &ctx);
    let short = v.findings.iter().find(|f| f.class.as_deref() == Some("short")).unwrap();
    assert_eq!((short.best.as_str(), short.runner_up.as_str()), ("thread", "reactor"));
    assert!(short.clear);
    for said in [
        "e (server on 1 CPU): ",
        "P99 latency of short requests: thread is best, 74.08× reactor (81us against 6.00ms at 10 connections; 3 rounds, 72.55–75.64×).",
        "The short requests' p99 is 300× their 20us service time under reactor and 4.0× under thread: \
         under reactor they wait behind the long requests (5.00ms).",
        "P99 latency of long requests: too few samples to rank (100, 1,000 needed).",
        "Expected shape 'short p99: thread < reactor' holds",
    ] {
        assert!(v.text.contains(said), "{said}\n{}", v.text);
    }
    assert_eq!(v.expected[0].held, Some(true));
}

/// An open loop whose targets all kept up with the rate names no throughput winner, even
/// where three repeats' ranges do not overlap; one that fell behind is ranked as usual.
#[test]
fn an_open_loop_that_every_target_kept_up_with_has_no_throughput_winner() {
    let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"reactor\", \"thread\"]\nconnections = [10]\nduration = \"1s\"\nrate = 5000\n";
    let x = parse(text, "t").unwrap().experiments.remove(0);
    let mut cells = Vec::new();
    for r in 0..3 {
        cells.push(cell("reactor", 10, r, 5011.0, 50.0, 2.0, false));
        cells.push(cell("thread", 10, r, 5006.0, 50.0, 2.0, false));
    }
    let v = verdict(&x, &cells);
    says(
        &v,
        "Throughput: no difference between reactor and thread (1.00×): an open loop at 5,000 req/s",
    );
    assert!(!v.findings[0].clear);
    for c in cells.iter_mut().filter(|c| c.target == "thread") {
        c.figures.throughput_rps = 800.0;
    }
    let v = verdict(&x, &cells);
    says(&v, "Throughput: reactor is best, 6.26× thread");
}

/// With a target: capacity ranked first among the designs that do the work (a peer that
/// does none is named, not ranked), and every target without a capacity said with why.
#[test]
fn capacity_ranks_the_designs_doing_the_work_and_says_why_others_have_none() {
    let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"reactor\", \"epoll\", \"thread\"]\npeers = [\"nginx\"]\nconnections = [10]\n\
                work = \"cpu:50us\"\nslo = \"p99<=10ms\"\n";
    let sc = parse(text, "t").unwrap();
    let x = sc.experiments[0].clone();
    let capacity = |rps: Option<f64>, why: Option<&str>| crate::load::slo::Capacity {
        slo: "p99<=10ms".into(),
        rps,
        low: None,
        high: None,
        probes: Vec::new(),
        inconclusive: why.map(String::from),
    };
    let mut cells = Vec::new();
    for (t, rps, why) in [
        ("reactor", Some(17_500.0), None),
        ("epoll", Some(14_000.0), None),
        ("thread", None, Some("the client could not offer more than 9,000 req/s")),
        ("nginx", Some(60_000.0), None),
    ] {
        // nginx (no work) and thread (no capacity) would be cheapest per request.
        let cpu = match t {
            "reactor" => 50.0,
            "epoll" => 60.0,
            _ => 5.0,
        };
        let mut c = cell(t, 10, 0, rps.unwrap_or(9000.0), cpu, 2.0, false);
        c.figures.capacity = Some(capacity(rps, why));
        cells.push(c);
    }
    // As a run's record and a results file are: nginx does none of the work.
    crate::bench::record::settle(&sc, &Default::default(), &mut cells);
    assert!(cells.iter().any(|c| c.target == "nginx" && c.does_no_work));
    let v = verdict(&x, &cells);
    let f = &v.findings[0];
    assert_eq!(
        (f.metric.as_str(), f.best.as_str(), f.runner_up.as_str()),
        ("capacity at the target", "reactor", "epoll")
    );
    let cpu = finding(&v, "server CPU per request");
    assert_eq!(
        (cpu.best.as_str(), cpu.runner_up.as_str()),
        ("reactor", "epoll"),
        "CPU per request ranks the designs doing the work at their capacity"
    );
    assert!(
        !v.text.contains("P99 latency"),
        "held probes' p99s do not compare: {}",
        v.text
    );
    assert!(
        v.text.contains(
            "No capacity for thread (the client could not offer more than 9,000 req/s); nginx (it serves a fixed body"
        ),
        "{}",
        v.text
    );
}

/// Ranked over every count, the best can still lose at the largest, whose values are
/// quoted: the sentence says so instead of calling the smaller number the worse one.
#[test]
fn a_best_that_loses_at_the_largest_count_is_said_to_flip_there() {
    let mut cells = Vec::new();
    for r in 0..3 {
        let j = r as f64 * 0.01;
        for n in [10, 50] {
            cells.push(cell("epoll", n, r, 100_000.0, 2.0 + j, 2.0, false));
            cells.push(cell("poll", n, r, 100_000.0, 6.0 + j, 2.0, false));
        }
        cells.push(cell("epoll", 100, r, 100_000.0, 5.5 + j, 2.0, false));
        cells.push(cell("poll", 100, r, 100_000.0, 5.0 + j, 2.0, false));
    }
    let v = verdict(&experiment(), &cells);
    assert!(
        v.text.contains("Server CPU per request: epoll is best over all counts")
            && v.text.contains("at 100 connections, where the order flips"),
        "{}",
        v.text
    );
}

#[test]
fn a_clear_winner_is_named_with_its_ratio_and_the_counters_behind_it() {
    let mut cells = Vec::new();
    for r in 0..3 {
        let j = r as f64;
        for n in [10, 100] {
            cells.push(cell("epoll", n, r, 100_000.0 + j * 1000.0, 5.0 + j * 0.1, 2.0, false));
            cells.push(cell("poll", n, r, 80_000.0 + j * 1000.0, 6.5 + j * 0.1, 6.0, false));
            cells.push(cell("thread", n, r, 50_000.0 + j * 1000.0, 11.0, 2.0, true));
        }
    }
    let v = verdict(&experiment(), &cells);
    let cpu = finding(&v, "server CPU per request");
    assert_eq!(
        (cpu.best.as_str(), cpu.runner_up.as_str(), cpu.clear),
        ("epoll", "poll", true)
    );
    assert!((cpu.ratio - 6.6 / 5.1).abs() < 0.01, "{}", cpu.ratio);
    says(&v, "Server CPU per request: epoll is best, 1.29× poll");
    says(&v, "last is thread");
    says(&v, "Why: epoll has 2.00 syscalls per request against 6.00 (≈ 1.1 µs), of the 1.5 µs gap in server CPU per request to poll.");
    says(&v, "client was the limit in 6 of 18 cells");
}

/// Two syscalls cannot cover 20 µs: a counter that differs a lot but accounts for little
/// of the gap is not given as its reason.
#[test]
fn a_counter_too_small_to_cover_the_gap_is_not_its_reason() {
    let mut cells = Vec::new();
    for r in 0..3 {
        let j = r as f64 * 0.1;
        for n in [10, 100] {
            cells.push(cell("epoll", n, r, 10_000.0, 114.0 + j, 0.05, false));
            cells.push(cell("poll", n, r, 9_000.0, 134.0 + j, 2.08, false));
        }
    }
    let costs = crate::bench::judge::Context::DOCUMENTED;
    let v = crate::bench::judge::verdict_with(&experiment(), &cells, &costs);
    assert!(v.reasons.is_empty(), "{:?}", v.reasons);
    assert!(!v.text.contains("Why:"), "{}", v.text);
    assert!(
        v.text.contains(
            "The counters muxlab keeps do not explain the gap of 20.0 µs between epoll and poll: \
             0.05 syscalls per request against 2.08 (≈ 0.5 µs) (epoll) account for too little of it."
        ),
        "{}",
        v.text
    );
    // The same counter at 80 syscalls' difference covers it.
    let more: Vec<Cell> = cells
        .into_iter()
        .map(|mut c| {
            if c.target == "poll" {
                c.figures.syscalls_per_req = Some(80.0);
            }
            c
        })
        .collect();
    let v = crate::bench::judge::verdict_with(&experiment(), &more, &costs);
    says(&v, "Why: epoll has 0.05 syscalls per request against 80");
}

/// A design that starved connections anywhere is named best on nothing, not even from the
/// counts where it served everyone (before: best on p99 from those counts alone, and on
/// throughput); a memory difference under 1 MiB over all the connections is no difference.
#[test]
fn a_design_that_starved_anywhere_is_not_named_best_on_latency_or_memory() {
    let mut cells = Vec::new();
    for (r, n) in (0..3).flat_map(|r| [(r, 10), (r, 100)]) {
        let mut t = cell("thread", n, r, 200_000.0, 5.0, 2.0, false);
        t.figures.starved_conns = if n == 100 { 30 } else { 0 };
        t.figures.mem_per_conn_kib = Some(0.1);
        cells.push(t);
        for (m, rps, kib) in [("epoll", 100_000.0, 0.2), ("poll", 90_000.0, 0.3)] {
            let mut c = cell(m, n, r, rps, 5.0, 2.0, false);
            c.figures.mem_per_conn_kib = Some(kib);
            c.figures.established = n as u64;
            cells.push(c);
        }
    }
    let v = verdict(&experiment(), &cells);
    for metric in ["p99 latency", "throughput", "memory per connection"] {
        let f = finding(&v, metric);
        assert_eq!(f.best, "epoll", "{metric}: {}", v.text);
        assert!(f.unranked.contains(&"thread".to_string()), "{metric}");
    }
    let mem = finding(&v, "memory per connection");
    assert_eq!(mem.best, "epoll");
    assert!(!mem.clear, "0.1 KiB apart over 100 connections is 10 KiB: {}", v.text);
    says(&v, "under the 1 MiB the measurement resolves");
    assert!(
        v.headline.contains("thread starved 30 of 100 connections"),
        "{}",
        v.headline
    );
    assert!(!v.headline.starts_with("thread"), "{}", v.headline);
}

/// The finding of `metric` in `v` (the test fails if there is none).
pub(super) fn finding<'v>(v: &'v crate::bench::judge::Verdict, metric: &str) -> &'v crate::bench::judge::Finding {
    v.findings
        .iter()
        .find(|f| f.metric == metric)
        .unwrap_or_else(|| panic!("no finding of {metric}"))
}

/// Fails, showing the whole verdict, unless its text says `said`.
pub(super) fn says(v: &crate::bench::judge::Verdict, said: &str) {
    assert!(v.text.contains(said), "{said}\n{}", v.text);
}

/// A design with no late event at all is the best on late events, the others ranked behind it
/// in the order of their shares, every ratio finite: a share is floored at the rule of three's
/// bound before ranking, so none late is never a 0 that every ratio divides by.
#[test]
fn none_late_is_best_and_the_others_follow_by_their_shares_with_finite_ratios() {
    use crate::bench::record::StreamFigures;
    let x = crate::bench::record::scenario::experiment_of("\"epoll\", \"poll\", \"thread\"", "100", "").unwrap();
    let mut cells = Vec::new();
    // In the order the scenario lists them: the worst first, so order alone cannot pass.
    for (t, late) in [("epoll", 400), ("poll", 50), ("thread", 0)] {
        let mut c = cell(t, 100, 0, 5000.0, 30.0, 2.0, false);
        c.figures.streams = Some(StreamFigures {
            events: 10_000,
            server_events: Some(10_000),
            server_late: Some(late),
            window_s: 1.0,
            ..StreamFigures::default()
        });
        cells.push(c);
    }
    let v = verdict(&x, &cells);
    let f = v
        .findings
        .iter()
        .find(|f| f.metric == "late events")
        .expect("late events ranked");
    assert_eq!(
        (f.best.as_str(), f.runner_up.as_str()),
        ("thread", "poll"),
        "{}",
        v.text
    );
    let (last, times) = f.last.clone().expect("three designs");
    assert_eq!(last, "epoll");
    assert!(f.ratio.is_finite() && times.is_finite(), "{} {times}", f.ratio);
    assert!(!v.text.contains("NaN") && !v.text.contains("inf"), "{}", v.text);
}
