//! The shape an experiment's description promises, as its `expect` key writes it
//! (`"short p99: thread < reactor"`): read and checked against the experiment's targets and
//! classes when the scenario is. the judge holds it against the cells.

use super::experiment::{model_name, Experiment};
use crate::units::BadValue;

/// What a shape compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    Throughput,
    P50,
    P99,
    Cpu,
}

impl Measure {
    /// The metric a word names: throughput, p50, p99 or cpu.
    pub fn of(word: &str) -> Option<Measure> {
        Some(match word {
            "throughput" => Measure::Throughput,
            "p50" => Measure::P50,
            "p99" => Measure::P99,
            "cpu" => Measure::Cpu,
            _ => return None,
        })
    }

    /// A latency (a class has these only).
    pub fn latency(self) -> bool {
        matches!(self, Measure::P50 | Measure::P99)
    }
}

/// One `expect` entry, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// The request class it is about (`None`: every request).
    pub class: Option<String>,
    pub measure: Measure,
    /// Targets, each value expected below the next.
    pub targets: Vec<String>,
}

/// Reads `"[CLASS] METRIC: A < B [< C ...]"` against `x`'s targets and classes.
pub fn read(text: &str, x: &Experiment) -> Result<Shape, BadValue> {
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
