//! The fidelity verdict on planted cells.

use super::pairs::models_for;
use super::*;
use crate::bench::record::peer::Peer;
use crate::bench::record::scenario::parse;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Cell, CellStatus, Figures, Why};

/// A finished round of `target` in `x`: p50, p99 and CPU per request (µs), a round trip of
/// 20 µs, one server CPU at `busy`.
fn round(x: &str, target: &str, repeat: usize, p50: f64, p99: f64, cpu: f64, busy: f64) -> Cell {
    Cell {
        experiment: x.into(),
        target: target.into(),
        twin: false,
        calibration: None,
        connections: 100,
        repeat,
        placed: None,
        does_no_work: false,
        status: CellStatus::Ok,
        seconds: 1.0,
        figures: Figures {
            throughput_rps: 1000.0,
            requests: 3000,
            p50_us: Some(p50),
            p99_us: Some(p99),
            server_cpu_us_per_req: Some(cpu),
            server_cpu_cores: Some(busy),
            why: Some(Why {
                round_trip_us: Some(20.0),
                server_cpus: Some(1),
                ..Default::default()
            }),
            ..Figures::default()
        },
        load: None,
        server_stats: None,
    }
}

/// Three rounds of `target`, each figure scaled by the round's factor in `spread`.
fn rounds(x: &str, target: &str, p50: f64, p99: f64, cpu: f64, busy: f64, spread: [f64; 3]) -> Vec<Cell> {
    (0..3)
        .map(|r| {
            let k = spread[r];
            round(
                x,
                target,
                r,
                20.0 + (p50 - 20.0) * k,
                20.0 + (p99 - 20.0) * k,
                cpu,
                busy,
            )
        })
        .collect()
}

const EVEN: [f64; 3] = [1.0, 1.0, 1.0];

fn scenario(text: &str) -> Vec<Experiment> {
    parse(&format!("name = \"s\"\ndescription = \"d\"\n{text}"), "t")
        .unwrap()
        .experiments
}

/// Keep-alive without work, a closed loop: reactor beside Node, procs-accept beside nginx.
fn keepalive() -> Vec<Experiment> {
    scenario(
        "[[experiment]]\nname = \"ka\"\nproto = \"http\"\nmodels = [\"reactor\", \"procs-accept --workers 1\"]\n\
         peers = [\"node\", \"nginx\"]\nconnections = [100]\nduration = \"1s\"\n",
    )
}

/// The table's cell of `r` under the column named `name`.
fn column(r: &Row, name: &str) -> String {
    let i = COLUMNS.iter().position(|c| *c == name).expect("a column");
    r.cells()[i].clone()
}

fn row<'a>(rows: &'a [Row], product: &str) -> &'a Row {
    rows.iter().find(|r| r.product == product).unwrap()
}

/// Each side is read in its own E[S]: reactor at 10 µs a request and Node at 40 µs, each with
/// p99 30 E[S] past the round trip, stand for each other, whatever their absolute p99s
/// (4× apart) and CPUs; a pair whose shape is 2× in every round differs.
#[test]
fn a_pair_alike_in_its_own_service_time_stands_and_one_wholly_outside_differs() {
    let xs = keepalive();
    let mut cells = rounds("ka", "reactor", 20.0 + 20.0, 20.0 + 300.0, 10.0, 0.7, [1.0, 1.1, 0.95]);
    cells.extend(rounds(
        "ka",
        "node",
        20.0 + 80.0,
        20.0 + 1200.0,
        40.0,
        0.7,
        [1.05, 1.0, 0.97],
    ));
    cells.extend(rounds(
        "ka",
        "procs-accept --workers 1",
        20.0 + 40.0,
        20.0 + 600.0,
        10.0,
        0.7,
        EVEN,
    ));
    cells.extend(rounds("ka", "nginx", 20.0 + 20.0, 20.0 + 300.0, 10.0, 0.7, EVEN));
    let rows = super::rows(&xs, &cells);
    let node = row(&rows, "node");
    assert_eq!(node.answer, Some(Answer::Stands), "{node:?}");
    assert_eq!(
        (node.service_model_us, node.service_product_us),
        (Some(10.0), Some(40.0))
    );
    assert!((node.p99_model_es.unwrap() - 30.0).abs() < 1e-9, "{node:?}");
    let i = node.p99_ratio.unwrap();
    assert_eq!(i.rounds, 3);
    // Round by round: 1.0/1.05, 1.1/1.0, 0.95/0.97.
    assert!((i.lo - 1.0 / 1.05).abs() < 1e-9 && (i.hi - 1.1).abs() < 1e-9, "{i:?}");
    assert!(
        (node.cpu_ratio.unwrap() - 0.25).abs() < 1e-9,
        "CPU shown beside: {node:?}"
    );
    let nginx = row(&rows, "nginx");
    assert_eq!(nginx.answer, Some(Answer::Differs), "{nginx:?}");
    assert!((nginx.p99_ratio.unwrap().median - 2.0).abs() < 1e-9);
    let v = verdict(&xs, &cells).unwrap();
    assert!(
        v.headline.contains("1 of 2 pairs stand for their product")
            && v.headline.contains("1 differ and 0 are unresolved")
            && v.headline
                .contains("procs-accept --workers 1 for nginx in ka (p50 2.00×, p99 2.00×)"),
        "{}",
        v.headline
    );
    assert_eq!(column(nginx, "answer"), "differs");
    assert_eq!(column(nginx, "p99 shape ratio"), "2.00× [2.00–2.00]");
}

