//! `report A B` and a run against its reference: the rows, the table, the page's section.

use crate::bench::record::scenario::parse;
use crate::bench::record::{Cell, Figures};
use crate::bench::Results;
use crate::report::compare::{html, rows, table};

fn results(rps: &[(&str, f64)]) -> Results {
    let text = "name = \"x\"\ndescription = \"d\"\nrepeats = 2\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"epoll\", \"poll\"]\nconnections = [10]\nduration = \"1s\"\n";
    let scenario = parse(text, "t").unwrap();
    let cells = rps
        .iter()
        .enumerate()
        .map(|(i, (t, v))| Cell {
            experiment: "e".into(),
            target: t.to_string(),
            twin: false,
            calibration: None,
            connections: 10,
            repeat: i,
            placed: None,
            does_no_work: false,
            status: crate::bench::record::CellStatus::Ok,
            seconds: 1.0,
            figures: Figures {
                throughput_rps: *v,
                p99_us: Some(100.0),
                requests: 10_000,
                server_cpu_us_per_req: Some(1e6 / v),
                ..Figures::default()
            },
            load: None,
            server_stats: None,
        })
        .collect();
    Results::new(scenario, Default::default(), cells, false, Vec::new())
}

#[test]
fn changes_beyond_the_noise_are_marked_and_the_rest_are_not() {
    let a = results(&[
        ("epoll", 100.0),
        ("epoll", 104.0),
        ("epoll", 102.0),
        ("poll", 100.0),
        ("poll", 110.0),
        ("poll", 105.0),
    ]);
    let b = results(&[
        ("epoll", 120.0),
        ("epoll", 124.0),
        ("epoll", 122.0),
        ("poll", 105.0),
        ("poll", 95.0),
        ("poll", 100.0),
    ]);
    let r = rows(&a, &b, false);
    assert_eq!(r.len(), 2);
    let epoll = &r[0].changes[0].as_ref().unwrap();
    assert!((epoll.ratio - 122.0 / 102.0).abs() < 1e-3, "{epoll:?}");
    assert_eq!(epoll.verdict, Some(true), "throughput up beyond the spread is better");
    assert_eq!(
        r[0].changes[2].as_ref().unwrap().verdict,
        Some(true),
        "less CPU is better"
    );
    assert_eq!(
        r[1].changes[0].as_ref().unwrap().verdict,
        None,
        "overlapping ranges are noise"
    );
    let t = table("A", "B", &r);
    assert!(t.contains("better") && t.contains("1 better and 0 worse"), "{t}");
    // The answer first: what moved beyond the noise.
    assert!(
        t.starts_with("B against A, beyond the noise: throughput better in 1 of 2 cells; "),
        "{t}"
    );
    assert_eq!(
        crate::report::compare::headline(&r[1..]),
        "B against A: nothing changed beyond the noise in 1 cells."
    );
    assert!(html("A", "B", &r).contains("class=\"better\""));
}

/// `reference = "epoll"` in a paired experiment: poll at 0.9× epoll's CPU in each of 8
/// drifting rounds is cheaper beyond the noise, said in words, in the terminal table and in
/// the report; the reference is not compared with itself.
#[test]
fn every_target_is_compared_with_the_reference_round_by_round() {
    use crate::report::compare::against_reference;
    let drift = [100.0, 150.0, 80.0, 120.0, 95.0, 130.0, 90.0, 110.0];
    let mut r = results(&[]);
    r.scenario.experiments[0].paired = true;
    r.scenario.experiments[0].reference = Some("epoll".into());
    let mut all = results(&drift.map(|v| ("epoll", v)));
    all.cells.extend(results(&drift.map(|v| ("poll", v / 0.9))).cells);
    r.cells = all.cells;
    let a = against_reference(&r);
    assert_eq!(a.len(), 1);
    assert_eq!(
        a[0].rows.len(),
        1,
        "only poll: the reference is not compared with itself"
    );
    let cpu = a[0].rows[0].changes[2].as_ref().unwrap();
    assert!((cpu.ratio - 0.9).abs() < 1e-9, "{cpu:?}");
    assert_eq!(cpu.verdict, Some(true), "cheaper in 8 of 8 rounds");
    let words = a[0].sentence();
    assert!(
        words.contains("1 of 1 cells cheaper") && words.contains("the cheapest is poll at 10 connections, 0.90×"),
        "{words}"
    );
    assert!(words.contains("cheaper in 8 of 8 paired rounds"), "{words}");
    assert!(a[0].table().contains("lowest–highest round"));
    let page = crate::report::html::render(&r);
    assert!(page.contains("Against the reference") && page.contains("CPU/request / epoll"));
    assert!(page.contains("Paired rounds: this table shows each target's own medians"));
    // Without a reference, nothing is said.
    r.scenario.experiments[0].reference = None;
    assert!(against_reference(&r).is_empty());
    assert!(!crate::report::html::render(&r).contains("Against the reference"));
}

