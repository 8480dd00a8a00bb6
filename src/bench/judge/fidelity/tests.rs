//! The fidelity verdict on planted cells.

use super::*;
use crate::bench::record::scenario::parse;
use crate::bench::record::{CellStatus, Figures};

fn cell(x: &str, target: &str, p99: f64, cpu: f64) -> Cell {
    Cell {
        experiment: x.into(),
        target: target.into(),
        twin: false,
        calibration: None,
        connections: 100,
        repeat: 0,
        status: CellStatus::Ok,
        seconds: 1.0,
        figures: Figures {
            throughput_rps: 1000.0,
            requests: 3000,
            p99_us: p99,
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
    assert_eq!(v.fidelity.len(), 2);
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