/// An interval across the margin is unresolved, and so is a single round (no interval),
/// each saying so; wholly inside stands, wholly outside differs.
#[test]
fn an_interval_across_the_margin_or_a_single_round_is_unresolved() {
    let i = |lo: f64, hi: f64, n: usize| Interval {
        median: (lo + hi) / 2.0,
        lo,
        hi,
        rounds: n,
    };
    assert_eq!(i(0.81, 1.24, 3).answer(), Answer::Stands);
    assert_eq!(i(1.26, 3.0, 3).answer(), Answer::Differs);
    assert_eq!(i(0.5, 0.79, 3).answer(), Answer::Differs);
    assert_eq!(i(1.1, 1.4, 3).answer(), Answer::Unresolved);
    assert_eq!(
        i(2.0, 2.0, 1).answer(),
        Answer::Unresolved,
        "one round gives no interval"
    );
    let xs = keepalive();
    let mut cells = rounds("ka", "reactor", 60.0, 320.0, 10.0, 0.7, [1.0, 1.4, 1.0]);
    cells.extend(rounds("ka", "node", 180.0, 1220.0, 40.0, 0.7, EVEN));
    let node = super::rows(&xs, &cells)
        .into_iter()
        .find(|r| r.product == "node")
        .unwrap();
    assert_eq!(node.answer, Some(Answer::Unresolved), "{node:?}");
    assert!(
        node.cause.contains("crosses the 1.25× margin over 3 rounds"),
        "{}",
        node.cause
    );
    let one: Vec<Cell> = vec![
        round("ka", "reactor", 0, 60.0, 620.0, 10.0, 0.7),
        round("ka", "node", 0, 180.0, 1220.0, 40.0, 0.7),
    ];
    let node = super::rows(&xs, &one)
        .into_iter()
        .find(|r| r.product == "node")
        .unwrap();
    assert_eq!(node.answer, Some(Answer::Unresolved));
    assert!(node.cause.contains("1 round: no interval"), "{}", node.cause);
}

/// A difference is named by a figure only where what it predicts covers half the gap: a
/// model kept 90% busy beside a product at 50% has an M/M/1 p99 gap of 4.6 × (10 − 2) = 36.8
/// E[S] — it names a gap of 40 E[S], not one of 400.
#[test]
fn a_gap_is_named_only_by_a_figure_that_covers_half_of_it() {
    let xs = keepalive();
    // Node's row: p99 past the round trip in E[S] (10 µs each side) and the busy share of each.
    let row_of = |(model_es, model_busy): (f64, f64), (product_es, product_busy): (f64, f64)| {
        let mut cells = rounds("ka", "reactor", 70.0, 20.0 + 10.0 * model_es, 10.0, model_busy, EVEN);
        cells.extend(rounds(
            "ka",
            "node",
            70.0,
            20.0 + 10.0 * product_es,
            10.0,
            product_busy,
            EVEN,
        ));
        super::rows(&xs, &cells)
            .into_iter()
            .find(|r| r.product == "node")
            .unwrap()
    };
    let pair = |model_p99_es: f64| row_of((model_p99_es, 0.9), (20.0, 0.5));
    let near = pair(60.0);
    assert_eq!(near.answer, Some(Answer::Differs), "{near:?}");
    assert!(
        near.cause
            .starts_with("reactor kept its CPUs 90% busy, node 50% (utilization: it predicts +36.84 E[S]")
            && near.cause.contains("of the p99 gap of +40.00 E[S], 92%"),
        "{}",
        near.cause
    );
    let far = pair(420.0);
    assert_eq!(far.answer, Some(Answer::Differs));
    assert!(
        far.cause.starts_with(
            "no measured figure covers half the p99 gap of +400.00 E[S] (and at most twice it): utilization 9%"
        ),
        "{}",
        far.cause
    );
    // A prediction far past the gap (36.84 E[S] against 10: 368 %) is not what made it.
    let over = row_of((30.0, 0.9), (20.0, 0.5));
    assert_eq!(over.answer, Some(Answer::Differs), "{over:?}");
    assert!(
        over.cause.starts_with(
            "no measured figure covers half the p99 gap of +10.00 E[S] (and at most twice it): utilization 368%"
        ),
        "{}",
        over.cause
    );
    // In the other direction (the busier side the faster) it names nothing either.
    let node = row_of((60.0, 0.5), (20.0, 0.9));
    assert!(
        node.cause.starts_with("no measured figure covers half"),
        "{}",
        node.cause
    );
}

