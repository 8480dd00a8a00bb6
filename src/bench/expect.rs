//! The shape an experiment's description promises, as its `expect` key writes it
//! (`"short p99: thread < reactor"`): read and checked against the experiment's targets and
//! classes when the scenario is, and held against the cells by the verdict, which says for
//! each whether it held, with the figures.

use crate::units::BadValue;
use serde::{Deserialize, Serialize};

use super::results::{spread, Cell};
use super::scenario::{model_name, Experiment};
use crate::units::{fmt_us, si};

/// With one run per cell the noise is unknown: "A < B" holds only where B is this much more.
const SINGLE_RUN_MARGIN: f64 = 0.10;

/// What a shape compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    Throughput,
    P50,
    P99,
    Cpu,
}

impl Measure {
    fn of(word: &str) -> Option<Measure> {
        Some(match word {
            "throughput" => Measure::Throughput,
            "p50" => Measure::P50,
            "p99" => Measure::P99,
            "cpu" => Measure::Cpu,
            _ => return None,
        })
    }

    fn latency(self) -> bool {
        matches!(self, Measure::P50 | Measure::P99)
    }

    fn show(self, v: f64) -> String {
        match self {
            Measure::Throughput => format!("{} req/s", si(v)),
            Measure::Cpu => format!("{v:.1} µs/req"),
            _ => fmt_us(v),
        }
    }
}

/// One `expect` entry, read.
#[derive(Debug, Clone, PartialEq)]
struct Shape {
    class: Option<String>,
    measure: Measure,
    /// Targets, each value expected below the next.
    targets: Vec<String>,
}

/// Reads `"[CLASS] METRIC: A < B [< C ...]"` against `x`'s targets and classes.
fn read(text: &str, x: &Experiment) -> Result<Shape, BadValue> {
    let form = "write \"[CLASS] METRIC: A < B\", METRIC one of throughput, p50, p99, cpu";
    let (head, chain) = text
        .split_once(':')
        .ok_or_else(|| BadValue(format!("'{text}': no ':' ({form})")))?;
    let words: Vec<&str> = head.split_whitespace().collect();
    let (class, metric) = match words[..] {
        [m] => (None, m),
        [c, m] => (Some(c.to_string()), m),
        _ => return Err(BadValue(format!("'{text}': '{head}' is not [CLASS] METRIC ({form})"))),
    };
    let measure =
        Measure::of(metric).ok_or_else(|| BadValue(format!("'{text}': unknown metric '{metric}' ({form})")))?;
    if let Some(c) = &class {
        let known: Vec<&str> = x.load.mix.iter().map(|m| m.name.as_str()).collect();
        if !measure.latency() {
            return Err(BadValue(format!("'{text}': a class has latency only (p50, p99)")));
        }
        if x.load.mix_file.is_none() && !known.contains(&c.as_str()) {
            return Err(BadValue(format!(
                "'{text}': no request class '{c}' in mix (classes: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    let targets = chain
        .split('<')
        .map(|t| target(t.trim(), x).map_err(|e| BadValue(format!("'{text}': {e}"))))
        .collect::<Result<Vec<String>, BadValue>>()?;
    if targets.len() < 2 {
        return Err(BadValue(format!("'{text}': compares nothing ({form})")));
    }
    Ok(Shape {
        class,
        measure,
        targets,
    })
}

/// The target `name` stands for: a model entry or peer as written, or the one model entry of
/// that model.
fn target(name: &str, x: &Experiment) -> Result<String, BadValue> {
    let all = || x.models.iter().chain(&x.peers);
    if let Some(t) = all().find(|t| *t == name) {
        return Ok(t.clone());
    }
    let of_model: Vec<&String> = x.models.iter().filter(|m| model_name(m) == name).collect();
    match of_model[..] {
        [one] => Ok(one.clone()),
        [] => Err(BadValue(format!(
            "'{name}' is not one of the experiment's models or peers"
        ))),
        _ => Err(BadValue(format!(
            "'{name}' stands for several model entries: write one of them whole"
        ))),
    }
}

/// Checks every `expect` entry of `x` (the error says which and why).
pub(super) fn check_keys(x: &Experiment) -> Result<(), BadValue> {
    x.expect.iter().try_for_each(|e| read(e, x).map(drop))
}

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

/// The value of `c` a shape compares.
fn value(s: &Shape, c: &Cell) -> Option<f64> {
    let f = &c.figures;
    let (p50, p99) = match &s.class {
        Some(k) => {
            // A class with refused requests (4xx/5xx) measured no service.
            let k = f.classes.iter().find(|x| &x.name == k && x.refused == 0)?;
            (k.p50_us, k.p99_us)
        }
        None => (Some(f.p50_us), Some(f.p99_us)),
    };
    match s.measure {
        Measure::Throughput => Some(f.throughput_rps),
        Measure::P50 => p50,
        Measure::P99 => p99,
        Measure::Cpu => f.cpu_per_req(),
    }
    .filter(|v| *v > 0.0)
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
            // A latency that starved connections covers only the served ones: it flatters the
            // target, so it cannot show that target lower than another.
            .filter(|c| !(lower && shape.measure.latency() && c.figures.starved_conns > 0))
            .filter_map(|c| value(shape, c))
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
                "no connection count measured {} (a latency from cells that starved connections does not count)",
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
            format!("{t} {}", shape.measure.show(m))
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
    use crate::bench::results::{CellStatus, ClassFigure};
    use crate::bench::scenario::parse;

    fn experiment(expect: &str) -> Result<Experiment, crate::bench::error::Error> {
        let text = format!(
            "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
             models = [\"reactor\", \"thread\", \"dispatch --workers 2\"]\nconnections = [10]\nduration = \"1s\"\n\
             mix = [\"short=99:/?cpu=20us\", \"long=1:/?cpu=5ms\"]\nwork_from_request = true\nexpect = [{expect}]\n"
        );
        parse(&text, "test").map(|mut s| s.experiments.remove(0))
    }

    #[test]
    fn entries_name_a_metric_known_targets_and_known_classes() {
        let x = experiment("\"short p99: thread < reactor\", \"throughput: reactor < dispatch\"").unwrap();
        let s = read(&x.expect[1], &x).unwrap();
        assert_eq!(
            s.targets,
            vec!["reactor", "dispatch --workers 2"],
            "a model's name stands for its entry"
        );
        for (bad, says) in [
            ("\"p99 thread < reactor\"", "no ':'"),
            ("\"p42: thread < reactor\"", "unknown metric 'p42'"),
            ("\"medium p99: thread < reactor\"", "no request class 'medium'"),
            ("\"short cpu: thread < reactor\"", "latency only"),
            (
                "\"p99: thread < nginx\"",
                "'nginx' is not one of the experiment's models",
            ),
            ("\"p99: thread\"", "compares nothing"),
        ] {
            let e = experiment(bad).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("field 'expect'"), "{bad}: {e}");
        }
    }

    fn cell(target: &str, repeat: usize, p99: f64, short: f64, starved: u64) -> Cell {
        let mut c = Cell::new("e", target, 10, repeat);
        c.status = CellStatus::Ok;
        c.figures.throughput_rps = 1000.0;
        c.figures.p99_us = p99;
        c.figures.starved_conns = starved;
        c.figures.classes = vec![ClassFigure {
            name: "short".into(),
            path: "/?cpu=20us".into(),
            requests: 10,
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
