//! The fidelity verdict on planted cells.

use super::pairs::model_for;
use super::*;
use crate::bench::record::peer::Peer;
use crate::bench::record::scenario::parse;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Cell, CellStatus, Figures};

fn cell(x: &str, target: &str, p99: f64, cpu: f64) -> Cell {
    Cell {
        experiment: x.into(),
        target: target.into(),
        twin: false,
        calibration: None,
        connections: 100,
        repeat: 0,
        placed: None,
        does_no_work: false,
        status: CellStatus::Ok,
        seconds: 1.0,
        figures: Figures {
            throughput_rps: 1000.0,
            requests: 3000,
            p99_us: Some(p99),
            server_cpu_us_per_req: Some(cpu),
            ..Figures::default()
        },
        load: None,
        server_stats: None,
    }
}

fn experiments() -> Vec<Experiment> {
    let text = "name = \"s\"\ndescription = \"d\"\n\
        [[experiment]]\nname = \"calls\"\nproto = \"http\"\nmodels = [\"green\", \"thread\"]\n\
        peers = [\"go\", \"go time.Sleep\"]\nwork = \"sleep:exp(1ms)\"\nconnections = [100]\nduration = \"1s\"\n\
        [[experiment]]\nname = \"plain\"\nproto = \"http\"\nmodels = [\"thread\"]\npeers = [\"nginx\"]\n\
        connections = [100]\nduration = \"1s\"\n";
    parse(text, "t").unwrap().experiments
}

#[test]
fn a_model_within_one_and_a_half_times_on_both_figures_stands_and_one_outside_does_not() {
    let xs = experiments();
    let cells = vec![
        cell("calls", "green", 4600.0, 40.0),
        cell("calls", "go time.Sleep", 4900.0, 52.0),
        // CPU within, p99 0.62×: outside.
        cell("calls", "go", 7400.0, 43.0),
        cell("calls", "thread", 4700.0, 35.0),
    ];
    let rows = super::rows(&xs, &cells);
    // The thread model stands for no product; nginx's experiment has no procs-accept.
    assert_eq!(rows.len(), 2, "{rows:?}");
    let go = rows.iter().find(|r| r.product == "go").unwrap();
    assert_eq!((go.model.as_str(), go.stands), ("green", Some(false)));
    assert!((go.p99_ratio.unwrap() - 4600.0 / 7400.0).abs() < 1e-9);
    let sleep = rows.iter().find(|r| r.product == "go time.Sleep").unwrap();
    assert_eq!(sleep.stands, Some(true), "{sleep:?}");
    assert!(sleep.cause.is_empty());
    let v = verdict(&xs, &cells).expect("a product beside its model");
    assert!(
        v.headline
            .contains("in 1 of 2 pairs compared; not: green for go in calls (p99 0.62×)"),
        "{}",
        v.headline
    );
    assert_eq!(v.rows.len(), 2);
}

/// Go's two paths for a blocking call are the experiment's own control: where green stands
/// for one and not the other, the gap is named as that difference.
#[test]
fn a_sibling_entry_that_stands_names_the_gap_as_their_one_difference() {
    let xs = experiments();
    let cells = vec![
        cell("calls", "green", 4600.0, 40.0),
        cell("calls", "go time.Sleep", 4900.0, 52.0),
        cell("calls", "go", 7400.0, 43.0),
    ];
    let found = super::rows(&xs, &cells);
    let go = found.iter().find(|r| r.product == "go").unwrap();
    assert!(
        go.cause.starts_with(
            "on p99 green stands for go time.Sleep (0.94×), and the two differ only in this: go's blocking call is the nanosleep system call"
        ),
        "{}",
        go.cause
    );
    // The sibling out on CPU (0.59×) and within on p99: its CPU gap is named by go's, and
    // the figure it is within on is not said to explain anything.
    let cells = vec![
        cell("calls", "green", 4600.0, 40.0),
        cell("calls", "go time.Sleep", 4900.0, 68.0),
        cell("calls", "go", 7400.0, 43.0),
    ];
    let found = super::rows(&xs, &cells);
    let sleep = found.iter().find(|r| r.product == "go time.Sleep").unwrap();
    assert!(
        sleep.cause.starts_with(
            "on server CPU per request green stands for go (0.93×), and the two differ only in this: time.Sleep parks"
        ),
        "{}",
        sleep.cause
    );
    // Where the sibling is out on the same figure, it names nothing.
    let cells = vec![
        cell("calls", "green", 4600.0, 40.0),
        cell("calls", "go time.Sleep", 9900.0, 52.0),
        cell("calls", "go", 7400.0, 43.0),
    ];
    let found = super::rows(&xs, &cells);
    let go = found.iter().find(|r| r.product == "go").unwrap();
    assert_eq!((go.stands, go.cause.as_str()), (Some(false), UNNAMED));
}

