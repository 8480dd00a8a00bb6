//! The three answers a pair gets: the model's figure over the product's, each in its own E[S],
//! round by round, and the interval the rounds span held against [`MARGIN`].

use serde::{Deserialize, Serialize};

use super::side::median_of;

/// A ratio as the table says it: two decimals, more where it is under 0.1 (never "0.00×").
pub fn ratio_said(r: f64) -> String {
    let digits = match r {
        r if r > 0.0 && r < 0.1 => (-r.log10()).floor() as usize + 2,
        _ => 2,
    };
    format!("{r:.digits$}×")
}

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

/// The interval of the median is the narrowest pair of order statistics that covers it with at
/// least this probability (distribution-free); with 7 rounds or fewer it is the least and the
/// most of them, which cover it less often (2 rounds: 50 %, 3: 75 %, 4: 87.5 %, 5: 94 %, 6: 97 %,
/// 7: 98 %; narrower pairs first reach 90 % at 8 rounds).
pub const COVERAGE: f64 = 0.9;

/// A ratio over rounds: its median, the interval of the median ([`COVERAGE`]), and how many
/// rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    pub rounds: usize,
}

/// P(X ≤ k) for X ~ Binomial(n, ½).
fn half_binomial_cdf(n: usize, k: usize) -> f64 {
    let mut c = 1.0; // C(n, 0)
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            c = c * (n + 1 - i) as f64 / i as f64;
        }
        sum += c;
    }
    sum / 2f64.powi(n as i32)
}

/// The 1-based rank k of the lower order statistic of the median's interval over `n` rounds:
/// the largest with (x₍ₖ₎, x₍ₙ₊₁₋ₖ₎) covering the median with at least [`COVERAGE`], else 1.
fn rank(n: usize) -> usize {
    (1..=n.div_ceil(2))
        .rev()
        .find(|&k| 1.0 - 2.0 * half_binomial_cdf(n, k - 1) >= COVERAGE)
        .unwrap_or(1)
}

impl Interval {
    /// The interval of `ratios` (one per round, finite; `None`: no round).
    pub fn of(ratios: &[f64]) -> Option<Interval> {
        let mut xs: Vec<f64> = ratios.iter().copied().filter(|r| r.is_finite()).collect();
        let median = median_of(xs.clone())?;
        xs.sort_by(f64::total_cmp);
        let n = xs.len();
        let k = rank(n);
        Some(Interval {
            median,
            lo: xs[k - 1],
            hi: xs[n - k],
            rounds: n,
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
        format!("{} [{}–{}]", ratio_said(self.median), short(self.lo), short(self.hi))
    }
}

/// A ratio's digits without the sign: two decimals, more under 0.1.
fn short(r: f64) -> String {
    ratio_said(r).trim_end_matches('×').to_string()
}

/// The pair's answer from its figures' intervals (`None`: none was compared): it differs where
/// one lies outside the margin, stands where every one was compared and lies within, and is
/// unresolved otherwise (one figure within and the other not compared stands on half the
/// question).
pub fn of(intervals: &[Option<Interval>]) -> Option<Answer> {
    let answers: Vec<Answer> = intervals.iter().flatten().map(Interval::answer).collect();
    if answers.is_empty() {
        None
    } else if answers.contains(&Answer::Differs) {
        Some(Answer::Differs)
    } else if answers.len() == intervals.len() && answers.iter().all(|a| *a == Answer::Stands) {
        Some(Answer::Stands)
    } else {
        Some(Answer::Unresolved)
    }
}