/// `busy_of`: the experiment that set the rates is a calibration, no pair of its own; each
/// side is read in its own cost at the load it ran (not the one that set its rate), and a
/// utilization more than 5 points off the aim is said beside the row.
#[test]
fn under_busy_of_the_source_is_no_pair_each_side_is_read_in_its_cost_there_and_an_aim_missed_is_said() {
    let xs = scenario(
        "[[experiment]]\nname = \"cal\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nrate = 1000\nduration = \"1s\"\n\
         [[experiment]]\nname = \"at70\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nbusy_of = \"70% of cal\"\nduration = \"1s\"\n",
    );
    let mut cells = rounds("cal", "reactor", 30.0, 60.0, 8.0, 0.1, EVEN);
    cells.extend(rounds("cal", "node", 30.0, 60.0, 32.0, 0.1, EVEN));
    // At 70 % each costs other than in cal: E[S] is its cost here.
    cells.extend(rounds("at70", "reactor", 20.0 + 18.0, 20.0 + 180.0, 9.0, 0.71, EVEN));
    cells.extend(rounds("at70", "node", 20.0 + 80.0, 20.0 + 800.0, 40.0, 0.62, EVEN));
    let rows = super::rows(&xs, &cells);
    assert_eq!(rows.len(), 1, "cal sets the rates, at70 is the pair: {rows:?}");
    let r = &rows[0];
    assert_eq!((r.service_model_us, r.service_product_us), (Some(9.0), Some(40.0)));
    assert!((r.p99_ratio.unwrap().median - 1.0).abs() < 1e-9, "{r:?}");
    assert_eq!((r.load.as_str(), r.aimed), ("each 70% busy by its own E[S]", Some(0.7)));
    assert_eq!(r.answer, Some(Answer::Stands), "{r:?}");
    assert_eq!(r.note, "node kept its CPUs 62% busy, not the 70% aimed at");
}

/// A blocking call is part of E[S]; a pool's occupancy is its load, and Go, keeping no pool,
/// is compared at the same rate and said so; utilization names nothing there.
#[test]
fn blocking_calls_are_read_with_the_call_in_e_s_and_the_pool_as_the_load() {
    let xs = scenario(
        "[[experiment]]\nname = \"calls\"\nproto = \"http\"\nmodels = [\"green\", \"offload\"]\n\
         peers = [\"go\", \"node worker_threads=4\"]\nworkers = 4\nwork = \"sleep:exp(1ms)\"\n\
         connections = [100]\nrate = 2800\nduration = \"1s\"\n",
    );
    let call = |mut c: Cell| {
        c.figures.why.as_mut().unwrap().work_sleep_us = Some(1000.0);
        c
    };
    let mut cells: Vec<Cell> = Vec::new();
    for (t, p99, cpu, busy) in [
        ("green", 20.0 + 4.0 * 1040.0, 40.0, 0.1),
        ("go", 20.0 + 4.0 * 1050.0, 50.0, 0.15),
        ("offload", 20.0 + 3.0 * 1030.0, 30.0, 0.1),
        ("node worker_threads=4", 20.0 + 30.0 * 1200.0, 200.0, 0.6),
    ] {
        cells.extend(rounds("calls", t, 1000.0, p99, cpu, busy, EVEN).into_iter().map(call));
    }
    let rows = super::rows(&xs, &cells);
    let go = row(&rows, "go");
    assert_eq!(go.service_model_us, Some(1040.0));
    assert_eq!(go.answer, Some(Answer::Stands), "{go:?}");
    assert!(
        go.note.contains("Go keeps no pool") && go.note.contains("equal λ"),
        "{}",
        go.note
    );
    let node = row(&rows, "node worker_threads=4");
    assert_eq!(node.load, "one rate, 2,800 req/s: a pool of 4 at 70%, of 4 at 70%");
    assert_eq!(node.answer, Some(Answer::Differs));
    assert!(
        node.cause
            .contains("utilization names nothing where the work is a blocking call"),
        "{}",
        node.cause
    );
}

