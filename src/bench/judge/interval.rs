//! "Clear" from the rounds: one rule for every metric that is no share of events. Each round
//! gives the log of how many times better one target was than the other (over connection
//! counts, the geometric mean within the round); the noise `s` is the larger of the rounds'
//! standard deviation and the A/A twin's (the experiment's first model served twice in every
//! round, pooled over counts); the interval is the mean ± t(0.95, k − 1)·s/√k. A gap is clear
//! where the whole interval lies beyond 5 % ([`MARGIN`]). One round is never judged: it is
//! shown, and said to be one round.
//!
//! Shares of events (late events) are counts, compared by their Poisson intervals
//! instead (`metric::shares_apart`).

use serde::{Deserialize, Serialize};

/// A gap smaller than this ratio is no difference worth calling, however tight its interval.
pub const MARGIN: f64 = 1.05;

/// A gap's interval over rounds: how many, the geometric mean of the rounds' ratios, and the
/// interval's ends (ratios, ≥ 0; the best over the other).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub rounds: usize,
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// "3 rounds, 1.08–1.25×".
    pub fn said(&self) -> String {
        format!("{} rounds, {:.2}–{:.2}×", self.rounds, self.low, self.high)
    }

    /// The whole interval is beyond [`MARGIN`] in the best's favour.
    pub fn clear(&self) -> bool {
        self.low > MARGIN
    }

    /// The whole interval is within [`MARGIN`] either way: no difference worth calling.
    pub fn within_margin(&self) -> bool {
        self.low >= 1.0 / MARGIN && self.high <= MARGIN
    }
}

/// What the rounds say of a gap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Judged {
    /// Two rounds or more: their interval.
    Rounds(Interval),
    /// One round (or none with both measured): shown, never judged.
    OneRound { ratio: Option<f64> },
}

impl Judged {
    pub fn clear(&self) -> bool {
        matches!(self, Judged::Rounds(i) if i.clear())
    }

    pub fn interval(&self) -> Option<Interval> {
        match self {
            Judged::Rounds(i) => Some(*i),
            Judged::OneRound { .. } => None,
        }
    }

    /// The ratio shown: the rounds' geometric mean, or the one round's.
    pub fn ratio(&self) -> Option<f64> {
        match self {
            Judged::Rounds(i) => Some(i.ratio),
            Judged::OneRound { ratio } => *ratio,
        }
    }
}

/// Student's t at 0.95 with `df` degrees of freedom (one-sided: the interval is a 90 % one).
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746,
        1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => T[d - 1],
        d if d <= 60 => 1.671,
        d if d <= 120 => 1.658,
        _ => 1.645,
    }
}

/// The mean and sample standard deviation of `xs` (0 for fewer than two).
fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let k = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / k;
    let sd = match xs.len() {
        0 | 1 => 0.0,
        _ => (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt(),
    };
    (mean, sd)
}

/// The interval of `log_ratios` (one per round: the log of how many times better one target
/// was than the other), its noise widened to at least `twin_sd` (the A/A twin's standard
/// deviation, in the same logs). One round (or none) is not judged.
pub fn judge(log_ratios: &[f64], twin_sd: Option<f64>) -> Judged {
    let k = log_ratios.len();
    if k < 2 {
        return Judged::OneRound {
            ratio: log_ratios.first().map(|l| l.exp()),
        };
    }
    let (mean, sd) = mean_sd(log_ratios);
    let s = sd.max(twin_sd.unwrap_or(0.0));
    let half = t95(k - 1) * s / (k as f64).sqrt();
    Judged::Rounds(Interval {
        rounds: k,
        ratio: mean.exp(),
        low: (mean - half).exp(),
        high: (mean + half).exp(),
    })
}