/// A figure that may not be compared is shown, never a ratio, with why; a product that
/// did not run leaves its row not compared, saying so.
#[test]
fn a_figure_that_may_not_be_compared_is_shown_without_a_ratio_and_says_why() {
    let xs = experiments();
    let mut starved = cell("calls", "go", 900.0, 43.0);
    starved.figures.starved_conns = 3;
    let cells = vec![cell("calls", "green", 4600.0, 40.0), starved];
    let found = super::rows(&xs, &cells);
    let go = &found[0];
    assert_eq!((go.p99_product_us, go.p99_ratio), (Some(900.0), None));
    // A cell that starved connections is compared on nothing (the judge's one rule).
    assert_eq!((go.stands, go.cpu_ratio, go.cpu_product_us), (None, None, Some(43.0)));
    assert!(
        go.cause.contains("go's p99 is not compared: it starved connections"),
        "{}",
        go.cause
    );
    assert!(go.sentence().contains("not compared: go's p99"), "{}", go.sentence());
    let mut skipped = cell("calls", "go time.Sleep", 0.0, 0.0);
    skipped.status = CellStatus::Skipped("go is not installed (apt-get install golang-go)".into());
    skipped.figures.server_cpu_us_per_req = None;
    let cells = vec![cell("calls", "green", 4600.0, 40.0), skipped];
    let rows = super::rows(&xs, &cells);
    assert_eq!(rows[0].stands, None);
    assert!(rows[0].cause.contains("go is not installed"), "{}", rows[0].cause);
    assert_eq!(rows[0].cells()[10], "–");
    // Compared on one figure only: said so wherever it stands.
    let mut unranked = cell("calls", "go", 900.0, 43.0);
    unranked.figures.client_bound = true;
    let cells = vec![cell("calls", "green", 4600.0, 40.0), unranked];
    let rows = super::rows(&xs, &cells);
    assert_eq!(
        (rows[0].stands, rows[0].one_figure()),
        (Some(true), Some("CPU per request"))
    );
    assert_eq!(rows[0].cells()[10], "yes, on CPU per request only");
    let v = verdict(&xs, &cells).unwrap();
    assert!(
        v.headline.contains("in 1 of 1 pairs compared (1 of them on one figure"),
        "{}",
        v.headline
    );
}

/// The busier server is the slower one, and busy enough to queue: that is named.
#[test]
fn a_p99_gap_that_follows_the_utilization_is_named_by_it() {
    let xs = experiments();
    let busy = |target: &str, p99: f64, cores: f64| {
        let mut c = cell("calls", target, p99, 40.0);
        c.figures.server_cpu_cores = Some(cores);
        c.figures.why = Some(crate::bench::record::Why {
            server_cpus: Some(1),
            ..Default::default()
        });
        c
    };
    let cells = vec![busy("green", 3000.0, 0.3), busy("go", 9000.0, 0.8)];
    let found = super::rows(&xs, &cells);
    assert!(
        found[0].cause.contains("green kept its CPUs 30% busy, go 80%"),
        "{}",
        found[0].cause
    );
    // Both idle: no queue for a CPU to name.
    let cells = vec![busy("green", 3000.0, 0.1), busy("go", 9000.0, 0.3)];
    assert!(!rows_of(&xs, &cells).contains("busy, go"));
}

fn rows_of(xs: &[Experiment], cells: &[Cell]) -> String {
    rows(xs, cells).iter().map(|r| r.cause.clone()).collect()
}

