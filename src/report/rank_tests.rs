//! Every consumer of a run's figures asks the one rule of what may be ranked
//! (`bench::judge::metric::rankable`): one results document holds a cell the client bound, a
//! design that starved connections in another cell, a memory gap under a mebibyte, a request
//! class with too few samples for its p99, and a stream experiment with too few gaps; the
//! verdict's prose, its headline and table, the report's marks, `report A B` and the cards
//! rank or mark none of them.

use crate::bench::judge::metric::{rankable, Rank, Unranked, GAP_P99, MEMORY, P99, THROUGHPUT};
use crate::bench::record::{Cell, ClassFigure, StreamFigures, Why};
use crate::bench::Results;

fn cell(x: &str, target: &str, n: usize, rps: f64, p99: f64, kib: f64) -> Cell {
    let mut c = Cell::new(x, target, n, 0);
    let f = &mut c.figures;
    f.throughput_rps = rps;
    f.requests = 100_000;
    f.p50_us = Some(p99 / 3.0);
    f.p99_us = Some(p99);
    f.server_cpu_us_per_req = Some(10.0);
    f.server_cpu_cores = Some(0.5);
    f.mem_per_conn_kib = Some(kib);
    f.established = n as u64;
    f.why = Some(Why::default());
    f.classes = vec![
        ClassFigure {
            name: "short".into(),
            path: "/?cpu=20us".into(),
            requests: 99_900,
            p50_us: Some(p99 / 4.0),
            p99_us: Some(p99 / 2.0),
            ..Default::default()
        },
        // 100 long requests: a p99 from them is their maximum.
        ClassFigure {
            name: "long".into(),
            path: "/?cpu=2ms".into(),
            requests: 100,
            p99_us: Some(p99 * 10.0),
            ..Default::default()
        },
    ];
    c
}

/// The document: `poll` fastest where its client was the limit, `thread` best on latency and
/// memory at 10 connections but starving at 100, `select` 0.05 KiB per connection under
/// `epoll` (5 KiB over 100 connections), a thin long class, and a stream experiment whose
/// gap p99s come from 14 gaps.
fn document() -> Results {
    let text = "name = \"x\"\ndescription = \"d\"\n\
                [[experiment]]\nname = \"e\"\nproto = \"http\"\nmodels = [\"epoll\", \"poll\", \"thread\", \"select\"]\n\
                connections = [10, 100]\nduration = \"1s\"\nwork_from_request = true\n\
                mix = [\"short=999:/?cpu=20us\", \"long=1:/?cpu=2ms\"]\n\
                [[experiment]]\nname = \"s\"\nproto = \"http\"\nmodels = [\"epoll\", \"poll\"]\nconnections = [100]\n\
                duration = \"1s\"\nsse = true\n";
    let scenario = crate::bench::scenario::parse(text, "t").unwrap();
    let mut cells = Vec::new();
    for n in [10, 100] {
        let mut epoll = cell("e", "epoll", n, 10_000.0, 1000.0, 2.0);
        epoll.figures.server_cpu_us_per_req = Some(5.0);
        cells.push(epoll);
        let mut poll = cell("e", "poll", n, 30_000.0, 300.0, 3.0);
        poll.figures.client_bound = n == 100;
        poll.figures.client_cpu_util = 0.99;
        cells.push(poll);
        let mut thread = cell("e", "thread", n, 20_000.0, 200.0, 1.0);
        thread.figures.starved_conns = if n == 100 { 7 } else { 0 };
        cells.push(thread);
        cells.push(cell("e", "select", n, 9_000.0, 1100.0, 1.95));
    }
    for (t, gap) in [("epoll", 21_000.0), ("poll", 60_000.0)] {
        let mut c = cell("s", t, 100, 0.0, 0.0, 1.0);
        c.figures.requests = 0;
        c.figures.server_cpu_us_per_req = None;
        c.figures.classes.clear();
        c.figures.streams = Some(StreamFigures {
            events: 1000,
            window_s: 1.0,
            gap_p99_us: Some(gap),
            gaps: Some(14),
            first_events: Some(100),
            ..StreamFigures::default()
        });
        cells.push(c);
    }
    let mut r = Results::new(scenario, Default::default(), cells, false, Vec::new());
    r.cells
        .iter_mut()
        .for_each(|c| c.status = crate::bench::record::CellStatus::Ok);
    crate::bench::judge::judged(r)
}

