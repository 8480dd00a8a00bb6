//! `--ratio SET:GET`: the share of SETs and GETs among a keyed run's commands.

use std::fmt;
use std::str::FromStr;

/// The share of SETs and GETs (`--ratio SET:GET`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub set: f64,
    pub get: f64,
}

impl Default for Ratio {
    /// One SET to ten GETs (memtier_benchmark's default).
    fn default() -> Ratio {
        Ratio { set: 1.0, get: 10.0 }
    }
}

impl FromStr for Ratio {
    type Err = BadRatio;
    fn from_str(s: &str) -> Result<Ratio, BadRatio> {
        let bad = |fault| BadRatio {
            given: s.to_string(),
            fault,
        };
        let (a, b) = s.split_once(':').ok_or_else(|| bad(RatioFault::NotSetGet))?;
        let (set, get): (f64, f64) = (
            a.trim().parse().map_err(|_| bad(RatioFault::NotSetGet))?,
            b.trim().parse().map_err(|_| bad(RatioFault::NotSetGet))?,
        );
        let ok = |w: f64| (0.0..=1e9).contains(&w);
        if !ok(set) || !ok(get) || set + get <= 0.0 {
            return Err(bad(RatioFault::OutOfRange));
        }
        Ok(Ratio { set, get })
    }
}

/// A `--ratio` refused: as given, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRatio {
    pub given: String,
    pub fault: RatioFault,
}

/// Why a `--ratio` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RatioFault {
    /// Not two numbers joined by `:`.
    NotSetGet,
    /// A part under 0 or over 1e9, or both 0.
    OutOfRange,
}

impl fmt::Display for BadRatio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.given;
        match self.fault {
            RatioFault::NotSetGet => write!(f, "--ratio '{s}' is not SET:GET (e.g. 1:10, 1:0 for SETs only)"),
            RatioFault::OutOfRange => write!(
                f,
                "--ratio '{s}': both parts are at least 0 and at most 1e9, and not both 0"
            ),
        }
    }
}

impl std::error::Error for BadRatio {}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.set, self.get)
    }
}
