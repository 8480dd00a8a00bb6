//! How a pair's rounds become an answer: each side in its own E[S], the median's interval
//! against the margin, and what is not compared and why.

use super::*;
use crate::bench::record::Cell;
use crate::bench::record::CellStatus;

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
fn a_ratio_under_a_tenth_keeps_its_digits() {
    assert_eq!(ratio_said(0.65), "0.65×");
    assert_eq!(ratio_said(0.02), "0.020×");
    assert_eq!(ratio_said(0.0036), "0.0036×");
    assert_eq!(ratio_said(428.6), "428.60×");
}

/// Two sides placed differently (a design on two CPUs against a product on one) are not
/// compared, by the rule's own `alike`, and the row says where each ran.
#[test]
fn sides_placed_differently_are_not_compared_and_say_where_each_ran() {
    let xs = keepalive();
    let at = |cpus: &str| crate::bench::record::Placed {
        server_cpus: cpus.into(),
        client_cpus: "1".into(),
    };
    let mut cells = rounds("ka", "reactor", 60.0, 620.0, 10.0, 0.7, EVEN);
    cells.iter_mut().for_each(|c| c.placed = Some(at("0,1")));
    let mut theirs = rounds("ka", "node", 180.0, 2420.0, 40.0, 0.7, EVEN);
    theirs.iter_mut().for_each(|c| c.placed = Some(at("0")));
    cells.extend(theirs);
    let node = super::rows(&xs, &cells)
        .into_iter()
        .find(|r| r.product == "node")
        .unwrap();
    assert_eq!((node.answer, node.p99_ratio), (None, None), "{node:?}");
    assert!(
        node.cause
            .contains("not compared: placements differ (reactor: server on CPUs 0,1"),
        "{}",
        node.cause
    );
}
