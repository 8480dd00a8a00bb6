//! The one rule of what may be ranked ([`rankable`]), and what it needs: why a value is not
//! ranked ([`Unranked`]), the sample floor of a quantile ([`floor`]), the client's limit
//! ([`client_limit`]), and shares compared by their counts ([`shares_apart`], [`share_said`]).

use super::{Metric, CAPACITY};
use crate::bench::record::Cell;
use crate::units::thousands;

/// Why a cell's value may not be ranked on a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unranked {
    /// Connections starved: a latency covers only the requests that were served, so it
    /// flatters the cell.
    Starved,
    /// Under what the measurement resolves (memory: under a page over all the connections):
    /// no ratio can be taken of it, though it is still the least of the values beside it.
    Unresolved,
    /// The cell was bound by something other than the server (the client, or another task on
    /// its CPUs: `judge::bound`): its throughput and latency are not the server's.
    NotTheServer,
    /// Requests failed (errors, or answers other than 2xx/3xx): its latency and memory cover
    /// only what it served.
    Lost,
    /// The design starved connections or lost requests in another cell of the experiment: it
    /// is named best on nothing there either.
    Elsewhere,
    /// A quantile from fewer samples than it needs (n ≥ 10 / (1 − q)): `n` of `needed`.
    TooFewSamples { n: u64, needed: u64 },
    /// A quantile whose samples were not counted (results written before they were).
    SamplesUnknown,
    /// A calibration cell: the design under lighter load, for its predictions.
    Calibration,
}

impl Unranked {
    /// Why, in a few words.
    pub fn said(self) -> String {
        match self {
            Unranked::Starved => "it starved connections".into(),
            Unranked::Unresolved => "under what the measurement resolves".into(),
            Unranked::NotTheServer => "the server was not the limit".into(),
            Unranked::Lost => "it lost requests".into(),
            Unranked::Elsewhere => "its design starved connections or lost requests in another cell".into(),
            Unranked::TooFewSamples { n, needed } => {
                format!("too few samples ({}, {} needed)", thousands(n), thousands(needed))
            }
            Unranked::SamplesUnknown => "its samples were not counted".into(),
            Unranked::Calibration => "a calibration cell, measured for the predictions".into(),
        }
    }
}

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

/// Whether the client set the pace of `c` (the one definition: `load::limit`): its CPUs were
/// busy, or, in a closed loop without think time, its own turnaround took at least half of
/// each request's cycle (Little's law; not for event streams, whose time is the server's
/// schedule).
pub fn client_limit(c: &Cell) -> Option<crate::load::limit::ClientLimit> {
    use crate::load::limit::ClientLimit;
    let f = &c.figures;
    if f.client_bound {
        return Some(ClientLimit::Busy(f.client_cpu_util));
    }
    let w = f.why.as_ref()?;
    if !w.closed_no_think || f.streams.is_some() {
        return None;
    }
    ClientLimit::turnaround(w.connections, f.throughput_rps, w.latency_mean_us?)
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

/// The 95 % interval of a Poisson count `k` (Garwood's, by the Wilson–Hilferty
/// approximation): for 0, [0, 3.69] (the rule of three's 3, two-sided).
pub fn poisson_interval(k: u64) -> (f64, f64) {
    let z = 1.96;
    let cube = |x: f64| x * x * x;
    let lo = match k {
        0 => 0.0,
        _ => {
            let k = k as f64;
            k * cube(1.0 - 1.0 / (9.0 * k) - z / (3.0 * k.sqrt()))
        }
    };
    let k1 = (k + 1) as f64;
    let hi = k1 * cube(1.0 - 1.0 / (9.0 * k1) + z / (3.0 * k1.sqrt()));
    (lo.max(0.0), hi)
}

/// Two shares, `a` = (count, of n) and `b`, told apart: their counts' Poisson intervals, as
/// shares, do not overlap.
pub fn shares_apart(a: (u64, u64), b: (u64, u64)) -> bool {
    if a.1 == 0 || b.1 == 0 {
        return false;
    }
    let (alo, ahi) = poisson_interval(a.0);
    let (blo, bhi) = poisson_interval(b.0);
    let (an, bn) = (a.1 as f64, b.1 as f64);
    ahi / an < blo / bn || bhi / bn < alo / an
}

/// A share as a sentence gives it: "3.98 %", and a count of 0 as the rule of three's bound
/// ("< 0.03 % (none of 10,000)").
pub fn share_said(k: u64, n: u64) -> String {
    match (k, n) {
        (_, 0) => "–".into(),
        (0, n) => format!("< {} (none of {})", pct(300.0 / n as f64), thousands(n)),
        (k, n) => pct(k as f64 * 100.0 / n as f64),
    }
}

pub(super) fn pct(v: f64) -> String {
    match v {
        v if v >= 1.0 => format!("{v:.2}%"),
        v if v >= 0.01 => format!("{v:.3}%"),
        v => format!("{v:.4}%"),
    }
}
