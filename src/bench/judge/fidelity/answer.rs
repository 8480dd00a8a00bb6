//! The three answers a pair gets: the model's figure over the product's, each in its own E[S],
//! round by round, and the interval the rounds span held against [`MARGIN`].

use serde::{Deserialize, Serialize};

use super::side::median_of;

/// A model stands for its product where the rounds' interval of each shape ratio lies within
/// this factor either way, and differs where one lies wholly outside it.
pub const MARGIN: f64 = 1.25;

/// Fewer rounds than this give no interval: the pair is unresolved.
pub const LEAST_ROUNDS: usize = 2;

/// What fidelity says of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    /// Every compared shape ratio's interval within [`MARGIN`].
    Stands,
    /// One interval wholly outside [`MARGIN`].
    Differs,
    /// An interval across the margin, or too few rounds for one.
    Unresolved,
}

impl Answer {
    pub fn word(self) -> &'static str {
        match self {
            Answer::Stands => "stands",
            Answer::Differs => "differs",
            Answer::Unresolved => "unresolved",
        }
    }
}

/// A ratio over rounds: its median, the least and the most of the rounds, and how many.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    pub rounds: usize,
}

impl Interval {
    /// The interval of `ratios` (one per round; `None`: no round).
    pub fn of(ratios: &[f64]) -> Option<Interval> {
        let median = median_of(ratios.to_vec())?;
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Interval {
            median,
            lo,
            hi,
            rounds: ratios.len(),
        })
    }

    /// What the interval answers on its own.
    pub fn answer(&self) -> Answer {
        let (low, high) = (1.0 / MARGIN, MARGIN);
        if self.rounds < LEAST_ROUNDS {
            Answer::Unresolved
        } else if self.lo >= low && self.hi <= high {
            Answer::Stands
        } else if self.hi < low || self.lo > high {
            Answer::Differs
        } else {
            Answer::Unresolved
        }
    }

    /// As the table says it: "1.32× [1.10–1.51]".
    pub fn said(&self) -> String {
        format!(
            "{} [{}–{}]",
            super::row::ratio_said(self.median),
            short(self.lo),
            short(self.hi)
        )
    }
}

/// A ratio's digits without the sign: two decimals, more under 0.1.
fn short(r: f64) -> String {
    super::row::ratio_said(r).trim_end_matches('×').to_string()
}

/// The pair's answer from its figures' intervals (`None`: none was compared): it differs where
/// one lies outside the margin, stands where every one lies within, and is unresolved
/// otherwise.
pub fn of(intervals: &[Option<Interval>]) -> Option<Answer> {
    let answers: Vec<Answer> = intervals.iter().flatten().map(Interval::answer).collect();
    if answers.is_empty() {
        None
    } else if answers.contains(&Answer::Differs) {
        Some(Answer::Differs)
    } else if answers.iter().all(|a| *a == Answer::Stands) {
        Some(Answer::Stands)
    } else {
        Some(Answer::Unresolved)
    }
}
