//! Shares (late events) compared by their counts: the Poisson interval of a count
//! ([`poisson_interval`]), two shares told apart ([`shares_apart`]), a share as a sentence
//! gives it ([`share_said`]).

use crate::units::thousands;

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
