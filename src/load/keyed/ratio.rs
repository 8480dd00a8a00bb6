//! `--ratio SET:GET`: the share of SETs and GETs among a keyed run's commands.

use std::fmt;
use std::str::FromStr;

use crate::units::BadValue;

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
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Ratio, BadValue> {
        let bad = || BadValue(format!("--ratio '{s}' is not SET:GET (e.g. 1:10, 1:0 for SETs only)"));
        let (a, b) = s.split_once(':').ok_or_else(bad)?;
        let (set, get): (f64, f64) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        let ok = |w: f64| (0.0..=1e9).contains(&w);
        if !ok(set) || !ok(get) || set + get <= 0.0 {
            return Err(BadValue(format!(
                "--ratio '{s}': both parts are at least 0 and at most 1e9, and not both 0"
            )));
        }
        Ok(Ratio { set, get })
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.set, self.get)
    }
}
