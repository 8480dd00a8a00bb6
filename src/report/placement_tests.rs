//! Targets compared only where the one rule allows and only with targets placed alike: a peer
//! doing none of the experiment's work is ranked and marked on nothing; targets that ran on other
//! CPUs are ranked apart, each group on its own, and the page marks none across groups; a cell
//! that completed no request records no latency.

use crate::bench::judge::metric::{rankable, Unranked, CPU};
use crate::bench::record::{Cell, Environment, Why};
use crate::bench::Results;

fn cell(x: &str, target: &str, rps: f64, cpu: f64, on: usize) -> Cell {
    let mut c = Cell::new(x, target, 100, 0);
    let f = &mut c.figures;
    f.throughput_rps = rps;
    f.requests = 100_000;
    // The faster, the lower its latency: one target best on every figure of its group.
    f.p50_us = Some(1e7 / rps);
    f.p99_us = Some(3e7 / rps);
    f.server_cpu_us_per_req = Some(cpu);
    f.server_cpu_cores = Some(0.5);
    f.mem_per_conn_kib = Some(10.0);
    f.established = 100;
    f.why = Some(Why {
        server_cpus: Some(on),
        ..Why::default()
    });
    c
}

fn judged(text: &str, env: Environment, cells: Vec<Cell>) -> Results {
    let scenario = crate::bench::scenario::parse(text, "t").unwrap();
    crate::bench::judge::judged(Results::new(scenario, env, cells, false, Vec::new()))
}

/// The bold cells of `target`'s rows in the page.
fn marks_of(page: &str, target: &str) -> usize {
    page.split("<tr")
        .filter(|row| row.contains(&format!("<td class=\"l\">{target}</td>")))
        .map(|row| row.matches("class=\"best\"").count())
        .sum()
}

#[test]
fn a_peer_doing_none_of_the_work_is_ranked_and_marked_on_nothing() {
    let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"epoll\", \"reactor\"]\npeers = [\"nginx\"]\nconnections = [100]\nduration = \"1s\"\n\
                work = \"cpu:exp(50us)\"\n";
    let cells = vec![
        cell("e", "epoll", 15_000.0, 60.0, 1),
        cell("e", "reactor", 16_000.0, 58.0, 1),
        // nginx serves a fixed body: the fastest and the cheapest, by far.
        cell("e", "nginx", 120_000.0, 5.2, 1),
    ];
    let r = judged(text, Environment::default(), cells);
    let nginx = r.cells.iter().find(|c| c.target == "nginx").unwrap();
    assert!(nginx.does_no_work, "settled from the scenario");
    let all: Vec<&Cell> = r.cells.iter().collect();
    assert_eq!(rankable(&CPU, nginx, &all).why_not(), Some(Unranked::DoesNoWork));
    let v = &r.verdicts[0];
    assert!(!v.findings.is_empty(), "{}", v.text);
    for f in &v.findings {
        assert!(f.best != "nginx" && f.runner_up != "nginx", "{f:?}");
    }
    assert!(!v.headline.contains("nginx is best"), "{}", v.headline);
    let page = crate::report::html::render(&r);
    assert_eq!(marks_of(&page, "nginx"), 0, "nginx marked best");
    assert!(marks_of(&page, "reactor") > 0, "the designs doing the work are marked");
}

#[test]
fn targets_placed_differently_are_ranked_apart_and_never_compared() {
    let text = "name = \"x\"\ndescription = \"d\"\nthreaded_cpus = \"0-1\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"reactor\", \"epoll\", \"multi-reactor\", \"dispatch\"]\nconnections = [100]\nduration = \"1s\"\n";
    let env = Environment {
        server_cpus: "0".into(),
        threaded_cpus: Some("0-1".into()),
        client_cpus: "1".into(),
        ..Environment::default()
    };
    let cells = vec![
        cell("e", "reactor", 30_000.0, 8.0, 1),
        cell("e", "epoll", 28_000.0, 9.0, 1),
        // On two CPUs: the fastest, but not against the designs on one.
        cell("e", "multi-reactor", 45_000.0, 7.0, 2),
        cell("e", "dispatch", 40_000.0, 7.5, 2),
    ];
    let r = judged(text, env, cells);
    let at = |t: &str| r.cells.iter().find(|c| c.target == t).unwrap().placed.clone().unwrap();
    assert_eq!(at("reactor").server_cpus, "0");
    assert_eq!(at("multi-reactor").server_cpus, "0-1");
    let v = &r.verdicts[0];
    let one = |t: &str| ["reactor", "epoll"].contains(&t);
    for f in &v.findings {
        assert_eq!(one(&f.best), one(&f.runner_up), "a finding across placements: {f:?}");
        assert!(f.placed.is_some(), "{f:?}");
    }
    assert!(
        v.findings.iter().any(|f| f.best == "multi-reactor"),
        "each group ranked: {:?}",
        v.findings
    );
    assert!(
        v.findings.iter().any(|f| f.best == "reactor"),
        "each group ranked: {:?}",
        v.findings
    );
    assert!(
        v.text.contains("Targets placed differently are not compared"),
        "{}",
        v.text
    );
    // Marks: the best of each group, none across (reactor is the best on one CPU).
    let page = crate::report::html::render(&r);
    assert!(marks_of(&page, "reactor") > 0 && marks_of(&page, "multi-reactor") > 0);
    assert_eq!(marks_of(&page, "epoll"), 0);
}

#[test]
fn a_cell_that_completed_no_request_records_no_latency() {
    let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"epoll\"]\nconnections = [100]\nduration = \"1s\"\n";
    let mut none = cell("e", "epoll", 0.0, 1.0, 1);
    none.figures.requests = 0;
    // What an older version wrote for a latency it did not measure.
    none.figures.p99_us = Some(0.0);
    let r = judged(text, Environment::default(), vec![none]);
    assert_eq!(r.cells[0].figures.p99_us, None);
    let json = serde_json::to_value(&r.cells[0]).unwrap();
    assert!(json["figures"]["p99_us"].is_null(), "{}", json["figures"]);
    assert!(json["figures"]["p50_us"].is_null());
}
