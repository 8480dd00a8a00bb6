//! A fidelity row: one product beside its model at one connection count, as the table
//! ([`COLUMNS`], [`Row::cells`]) and the verdict's text ([`Row::sentence`]) say it.

use serde::{Deserialize, Serialize};

use crate::units::fmt_us;

/// A model stands for its product where its p99 and its server CPU per request are each within
/// this factor of the product's (either way).
pub const WITHIN: f64 = 1.5;

/// A ratio within [`WITHIN`] either way.
pub(super) fn within(r: f64) -> bool {
    (1.0 / WITHIN..=WITHIN).contains(&r)
}

/// A ratio as the table says it: two decimals, more where it is under 0.1 (never "0.00×").
pub fn ratio_said(r: f64) -> String {
    let digits = match r {
        r if r > 0.0 && r < 0.1 => (-r.log10()).floor() as usize + 2,
        _ => 2,
    };
    format!("{r:.digits$}×")
}

/// One product beside its model at one connection count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub experiment: String,
    pub connections: usize,
    /// The peer entry and the model entry beside it.
    pub product: String,
    pub model: String,
    /// Each one's p99 and server CPU per request (µs; `None`: not measured), and model ÷
    /// product where both may be compared.
    pub p99_product_us: Option<f64>,
    pub p99_model_us: Option<f64>,
    pub p99_ratio: Option<f64>,
    pub cpu_product_us: Option<f64>,
    pub cpu_model_us: Option<f64>,
    pub cpu_ratio: Option<f64>,
    /// Both ratios within [`WITHIN`] (`None`: neither could be compared).
    pub stands: Option<bool>,
    /// Why not, or why not compared; empty where it stands.
    pub cause: String,
}

/// The fidelity table's columns ([`Row::cells`]).
pub const COLUMNS: [&str; 12] = [
    "experiment",
    "conns",
    "product",
    "model",
    "p99 product",
    "p99 model",
    "p99 ratio",
    "CPU/req product",
    "CPU/req model",
    "CPU ratio",
    "stands",
    "cause",
];

impl Row {
    /// The row as the table shows it ([`COLUMNS`]): "–" for what was not measured or compared.
    pub fn cells(&self) -> [String; 12] {
        let v = |x: Option<f64>| x.map_or("–".to_string(), fmt_us);
        let r = |x: Option<f64>| x.map_or("–".to_string(), ratio_said);
        [
            self.experiment.clone(),
            self.connections.to_string(),
            self.product.clone(),
            self.model.clone(),
            v(self.p99_product_us),
            v(self.p99_model_us),
            r(self.p99_ratio),
            v(self.cpu_product_us),
            v(self.cpu_model_us),
            r(self.cpu_ratio),
            match (self.stands, self.one_figure()) {
                (Some(true), Some(f)) => format!("yes, on {f} only"),
                (Some(true), None) => "yes".to_string(),
                (Some(false), _) => "no".to_string(),
                (None, _) => "–".to_string(),
            },
            match self.cause.is_empty() {
                true => "–".to_string(),
                false => self.cause.clone(),
            },
        ]
    }

    /// The one figure compared, where only one was (`None`: both, or neither).
    pub fn one_figure(&self) -> Option<&'static str> {
        match (self.p99_ratio, self.cpu_ratio) {
            (Some(_), None) => Some("p99"),
            (None, Some(_)) => Some("CPU per request"),
            _ => None,
        }
    }

    /// The row in a sentence.
    pub fn sentence(&self) -> String {
        let v = |x: Option<f64>| x.map_or("–".to_string(), fmt_us);
        let r = |x: Option<f64>| x.map_or("not compared".to_string(), ratio_said);
        let said = match (self.stands, self.one_figure()) {
            (Some(true), Some(f)) => format!("stands for it on {f}, the one figure compared"),
            (Some(true), None) => "stands for it".to_string(),
            (Some(false), _) => format!("does not stand for it: {}", self.cause),
            (None, _) => format!("not compared: {}", self.cause),
        };
        let also = match (self.stands, self.cause.is_empty()) {
            (Some(true), false) => format!(" ({})", self.cause),
            _ => String::new(),
        };
        format!(
            "{}, {} connections: {} beside {}: p99 {} against {} ({}), server CPU per request {} against {} ({}): {said}{also}.",
            self.experiment,
            self.connections,
            self.model,
            self.product,
            v(self.p99_model_us),
            v(self.p99_product_us),
            r(self.p99_ratio),
            v(self.cpu_model_us),
            v(self.cpu_product_us),
            r(self.cpu_ratio),
        )
    }
}
