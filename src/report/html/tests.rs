use super::*;
use crate::bench::record::Cell;
use crate::bench::Results;

/// A finished cell of `target` at 50 connections in round `repeat`.
fn cell(target: &str, repeat: usize, rps: f64, cpu: f64) -> Cell {
    let mut c = Cell::new("e", target, 50, repeat);
    c.figures.throughput_rps = rps;
    c.figures.requests = 1000;
    c.figures.p99_us = Some(1e6 / rps);
    c.figures.server_cpu_us_per_req = Some(cpu);
    c
}

/// The report's table bolds, in paired rounds, the target best within rounds: B's raw
/// median CPU (9.5) is below A's (10.0), but A was cheaper in 2 of 3 rounds.
#[test]
fn a_paired_table_marks_the_best_within_rounds() {
    let text = "name = \"x\"\ndescription = \"d\"\nrepeats = 3\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                paired = true\nmodels = [\"epoll\", \"poll\"]\nconnections = [50]\nduration = \"1s\"\n";
    let scenario = crate::bench::scenario::parse(text, "t").unwrap();
    let mut cells = Vec::new();
    // Round 1 has the median throughput: its cells are the ones the table shows.
    for (r, (a, b)) in [(5.0, 6.0), (10.0, 9.5), (10.0, 11.0)].into_iter().enumerate() {
        let rps = 90_000.0 + 10_000.0 * r as f64;
        cells.push(cell("epoll", r, rps, a));
        cells.push(cell("poll", r, rps, b));
    }
    let mut results = Results::new(scenario, Default::default(), cells, false, Vec::new());
    let page = crate::report::html::render(&results);
    assert!(page.contains("<td class=\"best\">10.0<br>"), "epoll's CPU is marked");
    assert!(
        !page.contains("<td class=\"best\">9.5<br>"),
        "poll's lower median is not"
    );
    // Unpaired, the lower median is the best.
    results.scenario.experiments[0].paired = false;
    let page = crate::report::html::render(&results);
    assert!(page.contains("<td class=\"best\">9.5<br>"));
}

/// A cell that starved connections has a latency of the served ones only: however low, it
/// is never marked the best of its column, and its chart point is drawn hollow.
#[test]
fn a_starved_latency_is_never_marked_best() {
    let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"epoll\", \"prefork\"]\nconnections = [50]\nduration = \"1s\"\n";
    let scenario = crate::bench::scenario::parse(text, "t").unwrap();
    let mut starved = cell("prefork", 0, 50_000.0, 16.0);
    starved.figures.p99_us = Some(88.0);
    starved.figures.starved_conns = 46;
    let mut epoll = cell("epoll", 0, 100_000.0, 4.0);
    epoll.figures.p99_us = Some(700.0);
    let results = Results::new(scenario, Default::default(), vec![epoll, starved], false, Vec::new());
    let page = render(&results);
    assert!(
        page.contains("<td class=\"best\">700us</td>"),
        "epoll's p99 is the best ranked"
    );
    assert!(
        !page.contains("<td class=\"best\">88us</td>"),
        "prefork's starved p99 is not"
    );
    // prefork's points are drawn hollow, on every chart it has one (throughput, p99, CPU per
    // request): a design that starved connections is best on nothing. A circle with no fill
    // (the lines and axes have none either, so the circle itself is looked for).
    let hollow_circles = page
        .split("<circle")
        .skip(1)
        .filter(|c| c[..c.find('>').unwrap()].contains("fill=\"none\""))
        .count();
    assert_eq!(hollow_circles, 3, "prefork's three points, hollow");
}
