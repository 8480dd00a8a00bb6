//! The gates as written (`[CLASS:]FIGURE(>|<)BOUND`, read and written back), and what a gate
//! found in a result ([`Judged`]); judging a document by them is in `judge`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units::{format_duration, parse_duration, BadValue};

/// The figure a gate holds to a bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Figure {
    /// A latency quantile (corrected, in an open loop): p50, p90, p99, p99.9, max.
    Latency(Quantile),
    /// Errors: a count, or a share of the requests and errors (`%`).
    Errors { share: bool },
    /// Completions per second over the window.
    Rps,
}

/// The latency quantiles a gate may name.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Quantile {
    P50,
    P90,
    P99,
    P999,
    Max,
}

/// One gate: `[CLASS:]FIGURE(>|<)BOUND`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    pub class: Option<String>,
    pub figure: Figure,
    /// The run fails when the figure is over the bound (`>`), or under it (`<`).
    pub fails_over: bool,
    /// In µs for latencies, a count or a percentage for errors, req/s for rps.
    pub bound: f64,
}

/// The gates of `--fail-if`, in the order given (a scenario's `fail_if` writes them as the
/// flag does).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gates(pub Vec<Gate>);

impl fmt::Display for Gates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let all: Vec<String> = self.0.iter().map(Gate::to_string).collect();
        write!(f, "{}", all.join(","))
    }
}

impl Serialize for Gates {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Gates {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Gates, D::Error> {
        String::deserialize(d)?
            .parse::<Gates>()
            .map_err(|e| serde::de::Error::custom(e.0))
    }
}

/// What a gate found in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// The gate as written.
    pub gate: String,
    /// The figure measured (`None`: not measured, which fails the gate).
    pub value: Option<f64>,
    pub held: bool,
    /// Why this run's own figures could not have failed the gate (an error count bound at or
    /// over every request it sent), where they could not: it held, and said nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vacuous: Option<String>,
}

/// One gate's text read, or what is wrong with it (a gate no figure can cross is refused:
/// a share over 100 %, `errors>100%`, any figure under 0).
fn gate(s: &str) -> Result<Gate, String> {
    {
        let s = s.trim();
        let (op, i) = match (s.find('>'), s.find('<')) {
            (Some(i), None) => (true, i),
            (None, Some(i)) => (false, i),
            _ => {
                return Err(format!(
                    "'{s}' is not FIGURE>BOUND or FIGURE<BOUND: write e.g. p99>10ms"
                ))
            }
        };
        let (lhs, bound) = (s[..i].trim(), s[i + 1..].trim());
        let (class, name) = match lhs.split_once(':') {
            Some((c, n)) if !c.is_empty() => (Some(c.to_string()), n),
            _ => (None, lhs),
        };
        let latency = |q| -> Result<(Figure, f64), String> {
            let d = parse_duration(bound).map_err(|e| format!("'{s}': {bound} is not a duration ({})", e.0))?;
            Ok((Figure::Latency(q), d.as_secs_f64() * 1e6))
        };
        let (figure, bound) = match name {
            "p50" => latency(Quantile::P50)?,
            "p90" => latency(Quantile::P90)?,
            "p99" => latency(Quantile::P99)?,
            "p99.9" | "p999" => latency(Quantile::P999)?,
            "max" => latency(Quantile::Max)?,
            "errors" => match bound.strip_suffix('%') {
                Some(p) => (
                    Figure::Errors { share: true },
                    p.trim()
                        .parse::<f64>()
                        .map_err(|_| format!("'{s}': {bound} is not a percentage"))?,
                ),
                None => (
                    Figure::Errors { share: false },
                    bound
                        .parse::<f64>()
                        .map_err(|_| format!("'{s}': {bound} is not a count"))?,
                ),
            },
            "rps" => (
                Figure::Rps,
                bound
                    .parse::<f64>()
                    .map_err(|_| format!("'{s}': {bound} is not a rate"))?,
            ),
            other => {
                return Err(format!(
                    "'{other}' in '{s}' is not a figure a gate holds: p50, p90, p99, p99.9, max, errors, rps"
                ))
            }
        };
        if !(bound.is_finite() && bound >= 0.0) {
            return Err(format!("'{s}': the bound must be a number from 0"));
        }
        // A gate is a promise the run can break: one no figure can cross is refused.
        let share = figure == (Figure::Errors { share: true });
        if share && bound > 100.0 {
            return Err(format!("'{s}': a share of the requests is at most 100 %"));
        }
        if share && op && bound >= 100.0 {
            return Err(format!("'{s}' can never fail: no share of the requests is over 100 %"));
        }
        if !op && bound == 0.0 {
            return Err(format!("'{s}' can never fail: no figure is under 0"));
        }
        if class.is_some() && figure == Figure::Rps {
            return Err(format!("'{s}': rps is the run's, not a class's"));
        }
        Ok(Gate {
            class,
            figure,
            fails_over: op,
            bound,
        })
    }
}

