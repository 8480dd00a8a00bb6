//! The shapes an experiment's description promises (its `expect` entries, read by
//! `record::expect`), held against the cells: the verdict says for each whether it held, with
//! the figures.

use serde::{Deserialize, Serialize};

use super::classes;
use super::metric::{Metric, CPU, P50, P99, THROUGHPUT};
use crate::bench::record::expect::{read, Measure, Shape};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{spread, Cell};

/// With one run per cell the noise is unknown: "A < B" holds only where B is this much more.
const SINGLE_RUN_MARGIN: f64 = super::SINGLE_RUN_NOISE;

/// A shape held against the cells.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Expectation {
    /// The `expect` entry as written.
    pub expected: String,
    /// Whether it held at every connection count its targets share (`None`: not measured).
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

/// Each `expect` entry of `x` held against `ok` (its finished cells).
pub(super) fn check(x: &Experiment, ok: &[&Cell], repeats: usize) -> Vec<Expectation> {
    x.expect
        .iter()
        .map(|text| {
            let (held, detail) = match read(text, x) {
                Ok(shape) => held(&shape, ok, repeats),
                Err(e) => (None, e.0),
            };
            Expectation {
                expected: text.clone(),
                held,
                detail,
            }
        })
        .collect()
}

/// Whether `shape` held at every connection count all its targets were measured at, and the
/// figures at the largest.
fn held(shape: &Shape, ok: &[&Cell], repeats: usize) -> (Option<bool>, String) {
    let values = |t: &str, n: usize, lower: bool| -> Vec<f64> {
        ok.iter()
            .filter(|c| c.target == t && c.connections == n)
            .filter_map(|c| value(shape, c, lower, ok))
            .collect()
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
    // "a < b" at n: every repeat of a below every repeat of b; with one run, by the margin.
    let below = |a: &str, b: &str, n: usize| {
        let (Some(a), Some(b)) = (spread(values(a, n, true)), spread(values(b, n, false))) else {
            return false;
        };
        match repeats > 1 {
            true => a.highest < b.lowest,
            false => a.median * (1.0 + SINGLE_RUN_MARGIN) < b.median,
        }
    };
    let failed: Vec<String> = shared
        .iter()
        .filter(|&&n| !shape.targets.windows(2).all(|p| below(&p[0], &p[1], n)))
        .map(|n| n.to_string())
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
    let margin = if repeats > 1 {
        format!("every one of {repeats} runs apart")
    } else {
        format!("one run each, {:.0}% apart at least", SINGLE_RUN_MARGIN * 100.0)
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
    (Some(holds), format!("{at} at {largest} connections{counts}; {margin}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::{CellStatus, ClassFigure};

    fn experiment(expect: &str) -> Result<Experiment, crate::bench::record::Error> {
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

    #[test]
    fn a_shape_holds_only_beyond_the_noise_and_says_its_figures() {
        let x = experiment("\"short p99: thread < reactor\", \"p99: reactor < thread\"").unwrap();
        let cells = [
            cell("thread", 0, 5000.0, 100.0, 0),
            cell("reactor", 0, 5200.0, 4000.0, 0),
        ];
        let ok: Vec<&Cell> = cells.iter().collect();
        let e = check(&x, &ok, 1);
        assert_eq!(e[0].held, Some(true), "{}", e[0].detail);
        assert!(
            e[0].sentence()
                .contains("holds: thread 100us, reactor 4.00ms at 10 connections"),
            "{}",
            e[0].sentence()
        );
        assert_eq!(e[1].held, Some(false), "4% apart is inside one run's noise");
        assert!(e[1].sentence().contains("does NOT hold"));
        // With repeats, every run must be apart.
        let cells = [
            cell("thread", 0, 5000.0, 100.0, 0),
            cell("reactor", 0, 5200.0, 4000.0, 0),
            cell("thread", 1, 5000.0, 4100.0, 0),
            cell("reactor", 1, 5200.0, 4200.0, 0),
        ];
        let ok: Vec<&Cell> = cells.iter().collect();
        assert_eq!(check(&x, &ok, 2)[0].held, Some(false), "the runs overlap");
    }

    /// Held only where it holds at every shared count; one that fails at a smaller count says
    /// which, though the figures quoted are the largest's.
    #[test]
    fn a_shape_that_fails_at_one_count_names_it() {
        let x = experiment("\"short p99: thread < reactor\"").unwrap();
        let mut cells = Vec::new();
        for (n, thread, reactor) in [(10, 100.0, 105.0), (100, 100.0, 4000.0)] {
            for (t, v) in [("thread", thread), ("reactor", reactor)] {
                let mut c = cell(t, 0, 5000.0, v, 0);
                c.connections = n;
                cells.push(c);
            }
        }
        let ok: Vec<&Cell> = cells.iter().collect();
        let e = &check(&x, &ok, 1)[0];
        assert_eq!(e.held, Some(false));
        assert!(
            e.detail
                .contains("at 100 connections (not at 1 of 2 connection counts: 10)"),
            "{}",
            e.detail
        );
        let held = &check(&x, &ok[2..], 1)[0];
        assert_eq!(held.held, Some(true), "{}", held.detail);
    }

    #[test]
    fn a_starved_latency_cannot_show_its_target_lower_and_a_missing_one_is_not_measured() {
        let x = experiment("\"short p99: thread < reactor\"").unwrap();
        let cells = [
            cell("thread", 0, 5000.0, 100.0, 3),
            cell("reactor", 0, 5200.0, 4000.0, 0),
        ];
        let ok: Vec<&Cell> = cells.iter().collect();
        let e = &check(&x, &ok, 1)[0];
        assert_eq!(e.held, None);
        assert!(
            e.sentence().contains("was not measured") && e.detail.contains("thread"),
            "{}",
            e.detail
        );
        // Starved on the higher side is fine: its true latency is higher still.
        let cells = [
            cell("thread", 0, 5000.0, 100.0, 0),
            cell("reactor", 0, 5200.0, 4000.0, 3),
        ];
        let ok: Vec<&Cell> = cells.iter().collect();
        assert_eq!(check(&x, &ok, 1)[0].held, Some(true));
        let only = [cell("thread", 0, 5000.0, 100.0, 0)];
        let ok: Vec<&Cell> = only.iter().collect();
        assert_eq!(check(&x, &ok, 1)[0].held, None);
    }
}
