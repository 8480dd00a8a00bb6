//! The shape an experiment's description promises, as its `expect` key writes it
//! (`"short p99: thread < reactor"`): read and checked against the experiment's targets and
//! classes when the scenario is. the judge holds it against the cells.

use super::experiment::{model_name, Experiment};

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

/// An `expect` entry refused: the entry as written, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{entry}': {fault}")]
pub struct BadExpect {
    pub entry: String,
    pub fault: ExpectFault,
}

/// How an `expect` entry is written, for the errors that say so.
const FORM: &str = "write \"[CLASS] METRIC: A < B\", METRIC one of throughput, p50, p99, cpu";

/// Why an `expect` entry is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpectFault {
    /// No `:` between the metric and the targets.
    NoColon,
    /// Before the `:`, other than `[CLASS] METRIC`.
    Head { head: String },
    /// A metric that is none of throughput, p50, p99, cpu.
    UnknownMetric { metric: String },
    /// A class with a metric that is no latency.
    ClassNotLatency,
    /// A class the experiment's mix does not have (`known`: the classes it has).
    NoClass { class: String, known: Vec<String> },
    /// A name that is none of the experiment's models or peers.
    NotATarget { name: String },
    /// A model's name where the experiment has several entries of it.
    Several { name: String },
    /// Fewer than two targets.
    NothingCompared,
}

impl std::fmt::Display for ExpectFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExpectFault::NoColon => write!(f, "no ':' ({FORM})"),
            ExpectFault::Head { head } => write!(f, "'{head}' is not [CLASS] METRIC ({FORM})"),
            ExpectFault::UnknownMetric { metric } => write!(f, "unknown metric '{metric}' ({FORM})"),
            ExpectFault::ClassNotLatency => f.write_str("a class has latency only (p50, p99)"),
            ExpectFault::NoClass { class, known } => write!(
                f,
                "no request class '{class}' in mix (classes: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
            ExpectFault::NotATarget { name } => {
                write!(f, "'{name}' is not one of the experiment's models or peers")
            }
            ExpectFault::Several { name } => {
                write!(f, "'{name}' stands for several model entries: write one of them whole")
            }
            ExpectFault::NothingCompared => write!(f, "compares nothing ({FORM})"),
        }
    }
}

/// Reads `"[CLASS] METRIC: A < B [< C ...]"` against `x`'s targets and classes.
pub fn read(text: &str, x: &Experiment) -> Result<Shape, BadExpect> {
    let bad = |fault| BadExpect {
        entry: text.to_string(),
        fault,
    };
    let (head, chain) = text.split_once(':').ok_or_else(|| bad(ExpectFault::NoColon))?;
    let words: Vec<&str> = head.split_whitespace().collect();
    let (class, metric) = match words[..] {
        [m] => (None, m),
        [c, m] => (Some(c.to_string()), m),
        _ => return Err(bad(ExpectFault::Head { head: head.to_string() })),
    };
    let measure = Measure::of(metric).ok_or_else(|| {
        bad(ExpectFault::UnknownMetric {
            metric: metric.to_string(),
        })
    })?;
    if let Some(c) = &class {
        let known: Vec<&str> = x.load.mix.iter().map(|m| m.name.as_str()).collect();
        if !measure.latency() {
            return Err(bad(ExpectFault::ClassNotLatency));
        }
        if x.load.mix_file.is_none() && !known.contains(&c.as_str()) {
            return Err(bad(ExpectFault::NoClass {
                class: c.clone(),
                known: known.iter().map(|k| k.to_string()).collect(),
            }));
        }
    }
    let targets = chain
        .split('<')
        .map(|t| target(t.trim(), x).map_err(bad))
        .collect::<Result<Vec<String>, BadExpect>>()?;
    if targets.len() < 2 {
        return Err(bad(ExpectFault::NothingCompared));
    }
    Ok(Shape {
        class,
        measure,
        targets,
    })
}

/// The target `name` stands for: a model entry or peer as written, or the one model entry of
/// that model.
fn target(name: &str, x: &Experiment) -> Result<String, ExpectFault> {
    let all = || x.models.iter().chain(&x.peers);
    if let Some(t) = all().find(|t| *t == name) {
        return Ok(t.clone());
    }
    let of_model: Vec<&String> = x.models.iter().filter(|m| model_name(m) == name).collect();
    match of_model[..] {
        [one] => Ok(one.clone()),
        [] => Err(ExpectFault::NotATarget { name: name.to_string() }),
        _ => Err(ExpectFault::Several { name: name.to_string() }),
    }
}

/// Checks every `expect` entry of `x` (the error says which and why).
pub(super) fn check_keys(x: &Experiment) -> Result<(), BadExpect> {
    x.expect.iter().try_for_each(|e| read(e, x).map(drop))
}