/// A figure that may not be ranked is not compared and says why (a starved round spoils every
/// round of its target, the judge's one rule); a product that did not run leaves its row not
/// compared, saying so; a repeat that failed is left out.
#[test]
fn a_figure_not_compared_says_why_a_starved_round_spoils_its_target_a_failed_one_is_left_out() {
    let xs = keepalive();
    let mut cells = rounds("ka", "reactor", 60.0, 620.0, 10.0, 0.7, EVEN);
    let mut theirs = rounds("ka", "node", 180.0, 2420.0, 40.0, 0.7, EVEN);
    theirs[1].figures.starved_conns = 3;
    cells.extend(theirs);
    let node = super::rows(&xs, &cells)
        .into_iter()
        .find(|r| r.product == "node")
        .unwrap();
    // A starved round spoils the target's every round (the judge's one rule).
    assert_eq!((node.answer, node.p99_ratio), (None, None));
    assert!(
        node.cause
            .contains("node's p99 latency is not compared: it starved connections"),
        "{}",
        node.cause
    );
    assert!(node.sentence().contains("not compared: "), "{}", node.sentence());
    let mut skipped = round("ka", "node", 0, 0.0, 0.0, 0.0, 0.0);
    skipped.status = CellStatus::Skipped("node is not installed (apt-get install nodejs)".into());
    let mut cells = rounds("ka", "reactor", 60.0, 620.0, 10.0, 0.7, EVEN);
    cells.push(skipped);
    let node = super::rows(&xs, &cells)
        .into_iter()
        .find(|r| r.product == "node")
        .unwrap();
    assert_eq!(node.answer, None);
    assert!(node.cause.contains("node is not installed"), "{}", node.cause);
    assert_eq!(column(&node, "answer"), "–");
    // A failed repeat is left out: the two that finished give the interval.
    let mut cells = rounds("ka", "reactor", 60.0, 620.0, 10.0, 0.7, EVEN);
    let mut theirs = rounds("ka", "node", 180.0, 2420.0, 40.0, 0.7, EVEN);
    theirs[2].status = CellStatus::Failed("the server died".into());
    cells.extend(theirs);
    let node = super::rows(&xs, &cells)
        .into_iter()
        .find(|r| r.product == "node")
        .unwrap();
    assert_eq!(node.p99_ratio.map(|i| i.rounds), Some(2));
    // A p99 within the round trip is no shape.
    let mut cells = rounds("ka", "reactor", 60.0, 620.0, 10.0, 0.7, EVEN);
    cells.extend(rounds("ka", "node", 15.0, 2420.0, 40.0, 0.7, EVEN));
    let node = super::rows(&xs, &cells)
        .into_iter()
        .find(|r| r.product == "node")
        .unwrap();
    assert!(node.p50_ratio.is_none() && node.p99_ratio.is_some(), "{node:?}");
    // Within the margin on p99 alone: half the question, unresolved.
    assert_eq!(node.answer, Some(Answer::Unresolved));
    assert!(
        node.cause
            .contains("within 1.25× on p99 only, the other figure not compared"),
        "{}",
        node.cause
    );
    assert!(
        node.cause
            .contains("node's p50 latency (15us) is within the machine's round trip (20us)"),
        "{}",
        node.cause
    );
    assert!(node.sentence().contains("p50 not compared"), "{}", node.sentence());
}

