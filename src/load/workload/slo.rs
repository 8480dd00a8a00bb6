//! A latency target as a person writes it (`--slo p99<=5ms,short:p50<=1ms`): bounds on a
//! quantile of every request's latency or of a class's. The capacity search that finds the
//! highest rate at which one holds is `load::slo`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::units::{parse_duration, BadValue};

/// A latency quantile a target bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantile {
    P50,
    P90,
    P99,
    P999,
}

impl Quantile {
    pub fn name(self) -> &'static str {
        match self {
            Quantile::P50 => "p50",
            Quantile::P90 => "p90",
            Quantile::P99 => "p99",
            Quantile::P999 => "p999",
        }
    }

    /// The quantile as a fraction (0.99 for p99).
    pub fn fraction(self) -> f64 {
        match self {
            Quantile::P50 => 0.50,
            Quantile::P90 => 0.90,
            Quantile::P99 => 0.99,
            Quantile::P999 => 0.999,
        }
    }

    /// The samples a bound at this quantile needs to be judged: 10 / (1 − q), so that ten
    /// requests lie beyond it (1,000 for a p99, 10,000 for a p999).
    pub fn fewest_samples(self) -> u64 {
        (10.0 / (1.0 - self.fraction())).round() as u64
    }

    pub fn of(self, l: &crate::load::Latency) -> Option<f64> {
        match self {
            Quantile::P50 => l.p50,
            Quantile::P90 => l.p90,
            Quantile::P99 => l.p99,
            Quantile::P999 => l.p999,
        }
    }
}

/// One bound: a quantile of every request's latency, or of a class's, at most `max`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    pub class: Option<String>,
    pub quantile: Quantile,
    pub max: Duration,
}

/// A latency target: bounds that must all hold (`p99<=5ms,short:p50<=1ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct Slo(pub Vec<Bound>);

impl FromStr for Slo {
    type Err = BadSlo;
    fn from_str(s: &str) -> Result<Slo, BadSlo> {
        let bounds = s
            .split(',')
            .map(|part| {
                let bad = |fault| BadSlo {
                    given: s.to_string(),
                    part: part.to_string(),
                    fault,
                };
                let (left, max) = part.trim().split_once("<=").ok_or_else(|| bad(SloFault::NoBound))?;
                let (class, q) = match left.rsplit_once(':') {
                    Some((c, q)) if !c.is_empty() => (Some(c.to_string()), q),
                    Some(_) => return Err(bad(SloFault::EmptyClass)),
                    None => (None, left),
                };
                let quantile = match q.trim() {
                    "p50" => Quantile::P50,
                    "p90" => Quantile::P90,
                    "p99" => Quantile::P99,
                    "p999" | "p99.9" => Quantile::P999,
                    _ => return Err(bad(SloFault::NotAQuantile)),
                };
                let max = parse_duration(max.trim()).map_err(|e| bad(SloFault::NotADuration(e)))?;
                if max.is_zero() {
                    return Err(bad(SloFault::ZeroBound));
                }
                Ok(Bound { class, quantile, max })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Slo(bounds))
    }
}

/// A `--slo` refused: as given, the bound at fault, and why.
#[derive(Debug)]
pub struct BadSlo {
    pub given: String,
    pub part: String,
    pub fault: SloFault,
}

/// Why a bound of a `--slo` is refused.
#[derive(Debug)]
pub enum SloFault {
    /// No `<=`.
    NoBound,
    /// `:p99<=..`: a class of no name.
    EmptyClass,
    /// A quantile other than p50, p90, p99 or p999 (the part's, before `<=` and after a
    /// class's `:`).
    NotAQuantile,
    /// A bound that is not a duration.
    NotADuration(BadValue),
    /// A bound of zero.
    ZeroBound,
}

impl fmt::Display for BadSlo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let form = "write QUANTILE<=DURATION (p50, p90, p99 or p999), e.g. p99<=5ms, several joined by ',', a class's as NAME:p99<=1ms";
        write!(f, "--slo '{}': '{}': ", self.given, self.part)?;
        match &self.fault {
            SloFault::NoBound => f.write_str("no '<='"),
            SloFault::EmptyClass => f.write_str("an empty class name"),
            SloFault::NotAQuantile => write!(f, "'{}' is not a quantile", quantile_of(&self.part)),
            SloFault::NotADuration(e) => write!(f, "{e}"),
            SloFault::ZeroBound => f.write_str("the bound must be more than zero"),
        }?;
        write!(f, " ({form})")
    }
}

/// The quantile of a bound as written (`short:p98<=1ms`: `p98`), read as `Slo::from_str` reads it.
fn quantile_of(part: &str) -> &str {
    let left = part.trim().split_once("<=").map_or("", |(l, _)| l);
    left.rsplit_once(':').map_or(left, |(_, q)| q).trim()
}

impl std::error::Error for BadSlo {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.fault {
            SloFault::NotADuration(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|b| {
                let class = b.class.as_ref().map(|c| format!("{c}:")).unwrap_or_default();
                format!("{class}{}<={}", b.quantile.name(), crate::units::exact_duration(b.max))
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

impl Slo {
    /// The request classes its bounds name.
    pub fn classes(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|b| b.class.as_deref())
    }

    /// The requests a probe at any rate must carry for every bound to have its
    /// [`fewest_samples`](Quantile::fewest_samples), a class's scaled by its `share` of the
    /// requests (a class `share` does not know counts as all of them).
    pub fn fewest_requests(&self, share: impl Fn(&str) -> Option<f64>) -> f64 {
        self.0
            .iter()
            .map(|b| {
                let part = b.class.as_deref().and_then(&share).filter(|s| *s > 0.0).unwrap_or(1.0);
                b.quantile.fewest_samples() as f64 / part
            })
            .fold(0.0, f64::max)
    }

    /// The tightest bound, in µs.
    pub fn tightest_us(&self) -> f64 {
        self.0
            .iter()
            .map(|b| b.max.as_secs_f64() * 1e6)
            .fold(f64::INFINITY, f64::min)
    }
}