/// Two sides measured in separate rounds (two runs of a target, two designs' searches): the
/// interval of the difference of their mean logs (Welch's, with the smaller side's degrees of
/// freedom); not judged where either side has one value.
pub fn judge_apart(a: &[f64], b: &[f64]) -> Judged {
    let (ka, kb) = (a.len(), b.len());
    let (ma, sa) = mean_sd(a);
    let (mb, sb) = mean_sd(b);
    if ka < 2 || kb < 2 {
        return Judged::OneRound {
            ratio: (ka > 0 && kb > 0).then(|| (ma - mb).exp()),
        };
    }
    let se = (sa * sa / ka as f64 + sb * sb / kb as f64).sqrt();
    let half = t95(ka.min(kb) - 1) * se;
    let d = ma - mb;
    Judged::Rounds(Interval {
        rounds: ka.min(kb),
        ratio: d.exp(),
        low: (d - half).exp(),
        high: (d + half).exp(),
    })
}

/// The A/A twin's standard deviation from its logs of twin over original (one per round and
/// count): their root mean square about 0 (two serves of one design differ by nothing but the
/// machine), pooled over counts. `None` without a pair.
pub fn twin_sd(log_ratios: &[f64]) -> Option<f64> {
    (!log_ratios.is_empty()).then(|| (log_ratios.iter().map(|d| d * d).sum::<f64>() / log_ratios.len() as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// +20 % in each of three rounds, the twin 5 % apart: clear, about 1.11–1.30×.
    #[test]
    fn a_steady_gap_over_three_rounds_beyond_the_twins_noise_is_clear() {
        let j = judge(&[1.2f64.ln(); 3], twin_sd(&[1.05f64.ln(), -(1.05f64.ln())]));
        let i = j.interval().unwrap();
        assert!(j.clear(), "{i:?}");
        assert!((i.ratio - 1.2).abs() < 1e-9);
        assert!((1.09..1.12).contains(&i.low) && (1.29..1.33).contains(&i.high), "{i:?}");
        assert_eq!(i.said(), format!("3 rounds, {:.2}–{:.2}×", i.low, i.high));
    }

    /// ±15 % alternating over three rounds: the interval spans both ways, not clear.
    #[test]
    fn a_gap_that_alternates_over_rounds_is_not_clear() {
        let j = judge(&[1.15f64.ln(), (1.0f64 / 1.15).ln(), 1.15f64.ln()], None);
        let i = j.interval().unwrap();
        assert!(!j.clear() && i.low < 1.0 && i.high > 1.0, "{i:?}");
    }

    /// One round is never judged, however large its gap.
    #[test]
    fn one_round_is_not_judged() {
        let j = judge(&[1.5f64.ln()], Some(0.01));
        let Judged::OneRound { ratio: Some(r) } = j else {
            panic!("{j:?}")
        };
        assert!((r - 1.5).abs() < 1e-9);
        assert!(!j.clear() && j.interval().is_none());
        assert!(matches!(judge(&[], None), Judged::OneRound { ratio: None }));
    }

    /// The twin's noise widens the rounds' own: a steady 8 % with no spread of its own is not
    /// clear where the twin differs from itself by 10 %.
    #[test]
    fn the_twins_noise_widens_a_tight_interval() {
        let steady = [1.08f64.ln(); 4];
        assert!(judge(&steady, None).clear());
        assert!(!judge(&steady, twin_sd(&[0.1, -0.1, 0.1, -0.1])).clear());
    }

    /// A gap within 5 % is no difference even where its interval is tight.
    #[test]
    fn a_tight_gap_under_five_percent_is_not_clear() {
        let j = judge(&[1.03f64.ln(), 1.031f64.ln(), 1.029f64.ln()], None);
        assert!(!j.clear() && j.interval().unwrap().within_margin(), "{j:?}");
    }

    /// Welch's interval for sides measured apart: clear where they stand apart, not judged
    /// with one value on a side.
    #[test]
    fn sides_measured_apart_are_judged_by_welchs_interval() {
        let a = [1000f64.ln(), 1010f64.ln(), 990f64.ln()];
        let b = [800f64.ln(), 805f64.ln(), 795f64.ln()];
        assert!(judge_apart(&a, &b).clear());
        assert!(!judge_apart(&a, &a).clear());
        assert!(matches!(judge_apart(&a, &b[..1]), Judged::OneRound { .. }));
    }

    #[test]
    fn t_matches_its_table() {
        assert_eq!(t95(2), 2.920);
        assert!(t95(0).is_infinite() && t95(1000) == 1.645 && t95(30) == 1.697);
    }
}