#[test]
fn without_a_product_beside_its_model_there_is_no_fidelity_verdict() {
    let xs = scenario(
        "[[experiment]]\nname = \"plain\"\nproto = \"http\"\nmodels = [\"thread\"]\npeers = [\"nginx\"]\n\
         connections = [100]\nduration = \"1s\"\n",
    );
    let mut cells = rounds("plain", "thread", 60.0, 100.0, 5.0, 0.5, EVEN);
    cells.extend(rounds("plain", "nginx", 60.0, 100.0, 5.0, 0.5, EVEN));
    assert!(verdict(&xs, &cells).is_none());
}

#[test]
fn a_ratio_under_a_tenth_keeps_its_digits() {
    assert_eq!(ratio_said(0.65), "0.65×");
    assert_eq!(ratio_said(0.02), "0.020×");
    assert_eq!(ratio_said(0.0036), "0.0036×");
    assert_eq!(ratio_said(428.6), "428.60×");
}

/// nginx serves a fixed body whatever the work: beside a model doing the work it is another
/// load, and a capacity search sets each target at its own rate: neither is a pair.
#[test]
fn a_product_doing_none_of_the_work_or_a_capacity_search_is_no_pair() {
    let text = |extra: &str| {
        format!(
            "[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
             models = [\"procs-accept --workers 1\", \"green\"]\npeers = [\"nginx\", \"go\"]\nconnections = [100]\nduration = \"1s\"\n{extra}"
        )
    };
    let mut cells = Vec::new();
    for t in ["procs-accept --workers 1", "nginx", "green", "go"] {
        cells.extend(rounds("e", t, 60.0, 100.0, 5.0, 0.5, EVEN));
    }
    let pairs = |extra: &str| -> Vec<String> {
        let xs = scenario(&text(extra));
        super::rows(&xs, &cells).iter().map(|r| r.product.clone()).collect()
    };
    assert_eq!(pairs(""), ["nginx", "go"]);
    assert_eq!(pairs("work = \"cpu:50us\"\n"), ["go"]);
    assert!(pairs("work = \"cpu:50us\"\nslo = \"p99<=10ms\"\n").is_empty());
}

/// Of several entries of a model, the one with as many workers as the product has threads
/// serving stands beside it; memcached has two designs beside it (dispatch, multi-reactor).
#[test]
fn the_model_entry_with_the_products_worker_count_is_its_pair() {
    let xs = scenario(
        "[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
         models = [\"green --workers 1\", \"green --workers 4\", \"offload\"]\n\
         peers = [\"go GOMAXPROCS=4\", \"go\", \"node worker_threads=2\"]\nworkers = 2\nconnections = [100]\nduration = \"1s\"\n",
    );
    let pair = |p: &str| -> Vec<String> {
        models_for(&xs[0], Peer::parse(p).unwrap())
            .into_iter()
            .cloned()
            .collect()
    };
    assert_eq!(pair("go GOMAXPROCS=4"), ["green --workers 4"]);
    // GOMAXPROCS from the experiment's workers (2): no entry has 2, the first stands.
    assert_eq!(pair("go"), ["green --workers 1"]);
    // offload's workers are the experiment's 2, as the pool's threads.
    assert_eq!(pair("node worker_threads=2"), ["offload"]);
    // Node's one loop is one thread serving (reactor has no --workers to match it against).
    assert_eq!(Peer::parse("node").unwrap().serving_threads(Some(4)), Some(1));
    let kv = scenario(
        "[[experiment]]\nname = \"mc\"\nproto = \"memcache\"\n\
         models = [\"dispatch --workers 2 --store striped:8\", \"multi-reactor --workers 2 --store striped:8\", \"dispatch --workers 1 --store striped:8\"]\n\
         peers = [\"memcached -t 2\"]\nconnections = [10]\nduration = \"1s\"\n",
    );
    assert_eq!(
        models_for(&kv[0], Peer::parse("memcached -t 2").unwrap()),
        [&kv[0].models[0], &kv[0].models[1]]
    );
}

/// A pair limited by its CPUs at one rate is not at equal load where its busy shares differ
/// by more than 5 points: the row says so, and points to `busy_of`.
#[test]
fn one_rate_for_a_pair_limited_by_its_cpus_at_different_busy_shares_is_said_not_equal_load() {
    let xs = scenario(
        "[[experiment]]\nname = \"hol\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nrate = 5000\nduration = \"1s\"\n",
    );
    let mut cells = rounds("hol", "reactor", 60.0, 620.0, 10.0, 0.31, EVEN);
    cells.extend(rounds("hol", "node", 180.0, 2420.0, 40.0, 0.60, EVEN));
    let rows = super::rows(&xs, &cells);
    assert!(
        rows[0]
            .note
            .starts_with("one rate is not equal load: reactor kept its CPUs 31% busy, node 60%"),
        "{}",
        rows[0].note
    );
    let mut cells = rounds("hol", "reactor", 60.0, 620.0, 10.0, 0.58, EVEN);
    cells.extend(rounds("hol", "node", 180.0, 2420.0, 40.0, 0.60, EVEN));
    assert_eq!(super::rows(&xs, &cells)[0].note, "");
}

/// A ladder of `busy_of` rungs, each naming the one below: every rung is a pair, only the root
/// at one rate of its own is the calibration.
#[test]
fn every_rung_of_a_busy_of_ladder_is_a_pair_and_only_its_root_is_not() {
    let exp = |name: &str, keys: &str| {
        format!(
            "[[experiment]]\nname = \"{name}\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
             connections = [100]\nduration = \"1s\"\n{keys}"
        )
    };
    let xs = scenario(&format!(
        "{}{}{}{}",
        exp("root", "rate = 1000\n"),
        exp("at50", "busy_of = \"50% of root\"\n"),
        exp("at70", "busy_of = \"70% of at50\"\n"),
        exp("at90", "busy_of = \"90% of at70\"\n")
    ));
    let mut cells = Vec::new();
    for (x, busy) in [("root", 0.1), ("at50", 0.5), ("at70", 0.7), ("at90", 0.9)] {
        cells.extend(rounds(x, "reactor", 60.0, 620.0, 10.0, busy, EVEN));
        cells.extend(rounds(x, "node", 180.0, 2420.0, 40.0, busy, EVEN));
    }
    let found: Vec<(String, Option<f64>)> = super::rows(&xs, &cells)
        .into_iter()
        .map(|r| (r.experiment, r.aimed))
        .collect();
    assert_eq!(
        found,
        [
            ("at50".to_string(), Some(0.5)),
            ("at70".to_string(), Some(0.7)),
            ("at90".to_string(), Some(0.9))
        ]
    );
}

/// The median's interval: the least and the most up to 7 rounds, then the narrowest pair of
/// order statistics that covers it 90 % of the time (8 rounds: the 2nd and the 7th, 93 %).
#[test]
fn the_interval_of_the_median_narrows_by_order_statistics_past_seven_rounds() {
    let i = Interval::of(&[1.3, 0.9, 1.0]).unwrap();
    assert_eq!((i.lo, i.median, i.hi, i.rounds), (0.9, 1.0, 1.3, 3));
    let five = Interval::of(&[5.0, 1.0, 2.0, 4.0, 3.0]).unwrap();
    assert_eq!((five.lo, five.hi), (1.0, 5.0));
    let seven = Interval::of(&[7.0, 1.0, 2.0, 6.0, 3.0, 5.0, 4.0]).unwrap();
    assert_eq!(
        (seven.lo, seven.hi),
        (1.0, 7.0),
        "the 2nd and 6th of 7 cover it 87.5 %: too little"
    );
    let eight = Interval::of(&[8.0, 1.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0]).unwrap();
    assert_eq!((eight.lo, eight.median, eight.hi), (2.0, 4.5, 7.0));
    assert_eq!(Interval::of(&[f64::NAN, 2.0]).map(|i| i.rounds), Some(1));
    assert!(Interval::of(&[]).is_none());
}

/// A rate an earlier experiment set (`rate_of`) is one rate for both, not a closed loop.
#[test]
fn a_rate_of_experiment_is_one_rate_not_a_closed_loop() {
    let xs = scenario(
        "[[experiment]]\nname = \"sat\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nduration = \"1s\"\n\
         [[experiment]]\nname = \"at50\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nrate_of = \"50% of sat\"\nduration = \"1s\"\n",
    );
    let mut cells = rounds("at50", "reactor", 60.0, 620.0, 10.0, 0.3, EVEN);
    cells.extend(rounds("at50", "node", 180.0, 2420.0, 40.0, 0.6, EVEN));
    let r = super::rows(&xs, &cells)
        .into_iter()
        .find(|r| r.experiment == "at50")
        .unwrap();
    assert_eq!(r.load, "one rate, 50% of sat");
    assert!(r.note.starts_with("one rate is not equal load"), "{}", r.note);
}
