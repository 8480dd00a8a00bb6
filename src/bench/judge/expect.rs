//! The shapes an experiment's description promises (its `expect` entries, read by
//! `record::expect`), held against the cells: the verdict says for each whether it held, with
//! the figures.

use serde::{Deserialize, Serialize};

use super::classes;
use super::interval::{self, Judged};
use super::metric::{Metric, CPU, P50, P99, THROUGHPUT};
use crate::bench::record::expect::{read, Measure, Shape};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{spread, Cell};

/// A shape held against the cells.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Expectation {
    /// The `expect` entry as written.
    pub expected: String,
    /// Whether it held at every connection count its targets share (`None`: not measured, or
    /// one round: not judged).
    pub held: Option<bool>,
    /// The figures it was decided on, or what was missing.
    pub detail: String,
}

impl Expectation {
    /// The verdict's sentence.
    pub fn sentence(&self) -> String {
        let how = match self.held {
            Some(true) => "holds",
            Some(false) => "does NOT hold",
            None if self.detail.contains("not judged") => "is not judged",
            None => "was not measured",
        };
        format!("Expected shape '{}' {how}: {}.", self.expected, self.detail)
    }
}

/// The metric a shape (or a `choose_by` word) compares.
pub(super) fn metric(m: Measure) -> &'static Metric {
    match m {
        Measure::Throughput => &THROUGHPUT,
        Measure::P50 => &P50,
        Measure::P99 => &P99,
        Measure::Cpu => &CPU,
    }
}

/// The value of `c` a shape compares (of its class's view, where it names a class). On the
/// `lower` side, only a value that may be ranked: a latency that starved connections covers
/// only the served ones, so it cannot show its target lower than another.
fn value(s: &Shape, c: &Cell, lower: bool, beside: &[&Cell]) -> Option<f64> {
    let m = metric(s.measure);
    let view;
    let c = match &s.class {
        Some(k) => {
            view = classes::as_class(c, k);
            &view
        }
        None => c,
    };
    match lower {
        true => super::metric::rankable(m, c, beside).ranked().map(|r| r.get()),
        false => m.value(c),
    }
}

/// Each `expect` entry of `x` held against `ok` (its finished cells), the A/A `twins` beside.
pub(super) fn check(x: &Experiment, ok: &[&Cell], twins: &[&Cell]) -> Vec<Expectation> {
    x.expect
        .iter()
        .map(|text| {
            let (held, detail) = match read(text, x) {
                Ok(shape) => held(&shape, ok, twins),
                Err(e) => (None, e.to_string()),
            };
            Expectation {
                expected: text.clone(),
                held,
                detail,
            }
        })
        .collect()
}

/// The A/A twin's noise on what `shape` compares at `n` connections: its class's view where
/// it names one.
fn twin_noise(shape: &Shape, twins: &[&Cell], ok: &[&Cell], m: &Metric, n: usize) -> Option<f64> {
    match &shape.class {
        Some(k) => {
            let (tv, ov): (Vec<Cell>, Vec<Cell>) = (
                twins.iter().map(|c| classes::as_class(c, k)).collect(),
                ok.iter().map(|c| classes::as_class(c, k)).collect(),
            );
            let (tv, ov): (Vec<&Cell>, Vec<&Cell>) = (tv.iter().collect(), ov.iter().collect());
            super::ranking::twin_sd(&tv, &ov, m, &[n])
        }
        None => super::ranking::twin_sd(twins, ok, m, &[n]),
    }
}