impl FromStr for Gates {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Gates, BadValue> {
        let gates: Vec<Gate> = s
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|g| gate(g).map_err(BadValue))
            .collect::<Result<_, _>>()?;
        if gates.is_empty() {
            return Err("no gate given: write e.g. 'p99>10ms,errors>0.1%,rps<5000'".into());
        }
        Ok(Gates(gates))
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(c) = &self.class {
            write!(f, "{c}:")?;
        }
        let op = if self.fails_over { '>' } else { '<' };
        match self.figure {
            Figure::Latency(q) => write!(
                f,
                "{}{op}{}",
                q.name(),
                format_duration(Duration::from_secs_f64(self.bound / 1e6))
            ),
            Figure::Errors { share: true } => write!(f, "errors{op}{}%", self.bound),
            Figure::Errors { share: false } => write!(f, "errors{op}{}", self.bound),
            Figure::Rps => write!(f, "rps{op}{}", self.bound),
        }
    }
}

impl Quantile {
    fn name(self) -> &'static str {
        match self {
            Quantile::P50 => "p50",
            Quantile::P90 => "p90",
            Quantile::P99 => "p99",
            Quantile::P999 => "p99.9",
            Quantile::Max => "max",
        }
    }

    pub(super) fn of(self, l: &crate::hist::Latency) -> Option<f64> {
        match self {
            Quantile::P50 => l.p50,
            Quantile::P90 => l.p90,
            Quantile::P99 => l.p99,
            Quantile::P999 => l.p999,
            Quantile::Max => l.max,
        }
    }
}

impl Gates {
    /// Refuses a gate naming a class the run has not (`classes`: the `--mix` names).
    pub fn check_classes(&self, classes: &[&str]) -> Result<(), BadValue> {
        for g in &self.0 {
            if let Some(c) = g.class.as_deref().filter(|c| !classes.contains(c)) {
                return Err(BadValue(match classes.is_empty() {
                    true => format!("--fail-if {g}: the run has no request classes (--mix) for '{c}'"),
                    false => format!("--fail-if {g}: '{c}' is not a class of --mix ({})", classes.join(", ")),
                }));
            }
        }
        Ok(())
    }
}

impl Judged {
    /// One line: `p99>10ms failed: p99 was 12.3ms` (or `not measured`).
    pub fn said(&self, gate: &Gate) -> String {
        let value = match (self.value, gate.figure) {
            (None, _) => "not measured".to_string(),
            (Some(v), Figure::Latency(_)) => format_duration(Duration::from_secs_f64(v / 1e6)),
            (Some(v), Figure::Errors { share: true }) => format!("{v:.3}%"),
            (Some(v), Figure::Errors { share: false }) => format!("{v:.0}"),
            (Some(v), Figure::Rps) => format!("{v:.0} req/s"),
        };
        let verdict = if self.held { "holds" } else { "failed" };
        match &self.vacuous {
            Some(why) => format!("gate {} {verdict}: {value} (it could not fail: {why})", self.gate),
            None => format!("gate {} {verdict}: {value}", self.gate),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_parse_as_written_and_bad_ones_say_why() {
        let g: Gates = "p99>10ms, errors>0.1%,rps<5000,short:p99.9>5ms,errors>0"
            .parse()
            .unwrap();
        assert_eq!(g.0.len(), 5);
        assert_eq!(g.0[0].figure, Figure::Latency(Quantile::P99));
        assert!(g.0[0].fails_over && (g.0[0].bound - 10_000.0).abs() < 1e-9);
        assert_eq!(g.0[1].figure, Figure::Errors { share: true });
        assert!(!g.0[2].fails_over && g.0[2].bound == 5000.0);
        assert_eq!(g.0[3].class.as_deref(), Some("short"));
        assert_eq!(
            g.0.iter().map(|g| g.to_string()).collect::<Vec<_>>(),
            ["p99>10ms", "errors>0.1%", "rps<5000", "short:p99.9>5ms", "errors>0"]
        );
        for (bad, says) in [
            ("p99=10ms", "is not FIGURE>BOUND"),
            ("p98>1ms", "is not a figure a gate holds"),
            ("p99>fast", "is not a duration"),
            ("errors>x%", "is not a percentage"),
            ("short:rps<10", "not a class's"),
            ("", "no gate given"),
            ("rps<-5", "from 0"),
            ("errors>200%", "at most 100 %"),
            ("errors>100%", "can never fail"),
            ("errors<0", "can never fail"),
            ("p99<0ms", "can never fail"),
            ("rps<0", "can never fail"),
        ] {
            let e = bad.parse::<Gates>().unwrap_err().0;
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
