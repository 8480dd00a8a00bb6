//! A fidelity row: one product beside its model at one connection count, as the table
//! ([`COLUMNS`], [`Row::cells`]) and the verdict's text ([`Row::sentence`]) say it.

use serde::{Deserialize, Serialize};

use super::answer::{ratio_said, Answer, Interval};
use crate::units::fmt_us;

/// One product beside its model at one connection count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub experiment: String,
    pub connections: usize,
    /// The peer entry and the model entry beside it.
    pub product: String,
    pub model: String,
    /// How the two were loaded alike, in words: each at the same share of its own CPUs
    /// (`busy_of`), or one rate (and what that is to a pool of blocking calls).
    pub load: String,
    /// The utilization both were aimed at (`busy_of`; `None`: one rate for both).
    pub aimed: Option<f64>,
    /// Each one's mean service time E[S] (µs), the unit its latency is read in.
    pub service_product_us: Option<f64>,
    pub service_model_us: Option<f64>,
    /// Where each E[S] came from, in words.
    pub service_from: String,
    /// The share of its CPUs each kept busy (the median over rounds).
    pub busy_product: Option<f64>,
    pub busy_model: Option<f64>,
    /// p50 and p99 past the machine's round trip, in each one's own E[S] (medians over rounds).
    pub p50_product_es: Option<f64>,
    pub p50_model_es: Option<f64>,
    pub p99_product_es: Option<f64>,
    pub p99_model_es: Option<f64>,
    /// The model's shape over the product's, round by round: the rounds' interval.
    pub p50_ratio: Option<Interval>,
    pub p99_ratio: Option<Interval>,
    /// Each one's server CPU per request (µs) and model ÷ product: the implementations' cost,
    /// shown beside and not part of the answer.
    pub cpu_product_us: Option<f64>,
    pub cpu_model_us: Option<f64>,
    pub cpu_ratio: Option<f64>,
    /// `None`: nothing could be compared.
    pub answer: Option<Answer>,
    /// Where it differs, the cause its figures price (or that none covers half the gap);
    /// where unresolved, why; where not compared, why not.
    pub cause: String,
    /// What the reader should know beside: a utilization off its aim, one side without a pool.
    pub note: String,
}

/// The fidelity table's columns ([`Row::cells`]).
pub const COLUMNS: [&str; 16] = [
    "experiment",
    "conns",
    "product",
    "model",
    "load",
    "E[S] product",
    "E[S] model",
    "busy product",
    "busy model",
    "p99/E[S] product",
    "p99/E[S] model",
    "p50 shape ratio",
    "p99 shape ratio",
    "CPU/req ratio",
    "answer",
    "why",
];

/// A share as a percentage, "–" where not measured.
fn pct(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |x| format!("{:.0}%", x * 100.0))
}

/// A shape (a multiple of E[S]), "–" where not compared.
fn es(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |x| format!("{x:.2}"))
}

impl Row {
    /// The row as the table shows it ([`COLUMNS`]): "–" for what was not measured or compared.
    pub fn cells(&self) -> [String; 16] {
        let v = |x: Option<f64>| x.map_or("–".to_string(), fmt_us);
        let i = |x: &Option<Interval>| x.as_ref().map_or("–".to_string(), Interval::said);
        let why = [self.cause.as_str(), self.note.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<&str>>()
            .join("; ");
        [
            self.experiment.clone(),
            self.connections.to_string(),
            self.product.clone(),
            self.model.clone(),
            self.load.clone(),
            v(self.service_product_us),
            v(self.service_model_us),
            pct(self.busy_product),
            pct(self.busy_model),
            es(self.p99_product_es),
            es(self.p99_model_es),
            i(&self.p50_ratio),
            i(&self.p99_ratio),
            self.cpu_ratio.map_or("–".to_string(), ratio_said),
            self.answer.map_or("–", Answer::word).to_string(),
            match why.is_empty() {
                true => "–".to_string(),
                false => why,
            },
        ]
    }

    /// The row in a sentence.
    pub fn sentence(&self) -> String {
        let i = |x: &Option<Interval>| {
            x.as_ref().map_or("not compared".to_string(), |i| {
                format!("{} over {} rounds", i.said(), i.rounds)
            })
        };
        let said = match self.answer {
            Some(Answer::Stands) => "it stands for it".to_string(),
            Some(Answer::Differs) => format!("it differs: {}", self.cause),
            Some(Answer::Unresolved) => format!("unresolved: {}", self.cause),
            None => format!("not compared: {}", self.cause),
        };
        let note = match self.note.is_empty() {
            true => String::new(),
            false => format!(" ({})", self.note),
        };
        format!(
            "{}, {} connections, {}: {} beside {}, E[S] {} against {}; p99 {} E[S] against {}; \
             shape ratios p50 {}, p99 {}; server CPU per request {} against {} (beside): {said}{note}. \
             E[S]: {}.",
            self.experiment,
            self.connections,
            self.load,
            self.model,
            self.product,
            self.service_model_us.map_or("–".to_string(), fmt_us),
            self.service_product_us.map_or("–".to_string(), fmt_us),
            es(self.p99_model_es),
            es(self.p99_product_es),
            i(&self.p50_ratio),
            i(&self.p99_ratio),
            self.cpu_model_us.map_or("–".to_string(), fmt_us),
            self.cpu_product_us.map_or("–".to_string(), fmt_us),
            self.service_from,
        )
    }
}