/// Whether `shape` held at every connection count all its targets were measured at, and the
/// figures at the largest. "a < b" holds at a count where the interval of b over a in its
/// rounds (the twin's noise beside theirs: the verdicts' one rule, [`interval`]) lies beyond
/// 5 %; it does not hold where that interval does not; one round is not judged.
fn held(shape: &Shape, ok: &[&Cell], twins: &[&Cell]) -> (Option<bool>, String) {
    let values = |t: &str, n: usize, lower: bool| -> Vec<f64> {
        ok.iter()
            .filter(|c| c.target == t && c.connections == n)
            .filter_map(|c| value(shape, c, lower, ok))
            .collect()
    };
    let in_round = |t: &str, n: usize, r: usize, lower: bool| {
        ok.iter()
            .find(|c| c.target == t && c.connections == n && c.repeat == r)
            .and_then(|c| value(shape, c, lower, ok))
    };
    let mut counts: Vec<usize> = ok.iter().map(|c| c.connections).collect();
    counts.sort_unstable();
    counts.dedup();
    let last = shape.targets.len() - 1;
    let shared: Vec<usize> = counts
        .into_iter()
        .filter(|&n| {
            shape
                .targets
                .iter()
                .enumerate()
                .all(|(i, t)| !values(t, n, i < last).is_empty())
        })
        .collect();
    let Some(&largest) = shared.last() else {
        let missing: Vec<&str> = shape
            .targets
            .iter()
            .enumerate()
            .filter(|(i, t)| ok.iter().all(|c| values(t, c.connections, *i < last).is_empty()))
            .map(|(_, t)| t.as_str())
            .collect();
        return (
            None,
            format!(
                "no connection count measured {} where its latency may be ranked (not from cells that starved connections or lost requests, that the client bound, or of too few samples)",
                if missing.is_empty() {
                    "every target".to_string()
                } else {
                    missing.join(", ")
                }
            ),
        );
    };
    let rounds = ok.iter().map(|c| c.repeat + 1).max().unwrap_or(0);
    let m = metric(shape.measure);
    // "a < b" at n: b over a in each round, judged by their interval.
    let below = |a: &str, b: &str, n: usize| {
        let logs: Vec<f64> = (0..rounds)
            .filter_map(|r| Some((in_round(b, n, r, false)? / in_round(a, n, r, true)?).ln()))
            .filter(|l| l.is_finite())
            .collect();
        interval::judge(&logs, twin_noise(shape, twins, ok, m, n))
    };
    let judged: Vec<(usize, Vec<Judged>)> = shared
        .iter()
        .map(|&n| (n, shape.targets.windows(2).map(|p| below(&p[0], &p[1], n)).collect()))
        .collect();
    let not_judged = judged.iter().any(|(_, js)| js.iter().any(|j| j.interval().is_none()));
    let failed: Vec<String> = judged
        .iter()
        .filter(|(_, js)| !js.iter().all(Judged::clear))
        .map(|(n, _)| n.to_string())
        .collect();
    let holds = failed.is_empty();
    let at = shape
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let m = spread(values(t, largest, i < last)).map_or(f64::NAN, |s| s.median);
            format!("{t} {}", metric(shape.measure).show(m))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let margin = match judged.last().and_then(|(_, js)| js.first()).and_then(Judged::interval) {
        Some(i) if !not_judged => format!("{} of the one over the other", i.said()),
        _ if rounds > 1 => format!("measured together in fewer than 2 of its {rounds} rounds: not judged"),
        _ => "one round: not judged".to_string(),
    };
    let counts = match (shared.len() > 1, holds) {
        (false, _) => String::new(),
        (true, true) => format!(" (and at each of its {} connection counts)", shared.len()),
        (true, false) => format!(
            " (not at {} of {} connection counts: {})",
            failed.len(),
            shared.len(),
            failed.join(", ")
        ),
    };
    let held = (!not_judged).then_some(holds);
    (held, format!("{at} at {largest} connections{counts}; {margin}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::{CellStatus, ClassFigure};

    fn experiment(expect: &str) -> Result<Experiment, crate::bench::record::scenario::ScenarioError> {
        crate::bench::record::scenario::experiment_expecting(expect)
    }

    fn cell(target: &str, repeat: usize, p99: f64, short: f64, starved: u64) -> Cell {
        let mut c = Cell::new("e", target, 10, repeat);
        c.status = CellStatus::Ok;
        c.figures.throughput_rps = 1000.0;
        c.figures.requests = 10_000;
        c.figures.p99_us = Some(p99);
        c.figures.starved_conns = starved;
        c.figures.classes = vec![ClassFigure {
            name: "short".into(),
            path: "/?cpu=20us".into(),
            requests: 1000,
            p99_us: Some(short),
            ..Default::default()
        }];
        c
    }

    /// `per_round` (target, p99, short p99, starved) measured in each of `rounds` rounds.
    fn rounds(rounds: usize, per_round: &[(&str, f64, f64, u64)]) -> Vec<Cell> {
        (0..rounds)
            .flat_map(|r| per_round.iter().map(move |&(t, p, s, st)| cell(t, r, p, s, st)))
            .collect()
    }

    #[test]
    fn a_shape_holds_only_beyond_the_noise_and_says_its_figures() {
        let x = experiment("\"short p99: thread < reactor\", \"p99: reactor < thread\"").unwrap();
        let cells = rounds(3, &[("thread", 5000.0, 100.0, 0), ("reactor", 5200.0, 4000.0, 0)]);
        let ok: Vec<&Cell> = cells.iter().collect();
        let e = check(&x, &ok, &[]);
        assert_eq!(e[0].held, Some(true), "{}", e[0].detail);
        assert!(
            e[0].sentence()
                .contains("holds: thread 100us, reactor 4.00ms at 10 connections; 3 rounds, 40.00–40.00×"),
            "{}",
            e[0].sentence()
        );
        assert_eq!(e[1].held, Some(false), "4% apart is inside the 5 % margin");
        assert!(e[1].sentence().contains("does NOT hold"));
        // Rounds that overlap: one apart, one not.
        let mut cells = rounds(2, &[("thread", 5000.0, 100.0, 0), ("reactor", 5200.0, 4000.0, 0)]);
        cells.extend([
            cell("thread", 2, 5000.0, 4100.0, 0),
            cell("reactor", 2, 5200.0, 4000.0, 0),
        ]);
        let ok: Vec<&Cell> = cells.iter().collect();
        assert_eq!(check(&x, &ok, &[])[0].held, Some(false), "the rounds overlap");
        // One round, however far apart: not judged.
        let one = rounds(1, &[("thread", 5000.0, 100.0, 0), ("reactor", 5200.0, 4000.0, 0)]);
        let ok: Vec<&Cell> = one.iter().collect();
        let e = &check(&x, &ok, &[])[0];
        assert_eq!(e.held, None);
        assert!(
            e.sentence().contains("is not judged") && e.detail.contains("one round"),
            "{}",
            e.sentence()
        );
    }

    /// Held only where it holds at every shared count; one that fails at a smaller count says
    /// which, though the figures quoted are the largest's.
    #[test]
    fn a_shape_that_fails_at_one_count_names_it() {
        let x = experiment("\"short p99: thread < reactor\"").unwrap();
        let mut cells = Vec::new();
        for r in 0..3 {
            for (n, thread, reactor) in [(10, 100.0, 102.0), (100, 100.0, 4000.0)] {
                for (t, v) in [("thread", thread), ("reactor", reactor)] {
                    let mut c = cell(t, r, 5000.0, v, 0);
                    c.connections = n;
                    cells.push(c);
                }
            }
        }
        let ok: Vec<&Cell> = cells.iter().collect();
        let e = &check(&x, &ok, &[])[0];
        assert_eq!(e.held, Some(false));
        assert!(
            e.detail
                .contains("at 100 connections (not at 1 of 2 connection counts: 10)"),
            "{}",
            e.detail
        );
        let at_100: Vec<&Cell> = ok.iter().copied().filter(|c| c.connections == 100).collect();
        let held = &check(&x, &at_100, &[])[0];
        assert_eq!(held.held, Some(true), "{}", held.detail);
    }

    /// The twin's noise widens the interval: 10 % apart in every round holds with a steady twin,
    /// not with one that differs from itself by 20 % each round.
    #[test]
    fn a_shape_does_not_hold_inside_the_twins_noise() {
        let x = experiment("\"short p99: thread < reactor\"").unwrap();
        let cells = rounds(3, &[("thread", 5000.0, 100.0, 0), ("reactor", 5000.0, 110.0, 0)]);
        let ok: Vec<&Cell> = cells.iter().collect();
        assert_eq!(check(&x, &ok, &[])[0].held, Some(true));
        let twins: Vec<Cell> = (0..3)
            .map(|r| {
                let mut t = cell("thread", r, 5000.0, 100.0 * [1.2, 0.8, 1.2][r], 0);
                t.twin = true;
                t
            })
            .collect();
        let twins: Vec<&Cell> = twins.iter().collect();
        assert_eq!(check(&x, &ok, &twins)[0].held, Some(false));
    }

    #[test]
    fn a_starved_latency_cannot_show_its_target_lower_and_a_missing_one_is_not_measured() {
        let x = experiment("\"short p99: thread < reactor\"").unwrap();
        let cells = rounds(3, &[("thread", 5000.0, 100.0, 3), ("reactor", 5200.0, 4000.0, 0)]);
        let ok: Vec<&Cell> = cells.iter().collect();
        let e = &check(&x, &ok, &[])[0];
        assert_eq!(e.held, None);
        assert!(
            e.sentence().contains("was not measured") && e.detail.contains("thread"),
            "{}",
            e.detail
        );
        // Starved on the higher side is fine: its true latency is higher still.
        let cells = rounds(3, &[("thread", 5000.0, 100.0, 0), ("reactor", 5200.0, 4000.0, 3)]);
        let ok: Vec<&Cell> = cells.iter().collect();
        assert_eq!(check(&x, &ok, &[])[0].held, Some(true));
        let only = rounds(3, &[("thread", 5000.0, 100.0, 0)]);
        let ok: Vec<&Cell> = only.iter().collect();
        assert_eq!(check(&x, &ok, &[])[0].held, None);
    }
}