/// A reference that is not one of the experiment's targets is refused, naming the field.
#[test]
fn a_reference_that_is_not_a_target_is_refused() {
    let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                models = [\"epoll\"]\npeers = [\"nginx\"]\nreference = \"ngnix\"\nconnections = [10]\nduration = \"1s\"\n";
    let e = parse(text, "t").unwrap_err().to_string();
    assert!(
        e.contains("field 'reference'") && e.contains("\"ngnix\" is not one of its models or peers"),
        "{e}"
    );
    assert!(parse(&text.replace("ngnix", "nginx"), "t").is_ok());
}

/// One paired run with a baseline: each round's B/A counts. B 8% faster in every one of
/// five rounds is beyond the noise though the machine's drift makes the ranges overlap;
/// compared as two separate runs, it is not.
#[test]
fn paired_rounds_of_one_run_compare_round_by_round() {
    let drift = [100.0, 150.0, 80.0, 120.0, 95.0];
    let a = results(&drift.map(|v| ("epoll", v)));
    let b = results(&drift.map(|v| ("epoll", v * 1.08)));
    let (mut pa, mut pb) = (a.clone(), b.clone());
    pa.scenario.experiments[0].paired = true;
    pb.scenario.experiments[0].paired = true;
    let paired = rows(&pa, &pb, true);
    let t = paired[0].changes[0].as_ref().unwrap();
    assert!(
        (t.ratio - 1.08).abs() < 1e-9 && (t.spread.0 - 1.08).abs() < 1e-9,
        "{t:?}"
    );
    assert_eq!(t.verdict, Some(true));
    assert_eq!(rows(&pa, &pb, false)[0].changes[0].as_ref().unwrap().verdict, None);
    assert_eq!(rows(&a, &b, true)[0].changes[0].as_ref().unwrap().verdict, None);
}

/// A run whose design starved connections is compared on nothing (the verdicts' rule,
/// `metric::rankable`): its figures cover only the connections it served. Its p99 was the
/// only figure left out before.
#[test]
fn a_starved_design_is_not_compared() {
    let a = results(&[("epoll", 100.0), ("epoll", 104.0)]);
    let b = results(&[("epoll", 120.0), ("epoll", 124.0)]);
    assert!(rows(&a, &b, false)[0].changes.iter().all(Option::is_some));
    let mut starved = b.clone();
    starved.cells.iter_mut().for_each(|c| c.figures.starved_conns = 3);
    let r = rows(&a, &starved, false);
    assert!(r[0].changes.iter().all(Option::is_none), "{:?}", r[0].changes);
}

/// An open loop both kept up with: throughput 10 % apart in every round is no change (the rate
/// was set on both sides, what was measured is the client's); their CPU per request is still
/// compared.
#[test]
fn throughput_an_open_loop_set_on_both_sides_is_never_called_better_or_worse() {
    use crate::report::compare::against_reference;
    let mut r = results(&[]);
    r.scenario.experiments[0].paired = true;
    r.scenario.experiments[0].reference = Some("epoll".into());
    let mut all = results(&[("epoll", 20_000.0); 6]);
    all.cells.extend(results(&[("poll", 18_000.0); 6]).cells);
    for c in &mut all.cells {
        c.figures.why = Some(crate::bench::record::Why {
            open_loop: true,
            offered_completed: Some(true),
            ..Default::default()
        });
    }
    r.cells = all.cells.clone();
    let row = &against_reference(&r)[0].rows[0];
    let throughput = row.changes[0].as_ref().unwrap();
    assert_eq!(throughput.verdict, None, "{throughput:?}");
    assert_eq!(
        row.changes[2].as_ref().unwrap().verdict,
        Some(false),
        "CPU per request still compared"
    );
    // A closed loop's throughput is the server's: the same rounds are called.
    for c in &mut all.cells {
        c.figures.why = None;
    }
    r.cells = all.cells;
    let row = &against_reference(&r)[0].rows[0];
    assert_eq!(row.changes[0].as_ref().unwrap().verdict, Some(false));
}