#[test]
fn without_a_product_beside_its_model_there_is_no_fidelity_verdict() {
    let xs = experiments();
    let cells = vec![cell("plain", "thread", 100.0, 5.0), cell("plain", "nginx", 100.0, 5.0)];
    assert!(verdict(&xs, &cells).is_none());
}

/// Each figure is the median over the finished repeats, not the figure of the repeat whose
/// throughput was the median (in an open loop every repeat's throughput ties); a failed
/// repeat is left out, and a target none of whose repeats finished is not compared.
#[test]
fn each_figure_is_the_median_of_the_finished_repeats() {
    let xs = experiments();
    let at = |target: &str, repeat: usize, p99: f64, cpu: f64| {
        let mut c = cell("calls", target, p99, cpu);
        c.repeat = repeat;
        c
    };
    let mut failed = at("go", 3, 1.0, 1.0);
    failed.status = CellStatus::Failed("the server died".into());
    let cells = vec![
        at("green", 0, 4600.0, 40.0),
        at("green", 1, 4800.0, 41.0),
        at("green", 2, 4700.0, 39.0),
        at("go", 0, 170_900.0, 43.0),
        at("go", 1, 299_900.0, 45.0),
        at("go", 2, 208_400.0, 44.0),
        failed,
    ];
    let found = super::rows(&xs, &cells);
    let go = found.iter().find(|r| r.product == "go").unwrap();
    assert_eq!((go.p99_product_us, go.p99_model_us), (Some(208_400.0), Some(4700.0)));
    assert_eq!((go.cpu_product_us, go.cpu_model_us), (Some(44.0), Some(40.0)));
    // Every repeat failed: shown as not compared, never a ratio from a failed run.
    let mut dead = at("go", 0, 900.0, 43.0);
    dead.status = CellStatus::Failed("the server died".into());
    let found = super::rows(&xs, &[at("green", 0, 4600.0, 40.0), dead]);
    let go = &found[0];
    assert_eq!(
        (go.stands, go.p99_ratio, go.cpu_ratio, go.cpu_product_us),
        (None, None, None, None)
    );
    assert!(
        go.cause.contains("go's cell did not finish (the server died)"),
        "{}",
        go.cause
    );
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
            "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
             models = [\"procs-accept --workers 1\", \"green\"]\npeers = [\"nginx\", \"go\"]\nconnections = [100]\nduration = \"1s\"\n{extra}"
        )
    };
    let cells = vec![
        cell("e", "procs-accept --workers 1", 100.0, 5.0),
        cell("e", "nginx", 100.0, 5.0),
        cell("e", "green", 100.0, 5.0),
        cell("e", "go", 100.0, 5.0),
    ];
    let pairs = |extra: &str| -> Vec<String> {
        let xs = parse(&text(extra), "t").unwrap().experiments;
        super::rows(&xs, &cells).iter().map(|r| r.product.clone()).collect()
    };
    assert_eq!(pairs(""), ["nginx", "go"]);
    assert_eq!(pairs("work = \"cpu:50us\"\n"), ["go"]);
    assert!(pairs("work = \"cpu:50us\"\nslo = \"p99<=10ms\"\n").is_empty());
}

/// Of several entries of the model, the one with as many workers as the product has
/// threads serving stands beside it.
#[test]
fn the_model_entry_with_the_products_worker_count_is_its_pair() {
    let text = "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"green --workers 1\", \"green --workers 4\", \"offload\"]\n\
                peers = [\"go GOMAXPROCS=4\", \"go\", \"node worker_threads=2\"]\nworkers = 2\nconnections = [100]\nduration = \"1s\"\n";
    let xs = parse(text, "t").unwrap().experiments;
    let pair = |p: &str| model_for(&xs[0], Peer::parse(p).unwrap()).cloned();
    assert_eq!(pair("go GOMAXPROCS=4").as_deref(), Some("green --workers 4"));
    // GOMAXPROCS from the experiment's workers (2): no entry has 2, the first stands.
    assert_eq!(pair("go").as_deref(), Some("green --workers 1"));
    // offload's workers are the experiment's 2, as the pool's threads.
    assert_eq!(pair("node worker_threads=2").as_deref(), Some("offload"));
    // Node's one loop is one thread serving (reactor has no --workers to match it against).
    assert_eq!(Peer::parse("node").unwrap().serving_threads(Some(4)), Some(1));
}
