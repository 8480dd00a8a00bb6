//! A service-time distribution ([`Dist`]): a fixed time, exponential, log-normal, Pareto, a
//! weighted mix or a measured table; its draws, its mean, and its mean below a cut.

use std::sync::Arc;
use std::time::Duration;

use crate::rng::Rng;

/// A service-time distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum Dist {
    Fixed(Duration),
    /// Exponential, with its mean in ns.
    Exp(f64),
    /// Log-normal: the normal's mean and deviation (ns, natural logarithm).
    LogNormal {
        mu: f64,
        sigma: f64,
    },
    /// Pareto: its least value (ns) and shape.
    Pareto {
        scale: f64,
        shape: f64,
    },
    /// A weighted mix: cumulative weights (ending at 1.0) and their distributions.
    Mix(Vec<f64>, Vec<Dist>),
    /// Measured: (quantile, ns) pairs, increasing in both.
    Table(Arc<Vec<(f64, f64)>>),
}

impl Dist {
    /// One service time.
    pub fn sample(&self, rng: &mut Rng) -> Duration {
        let ns = match self {
            Dist::Fixed(d) => return *d,
            Dist::Exp(mean) => rng.exp(*mean),
            Dist::LogNormal { mu, sigma } => (mu + sigma * rng.normal()).exp(),
            Dist::Pareto { scale, shape } => rng.pareto(*scale, *shape),
            Dist::Mix(cumulative, parts) => return parts[rng.pick(cumulative)].sample(rng),
            Dist::Table(t) => quantile(t, rng.uniform()),
        };
        Duration::from_nanos(ns.clamp(0.0, 3.6e12) as u64)
    }

    /// Its mean.
    pub fn mean(&self) -> Duration {
        let ns = match self {
            Dist::Fixed(d) => return *d,
            Dist::Exp(mean) => *mean,
            Dist::LogNormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            Dist::Pareto { scale, shape } => scale * shape / (shape - 1.0),
            Dist::Mix(cumulative, parts) => {
                let mut prev = 0.0;
                let mut sum = 0.0;
                for (c, d) in cumulative.iter().zip(parts) {
                    sum += (c - prev) * d.mean().as_nanos() as f64;
                    prev = *c;
                }
                sum
            }
            Dist::Table(t) => {
                // The mean of the piecewise-linear quantile function.
                let mut prev = (0.0, t.first().map_or(0.0, |p| p.1));
                let mut sum = 0.0;
                for &(q, v) in t.iter() {
                    sum += (q - prev.0) * (v + prev.1) / 2.0;
                    prev = (q, v);
                }
                sum
            }
        };
        Duration::from_nanos(ns.max(0.0) as u64)
    }
}

impl Dist {
    /// The mean of its draws cut at `cap` (ns): E[min(X, cap)], in closed form where there is
    /// one, else by a fine sum over the quantiles (a measured table).
    pub fn mean_below(&self, cap: f64) -> f64 {
        match self {
            Dist::Fixed(d) => (d.as_nanos() as f64).min(cap),
            Dist::Exp(m) => m * (1.0 - (-cap / m).exp()),
            Dist::LogNormal { mu, sigma } => {
                let l = cap.ln();
                (mu + sigma * sigma / 2.0).exp() * phi((l - mu - sigma * sigma) / sigma)
                    + cap * (1.0 - phi((l - mu) / sigma))
            }
            Dist::Pareto { scale, shape } if cap <= *scale => cap,
            Dist::Pareto { scale, shape } => {
                scale + scale.powf(*shape) * (cap.powf(1.0 - shape) - scale.powf(1.0 - shape)) / (1.0 - shape)
            }
            Dist::Mix(cumulative, parts) => {
                let mut prev = 0.0;
                let mut sum = 0.0;
                for (c, d) in cumulative.iter().zip(parts) {
                    sum += (c - prev) * d.mean_below(cap);
                    prev = *c;
                }
                sum
            }
            Dist::Table(t) => {
                const STEPS: usize = 20_000;
                (0..STEPS)
                    .map(|i| quantile(t, (i as f64 + 0.5) / STEPS as f64).min(cap))
                    .sum::<f64>()
                    / STEPS as f64
            }
        }
    }
}

/// The standard normal's distribution function (erf by Abramowitz and Stegun 7.1.26, within
/// 1.5e-7).
fn phi(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// The value at quantile `u` of a table, interpolated linearly.
fn quantile(t: &[(f64, f64)], u: f64) -> f64 {
    let i = t.partition_point(|&(q, _)| q < u);
    match (i.checked_sub(1).map(|j| t[j]), t.get(i)) {
        (_, None) => t.last().map_or(0.0, |p| p.1),
        (None, Some(p)) => p.1,
        (Some(a), Some(b)) if b.0 > a.0 => a.1 + (b.1 - a.1) * (u - a.0) / (b.0 - a.0),
        (Some(_), Some(b)) => b.1,
    }
}