#[test]
fn no_consumer_ranks_or_marks_what_the_rule_leaves_unranked() {
    let r = document();
    let all: Vec<&Cell> = r.cells.iter().collect();
    let at = |x: &str, t: &str, n: usize| {
        r.cells
            .iter()
            .find(|c| c.experiment == x && c.target == t && c.connections == n)
            .unwrap()
    };
    // The rule itself.
    assert_eq!(
        rankable(&THROUGHPUT, at("e", "poll", 100), &all).why_not(),
        Some(Unranked::NotTheServer)
    );
    assert_eq!(
        rankable(&P99, at("e", "thread", 10), &all).why_not(),
        Some(Unranked::Elsewhere)
    );
    assert_eq!(
        rankable(&GAP_P99, at("s", "epoll", 100), &all).why_not(),
        Some(Unranked::TooFewSamples { n: 14, needed: 1000 })
    );
    assert!(matches!(
        rankable(&MEMORY, at("e", "select", 100), &all),
        Rank::Ranked(_)
    ));
    // The verdict: its findings, prose, headline and table.
    let v = &r.verdicts[0];
    for f in &v.findings {
        assert_ne!(f.best, "thread", "{}: {}", f.metric, v.text);
        if f.metric == THROUGHPUT.name || f.metric == P99.name {
            assert_ne!(f.best, "poll", "{}: {}", f.metric, v.text);
        }
        assert_ne!(
            f.class.as_deref(),
            Some("long"),
            "a thin class is not ranked on its p99: {}",
            v.text
        );
    }
    let mem = v.findings.iter().find(|f| f.metric == MEMORY.name).unwrap();
    assert!(!mem.clear, "5 KiB over 100 connections: {}", v.text);
    assert!(
        v.text
            .contains("P99 latency of long requests: too few samples to rank (100, 1,000 needed)"),
        "{}",
        v.text
    );
    for name in ["thread", "poll"] {
        let named = v.headline.starts_with(&format!("{name} is best")) || v.headline.contains(&format!("; {name} on "));
        assert!(!named, "{}", v.headline);
        assert!(
            v.table
                .iter()
                .all(|row| row.best != name || row.metric.starts_with("server CPU")),
            "{:?}",
            v.table
        );
    }
    let s = &r.verdicts[1];
    assert!(s.findings.iter().all(|f| f.metric != GAP_P99.name), "{}", s.text);
    assert!(
        s.text
            .contains("Event gap p99: too few samples to rank (14, 1,000 needed)"),
        "{}",
        s.text
    );
    // The report's marks: none on a row the verdict leaves unranked, nor memory that does not
    // resolve.
    let page = super::html::render(&r);
    for row in page
        .split("<tr")
        .filter(|row| row.contains(">thread<") || row.contains(">poll<"))
    {
        let row = row.split("</tr>").next().unwrap();
        let marked = row.matches("class=\"best\"").count();
        // poll at 10 connections is the server's and may be marked; its 100-connection row
        // and every thread row on nothing (epoll is the cheapest per request).
        if row.contains(">thread<") || row.contains("<td>100</td>") {
            assert_eq!(marked, 0, "{row}");
        }
    }
    assert!(
        !page.contains("<td class=\"best\">1.9"),
        "select's memory does not resolve from epoll's"
    );
    let at = page.find(">0us<").map(|i| &page[i.saturating_sub(300)..i + 20]);
    assert!(at.is_none(), "not measured is \"–\", never 0: {at:?}");
    // report A B: the run against itself compares nothing of the designs the rule leaves out.
    let rows = super::compare::rows(&r, &r, false);
    for row in rows.iter().filter(|row| row.target == "thread") {
        assert!(row.changes.iter().all(Option::is_none), "{row:?}");
    }
    let poll = rows
        .iter()
        .find(|row| row.target == "poll" && row.connections == 100)
        .unwrap();
    assert!(poll.changes[0].is_none() && poll.changes[1].is_none(), "{poll:?}");
}
