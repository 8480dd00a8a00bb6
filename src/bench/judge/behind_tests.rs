//! Who fell behind, judged over the rounds (a starved design placed by its memory as a lower
//! bound, the last of three by its interval), and what "No pick" speaks of.
use super::tests::{cell, experiment, finding, says};
use crate::bench::judge::verdict;
use crate::bench::record::Cell;

/// Memory cells for "who fell behind": epoll and poll steady at 0.4 and 0.5 KiB per
/// connection, thread at `thread_kib` in round r, starving `starved` connections at 1,000.
fn memory_cells(thread_kib: [f64; 3], starved: u64) -> Vec<Cell> {
    let mut cells = Vec::new();
    for (r, thread) in thread_kib.into_iter().enumerate() {
        for (m, kib) in [("epoll", 0.4), ("poll", 0.5), ("thread", thread)] {
            for n in [10, 1000] {
                let mut c = cell(m, n, r, 100_000.0, 5.0, 2.0, false);
                c.figures.mem_per_conn_kib = Some(kib);
                c.figures.established = n as u64;
                c.figures.starved_conns = if m == "thread" && n == 1000 { starved } else { 0 };
                cells.push(c);
            }
        }
    }
    cells
}

/// A design that starved connections holds no memory for those it never served, so its memory
/// per connection bounds its cost from below: where even that bound is worse than every ranked
/// design's, it is judged behind over the rounds ("at least"), clear when the interval is,
/// and never named best or runner-up (before: left out of the memory finding altogether, so
/// thread at 14–48 KiB against epoll's 0.4 was never said).
#[test]
fn a_starved_design_far_behind_on_memory_is_judged_at_least_that_far_behind() {
    let v = verdict(&experiment(), &memory_cells([14.0, 40.0, 48.0], 495));
    let mem = finding(&v, "memory per connection");
    assert_eq!(
        (mem.best.as_str(), mem.runner_up.as_str()),
        ("epoll", "poll"),
        "{}",
        v.text
    );
    let b = mem.behind.as_ref().expect("thread judged behind");
    assert_eq!(b.target, "thread");
    assert!(b.at_least, "a starved design's memory is a lower bound");
    let i = b.interval.expect("three rounds judged");
    assert_eq!(i.rounds, 3);
    assert!(b.clear && i.low > 5.0, "{i:?}");
    says(&v, "last is thread at least");
    let row = v.table.iter().find(|r| r.metric == "memory per connection").unwrap();
    assert!(
        row.behind.as_deref().is_some_and(|s| s.starts_with("thread at least")),
        "{row:?}"
    );
}

/// A starved design's memory bound that is not worse than every ranked design's says nothing
/// of where it stands (served, it could cost more than any): it is named behind nowhere.
#[test]
fn a_starved_design_whose_bound_is_not_behind_everyone_is_not_placed() {
    let v = verdict(&experiment(), &memory_cells([0.45, 0.45, 0.45], 495));
    let mem = finding(&v, "memory per connection");
    assert!(mem.behind.is_none(), "{:?}", mem.behind);
    assert!(mem.unranked.contains(&"thread".to_string()));
}

/// The last of three ranked designs is judged against the best as a finding is: a gap that
/// moves ±40 % from round to round is no clear "behind", however large its mean.
#[test]
fn the_last_of_three_is_judged_behind_by_its_rounds() {
    let mut cells = Vec::new();
    for (r, swing) in [(0, 1.4), (1, 1.0 / 1.4), (2, 1.4)] {
        for (m, rps) in [
            ("epoll", 100_000.0),
            ("poll", 99_000.0),
            ("thread", 100_000.0 / (1.2 * swing)),
        ] {
            cells.push(cell(m, 100, r, rps, 5.0, 2.0, false));
        }
    }
    let v = verdict(&experiment(), &cells);
    let t = finding(&v, "throughput");
    let b = t.behind.as_ref().expect("three ranked");
    assert_eq!((b.target.as_str(), b.at_least), ("thread", false));
    assert!(!b.clear, "{b:?}");
    assert!(b.said(3).contains("within the noise"), "{}", b.said(3));
}

/// An open loop every design kept up with (its rate from an earlier experiment, `rate_of`):
/// throughput is the client's offer, no difference, and "No pick" says why of the first metric
/// that says something of the designs (before: "No pick: X and Y within 5 % on throughput
/// (1.00–1.00×)", which every design kept up with by construction).
#[test]
fn no_pick_speaks_of_a_metric_the_designs_set_not_of_an_offered_throughput() {
    let mut cells = Vec::new();
    // p99s that cross from round to round: no design apart from the others.
    let rounds = [
        (900.0, 1000.0, 1100.0),
        (1200.0, 1000.0, 900.0),
        (1000.0, 950.0, 1050.0),
    ];
    for (r, (epoll, poll, thread)) in rounds.into_iter().enumerate() {
        for (m, p99) in [("epoll", epoll), ("poll", poll), ("thread", thread)] {
            let mut c = cell(m, 100, r, 5000.0, 20.0, 2.0, false);
            c.figures.p99_us = Some(p99);
            c.figures.why = Some(crate::bench::record::Why {
                open_loop: true,
                offered_completed: Some(true),
                ..Default::default()
            });
            cells.push(c);
        }
    }
    let v = verdict(&experiment(), &cells);
    let t = finding(&v, "throughput");
    assert_eq!(t.why, super::finding::OFFERED, "{}", v.text);
    says(&v, "an open loop both kept up with");
    assert!(v.headline.starts_with("No pick:"), "{}", v.headline);
    assert!(!v.headline.contains("on throughput"), "{}", v.headline);
}
