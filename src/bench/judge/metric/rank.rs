//! The one rule of what may be ranked ([`rankable`]), what a cell's figure is to the judge
//! ([`Rank`]), and the sample floor of a quantile ([`floor`]).

use super::metrics::{Metric, CAPACITY};
use super::unranked::Unranked;
use crate::bench::record::Cell;

/// What a cell's figure of a metric is to the judge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rank {
    /// Measured and ranked.
    Ranked(f64),
    /// Measured, and not ranked, for this reason.
    Unranked(f64, Unranked),
    /// Not measured.
    NotMeasured,
}

impl Rank {
    /// The value, where it may be ranked.
    pub fn ranked(self) -> Option<f64> {
        match self {
            Rank::Ranked(v) => Some(v),
            _ => None,
        }
    }

    /// Why a measured value is not ranked (`None`: it is, or nothing was measured).
    pub fn why_not(self) -> Option<Unranked> {
        match self {
            Rank::Unranked(_, u) => Some(u),
            _ => None,
        }
    }
}

/// The least samples a quantile `q` is ranked from: 10 / (1 − q) (p50: 20, p90: 100, p99:
/// 1,000, p99.9: 10,000), the capacity search's floor for each of its bounds.
pub fn floor(q: f64) -> u64 {
    (10.0 / (1.0 - q)).round() as u64
}

/// The one rule of what may be ranked (see the module's head): what `c`'s value of `m` is to
/// the judge, beside `cells` (its experiment's; the cells of other experiments are passed
/// over). Every consumer asks this; no other code decides it.
pub fn rankable(m: &Metric, c: &Cell, cells: &[&Cell]) -> Rank {
    let Some(v) = m.value(c) else {
        return Rank::NotMeasured;
    };
    if c.calibration.is_some() {
        return Rank::Unranked(v, Unranked::Calibration);
    }
    if let Some(u) = (m.unranked)(c, v) {
        return Rank::Unranked(v, u);
    }
    // A capacity search has its own rule: a probe past capacity loses requests.
    let spoiled = |o: &&&Cell| {
        o.experiment == c.experiment
            && o.target == c.target
            && o.ok()
            && (o.figures.starved_conns > 0 || o.figures.errors > 0)
    };
    if m.name != CAPACITY.name && cells.iter().any(|o| spoiled(&o)) {
        return Rank::Unranked(v, Unranked::Elsewhere);
    }
    if let Some((q, samples)) = m.quantile {
        let needed = floor(q);
        match samples(c) {
            None => return Rank::Unranked(v, Unranked::SamplesUnknown),
            Some(n) if n < needed => return Rank::Unranked(v, Unranked::TooFewSamples { n, needed }),
            Some(_) => {}
        }
    }
    Rank::Ranked(v)
}
