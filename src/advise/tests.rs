//! The answer's tests: the ranking (ties, a bracket's low end) and the text rendered from it.

use std::path::PathBuf;

use super::answer::Answer;
use super::ranking::{not_judged, rank, tied, Row};
use crate::bench::judge::metric::Rank;
use crate::bench::record::{median, relative_spread};

fn row(design: &str, values: &[f64], narrowed: bool) -> Row {
    let spread = relative_spread(values);
    Row {
        design: design.into(),
        runs: values.len(),
        capacity: narrowed.then(|| median(values.to_vec())),
        at_least: Some(median(values.to_vec())),
        narrowed,
        client_limited: false,
        values: values.to_vec(),
        spread,
        predicted: None,
        cpu_us: None,
        note: None,
        ranked: narrowed.then(|| Rank::ranked_unplaced(median(values.to_vec())).ranked().expect("ranked")),
    }
}

/// Two designs their rounds do not separate beyond 5 % are tied; a clear gap is not; with one
/// search on a side the pair is not judged, whatever its gap.
#[test]
fn designs_the_rounds_do_not_separate_are_tied_and_one_search_a_side_is_not_judged() {
    // uring 18,000 and epoll 17,500 over three searches each: 1.03×, tied.
    let rows = [
        row("uring", &[18_000.0, 18_200.0, 17_900.0], true),
        row("epoll", &[17_500.0, 17_600.0, 17_400.0], true),
        row("fork", &[12_000.0, 12_100.0, 11_900.0], true),
    ];
    assert_eq!(tied(&rows), vec!["uring", "epoll"]);
    assert!(not_judged(&rows).is_empty());
    // 1.20× apart over three searches each: not tied.
    let rows = [
        row("thread", &[12_000.0, 12_100.0, 11_900.0], true),
        row("fork", &[10_000.0, 10_100.0, 9_900.0], true),
    ];
    assert_eq!(tied(&rows), vec!["thread"]);
    // The same gap with searches spread 25 %: the rounds do not separate them.
    let rows = [
        row("thread", &[12_000.0, 15_000.0, 9_600.0], true),
        row("fork", &[11_000.0, 9_000.0, 12_500.0], true),
    ];
    assert_eq!(tied(&rows), vec!["thread", "fork"]);
    // One search a side: not judged, neither tied nor apart.
    let rows = [row("thread", &[12_000.0], true), row("fork", &[6_000.0], true)];
    assert_eq!(tied(&rows), vec!["thread"]);
    assert_eq!(not_judged(&rows), vec!["fork"]);
    assert!(tied(&[]).is_empty());
}

/// A search that ran out of time (thread held at 28,000, its bracket's low end) is ranked on
/// nothing: the judge's rule ranks a narrowed, re-checked capacity alone. It is listed after
/// the ranked designs (queue-pool's narrowed 3,500), before a design with nothing measured;
/// and it is tied with nobody.
#[test]
fn a_search_that_ran_out_of_time_is_listed_after_the_ranked_designs_not_ranked_above_them() {
    let mut none = row("reactor", &[1.0], false);
    none.at_least = None;
    let mut rows = vec![
        none,
        row("thread", &[28_000.0], false),
        row("queue-pool", &[3_500.0], true),
    ];
    rank(&mut rows);
    let order: Vec<&str> = rows.iter().map(|r| r.design.as_str()).collect();
    assert_eq!(order, ["queue-pool", "thread", "reactor"]);
    assert_eq!(tied(&rows), vec!["queue-pool"], "a bracket ties with nobody");
    assert!(
        not_judged(&rows).is_empty(),
        "a bracket is ranked on nothing, so not judged either"
    );
}

#[test]
fn the_answer_renders_a_bracket_as_at_least_and_a_missing_prediction_as_not_modelled() {
    let mut thread = row("thread", &[28_000.0], false);
    thread.predicted = None;
    let a = Answer {
        work: "sleep:exp(1ms)".into(),
        slo: "p99<=10ms".into(),
        connections: 500,
        rate: Some(2800.0),
        server_cpus: "0".into(),
        ranking: vec![thread, row("queue-pool --workers 4", &[3_500.0], true)],
        tied: vec!["thread".into()],
        not_judged: Vec::new(),
        meeting: Some(vec!["thread".into(), "queue-pool --workers 4".into()]),
        reasons: vec!["capacity at the target: thread ≥ 28,000 against queue-pool --workers 4 3,500 (8.00×).".into()],
        depends_on: vec!["-c: raise it".into()],
        waited_share: Some(0.2),
        connections_needed: Some(1000),
        time_planned_s: 300.0,
        time_spent_s: 290.0,
        rounds: vec!["every design once".into()],
        results: vec![PathBuf::from("/tmp/r")],
        headlines: vec!["epoll is best on capacity at the target (1.30×).".into()],
        build_commit: Some("cc66880f022f464061eee09d592887895b13b79c".into()),
        build_dirty: Some(false),
    };
    let t = a.text();
    assert!(
        t.contains("Best: thread") && t.contains("≥ 28,000") && t.contains("not modelled"),
        "{t}"
    );
    assert!(
        t.contains("The bench: epoll is best on capacity"),
        "the judge's headline: {t}"
    );
    assert!(
        t.contains("At 2,800 req/s, 2 of 2 designs meet p99<=10ms") && t.contains("-c: raise it"),
        "{t}"
    );
    let j = serde_json::to_value(&a).unwrap();
    assert_eq!(j["ranking"][0]["narrowed"], false);
    assert_eq!(j["tied"][0], "thread");
    assert_eq!(j["time_planned_s"], 300.0);
    assert_eq!(
        j["build_commit"], "cc66880f022f464061eee09d592887895b13b79c",
        "a kept answer names its binary"
    );
    assert_eq!(j["build_dirty"], false);
}
