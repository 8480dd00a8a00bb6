//! The one rule of what may be ranked ([`rankable`]), the one value a ranking takes
//! ([`Ranked`]: only this file makes one), what a cell's figure is to the judge ([`Rank`]), and
//! the sample floor of a quantile ([`floor`]).
//!
//! A figure is ranked only where it is measured, in a cell that is no calibration, by a target
//! that does the experiment's work, under its metric's own rule (a cell the server bound, that
//! served every connection and lost no request, over what the measurement resolves: the
//! metric's `unranked`), from a design that starved or lost nowhere in its experiment, and from
//! enough samples for its quantile. And two ranked figures are compared only where their
//! targets ran placed alike ([`Ranked::ratio`]).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use super::metrics::{Metric, CAPACITY, MEMORY};
use super::unranked::Unranked;
use crate::bench::record::{Cell, Placed};

/// A figure the one rule let through: its value, and where its target ran. Its fields are
/// private to this file, so whatever sorts, marks, compares or names a best takes a value
/// [`rankable`] made; two of them compare only where their targets ran placed alike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    value: f64,
    /// Where its target ran (a digest of its [`Placed`]; 0: not known).
    place: u64,
}

impl Ranked {
    /// The value, in its metric's unit.
    pub fn get(self) -> f64 {
        self.value
    }

    /// Whether `self` and `other` ran placed alike (the same server and client CPUs).
    pub fn alike(self, other: Ranked) -> bool {
        self.place == other.place
    }

    /// How many times better `self` is than `other` on `m` (`None`: placed differently, so
    /// not compared).
    pub fn ratio(self, other: Ranked, m: &Metric) -> Option<f64> {
        self.alike(other).then(|| m.better(self.value, other.value))
    }

    /// The better of the two on `m`, where they compare (`None`: placed differently).
    pub fn best_of(self, other: Ranked, m: &Metric) -> Option<Ranked> {
        self.alike(other).then(|| {
            if m.better(other.value, self.value) > 1.0 {
                other
            } else {
                self
            }
        })
    }

    /// The same figure with value `v`: what it is freed of its round's drift (paired rounds
    /// rank a target by how it did against the others within each round).
    pub fn freed(self, v: f64) -> Ranked {
        Ranked { value: v, ..self }
    }

    /// Orders ranked figures of one metric best first (a figure that is no number last).
    pub fn best_first(m: &Metric, xs: &mut [Ranked]) {
        xs.sort_by(|a, b| match m.higher_is_better {
            true => b.value.total_cmp(&a.value),
            false => a.value.total_cmp(&b.value),
        });
    }
}

/// What a cell's figure of a metric is to the judge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rank {
    /// Measured and ranked.
    Ranked(Ranked),
    /// Measured, and not ranked, for this reason.
    Unranked(f64, Unranked),
    /// Not measured.
    NotMeasured,
}

impl Rank {
    /// The value, where it may be ranked.
    pub fn ranked(self) -> Option<Ranked> {
        match self {
            Rank::Ranked(v) => Some(v),
            _ => None,
        }
    }

    /// The value measured, ranked or not (what a table shows).
    pub fn measured(self) -> Option<f64> {
        match self {
            Rank::Ranked(v) => Some(v.value),
            Rank::Unranked(v, _) => Some(v),
            Rank::NotMeasured => None,
        }
    }

    /// A ranked figure of a cell whose placement is not known: what tests compare with.
    #[cfg(test)]
    pub(crate) fn ranked_unplaced(value: f64) -> Rank {
        Rank::Ranked(Ranked { value, place: 0 })
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

/// Where `c`'s target ran, as a digest two figures compare by (0: not known).
fn place_of(placed: Option<&Placed>) -> u64 {
    let Some(p) = placed else { return 0 };
    let mut h = DefaultHasher::new();
    p.hash(&mut h);
    h.finish() | 1
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
    if c.does_no_work {
        return Rank::Unranked(v, Unranked::DoesNoWork);
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
    Rank::Ranked(Ranked {
        value: v,
        place: place_of(c.placed.as_ref()),
    })
}

/// A figure the rule does not rank that still bounds its target's cost from below: memory per
/// connection of a design that starved connections and lost no request (the connections it
/// never served hold nothing, so serving every one costs at least this). It may show its
/// target behind the others, never ahead (`ranking`'s who fell behind); `None` for any other.
pub fn at_least(m: &Metric, c: &Cell, cells: &[&Cell]) -> Option<f64> {
    if m.name != MEMORY.name {
        return None;
    }
    let Rank::Unranked(v, Unranked::Starved | Unranked::Elsewhere) = rankable(m, c, cells) else {
        return None;
    };
    let lost = |o: &&&Cell| o.experiment == c.experiment && o.target == c.target && o.figures.errors > 0;
    (c.figures.errors == 0 && !cells.iter().any(|o| lost(&o))).then_some(v)
}

/// One target's figure over its repeats: the median of what they measured, ranked where every
/// repeat's is (else the first reason one is not); repeats measuring nothing are left out.
pub fn median(ranks: &[Rank]) -> Rank {
    let mut values: Vec<f64> = ranks.iter().filter_map(|r| r.measured()).collect();
    if values.is_empty() {
        return Rank::NotMeasured;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = match n % 2 {
        1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    };
    if let Some(u) = ranks.iter().find_map(|r| r.why_not()) {
        return Rank::Unranked(median, u);
    }
    // Repeats of one target ran where it ran: the first ranked one says where.
    let place = ranks.iter().find_map(|r| r.ranked()).map_or(0, |r| r.place);
    Rank::Ranked(Ranked { value: median, place })
}

/// The targets of `cells` placed alike, each group's targets in the order of `targets`: one
/// group where every target ran where the others did. Targets across groups are not compared.
pub fn placed_alike(cells: &[&Cell], targets: &[String]) -> Vec<(Option<Placed>, Vec<String>)> {
    let mut groups: Vec<(Option<Placed>, Vec<String>)> = Vec::new();
    for t in targets {
        let placed = cells.iter().find(|c| &c.target == t).and_then(|c| c.placed.clone());
        match groups.iter_mut().find(|(p, _)| *p == placed) {
            Some((_, ts)) => ts.push(t.clone()),
            None => groups.push((placed, vec![t.clone()])),
        }
    }
    groups
}
