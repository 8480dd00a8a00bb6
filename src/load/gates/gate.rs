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
            .map_err(serde::de::Error::custom)
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

/// A `--fail-if` gate refused: the gate as written, its figure and bound as written (empty
/// where it has none), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadGate {
    pub gate: String,
    pub figure: String,
    pub bound: String,
    pub why: GateFault,
}

/// Why a gate is refused (a gate no figure can cross is refused too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateFault {
    /// Not one `>` or `<`.
    NoComparison,
    /// A figure no gate holds.
    UnknownFigure,
    /// A latency's bound that is not a duration (why not).
    NotADuration(BadValue),
    /// An error share's bound that is not a number.
    NotAPercentage,
    /// An error count's bound that is not a number.
    NotACount,
    /// A rate's bound that is not a number.
    NotARate,
    /// A bound under 0, or not finite.
    Negative,
    /// A share over 100 %.
    ShareOver100,
    /// `errors>100%`: no share of the requests is over 100 %.
    ShareNeverOver,
    /// `FIGURE<0`: no figure is under 0.
    NeverUnder,
    /// `CLASS:rps`: the rate is the run's.
    ClassRate,
    /// No gate at all.
    NoGate,
}

impl fmt::Display for BadGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, bound) = (&self.gate, &self.bound);
        match &self.why {
            GateFault::NoComparison => write!(f, "'{s}' is not FIGURE>BOUND or FIGURE<BOUND: write e.g. p99>10ms"),
            GateFault::UnknownFigure => write!(
                f,
                "'{}' in '{s}' is not a figure a gate holds: p50, p90, p99, p99.9, max, errors, rps",
                self.figure
            ),
            GateFault::NotADuration(why) => write!(f, "'{s}': {bound} is not a duration ({why})"),
            GateFault::NotAPercentage => write!(f, "'{s}': {bound} is not a percentage"),
            GateFault::NotACount => write!(f, "'{s}': {bound} is not a count"),
            GateFault::NotARate => write!(f, "'{s}': {bound} is not a rate"),
            GateFault::Negative => write!(f, "'{s}': the bound must be a number from 0"),
            GateFault::ShareOver100 => write!(f, "'{s}': a share of the requests is at most 100 %"),
            GateFault::ShareNeverOver => write!(f, "'{s}' can never fail: no share of the requests is over 100 %"),
            GateFault::NeverUnder => write!(f, "'{s}' can never fail: no figure is under 0"),
            GateFault::ClassRate => write!(f, "'{s}': rps is the run's, not a class's"),
            GateFault::NoGate => f.write_str("no gate given: write e.g. 'p99>10ms,errors>0.1%,rps<5000'"),
        }
    }
}

impl std::error::Error for BadGate {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.why {
            GateFault::NotADuration(e) => Some(e),
            _ => None,
        }
    }
}

/// One gate's text read, or why it is refused (a gate no figure can cross is refused: a
/// share over 100 %, `errors>100%`, any figure under 0).
fn gate(s: &str) -> Result<Gate, BadGate> {
    let s = s.trim();
    let bad = |figure: &str, bound: &str, why| BadGate {
        gate: s.to_string(),
        figure: figure.to_string(),
        bound: bound.to_string(),
        why,
    };
    let (op, i) = match (s.find('>'), s.find('<')) {
        (Some(i), None) => (true, i),
        (None, Some(i)) => (false, i),
        _ => return Err(bad("", "", GateFault::NoComparison)),
    };
    let (lhs, bound_text) = (s[..i].trim(), s[i + 1..].trim());
    let (class, name) = match lhs.split_once(':') {
        Some((c, n)) if !c.is_empty() => (Some(c.to_string()), n),
        _ => (None, lhs),
    };
    let fault = |why| bad(name, bound_text, why);
    let number = |t: &str, why| t.trim().parse::<f64>().map_err(|_| fault(why));
    let latency = |q| -> Result<(Figure, f64), BadGate> {
        let d = parse_duration(bound_text).map_err(|e| fault(GateFault::NotADuration(e)))?;
        Ok((Figure::Latency(q), d.as_secs_f64() * 1e6))
    };
    let (figure, bound) = match name {
        "p50" => latency(Quantile::P50)?,
        "p90" => latency(Quantile::P90)?,
        "p99" => latency(Quantile::P99)?,
        "p99.9" | "p999" => latency(Quantile::P999)?,
        "max" => latency(Quantile::Max)?,
        "errors" => match bound_text.strip_suffix('%') {
            Some(p) => (Figure::Errors { share: true }, number(p, GateFault::NotAPercentage)?),
            None => (
                Figure::Errors { share: false },
                number(bound_text, GateFault::NotACount)?,
            ),
        },
        "rps" => (Figure::Rps, number(bound_text, GateFault::NotARate)?),
        _ => return Err(fault(GateFault::UnknownFigure)),
    };
    if !(bound.is_finite() && bound >= 0.0) {
        return Err(fault(GateFault::Negative));
    }
    // A gate is a promise the run can break: one no figure can cross is refused.
    let share = figure == (Figure::Errors { share: true });
    if share && bound > 100.0 {
        return Err(fault(GateFault::ShareOver100));
    }
    if share && op && bound >= 100.0 {
        return Err(fault(GateFault::ShareNeverOver));
    }
    if !op && bound == 0.0 {
        return Err(fault(GateFault::NeverUnder));
    }
    if class.is_some() && figure == Figure::Rps {
        return Err(fault(GateFault::ClassRate));
    }
    Ok(Gate {
        class,
        figure,
        fails_over: op,
        bound,
    })
}

impl FromStr for Gates {
    type Err = BadGate;
    fn from_str(s: &str) -> Result<Gates, BadGate> {
        let gates: Vec<Gate> = s
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(gate)
            .collect::<Result<_, _>>()?;
        if gates.is_empty() {
            return Err(BadGate {
                gate: s.to_string(),
                figure: String::new(),
                bound: String::new(),
                why: GateFault::NoGate,
            });
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
    pub fn check_classes(&self, classes: &[&str]) -> Result<(), UnknownClass> {
        for g in &self.0 {
            if let Some(c) = g.class.as_deref().filter(|c| !classes.contains(c)) {
                return Err(UnknownClass {
                    gate: g.clone(),
                    class: c.to_string(),
                    classes: classes.iter().map(|c| c.to_string()).collect(),
                });
            }
        }
        Ok(())
    }
}

/// A `--fail-if` gate naming a class the run has not: the gate, its class, and the run's
/// classes (the `--mix` names; none without `--mix`).
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownClass {
    pub gate: Gate,
    pub class: String,
    pub classes: Vec<String>,
}

impl fmt::Display for UnknownClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (g, c) = (&self.gate, &self.class);
        match self.classes.is_empty() {
            true => write!(f, "--fail-if {g}: the run has no request classes (--mix) for '{c}'"),
            false => write!(
                f,
                "--fail-if {g}: '{c}' is not a class of --mix ({})",
                self.classes.join(", ")
            ),
        }
    }
}

impl std::error::Error for UnknownClass {}

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
        type Is = fn(&GateFault) -> bool;
        let cases: [(&str, Is, &str); 14] = [
            (
                "p99=10ms",
                |f| matches!(f, GateFault::NoComparison),
                "is not FIGURE>BOUND",
            ),
            (
                "p98>1ms",
                |f| matches!(f, GateFault::UnknownFigure),
                "'p98' in 'p98>1ms' is not a figure a gate holds",
            ),
            (
                "p99>fast",
                |f| matches!(f, GateFault::NotADuration(_)),
                "fast is not a duration",
            ),
            (
                "errors>x%",
                |f| matches!(f, GateFault::NotAPercentage),
                "is not a percentage",
            ),
            ("errors>x", |f| matches!(f, GateFault::NotACount), "is not a count"),
            ("rps<x", |f| matches!(f, GateFault::NotARate), "is not a rate"),
            ("short:rps<10", |f| matches!(f, GateFault::ClassRate), "not a class's"),
            ("", |f| matches!(f, GateFault::NoGate), "no gate given"),
            ("rps<-5", |f| matches!(f, GateFault::Negative), "from 0"),
            ("errors>200%", |f| matches!(f, GateFault::ShareOver100), "at most 100 %"),
            (
                "errors>100%",
                |f| matches!(f, GateFault::ShareNeverOver),
                "can never fail",
            ),
            ("errors<0", |f| matches!(f, GateFault::NeverUnder), "can never fail"),
            ("p99<0ms", |f| matches!(f, GateFault::NeverUnder), "can never fail"),
            ("rps<0", |f| matches!(f, GateFault::NeverUnder), "can never fail"),
        ];
        for (bad, is, says) in cases {
            let e = bad.parse::<Gates>().unwrap_err();
            assert!(is(&e.why), "{bad}: {e:?}");
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
        // A bound that is not a duration says why, as the duration's own reader does.
        let e = "p99>fast".parse::<Gates>().unwrap_err();
        let why = parse_duration("fast").unwrap_err();
        assert_eq!(e.why, GateFault::NotADuration(why.clone()));
        assert_eq!(e.to_string(), format!("'p99>fast': fast is not a duration ({why})"));
    }

    #[test]
    fn a_gate_naming_a_class_the_run_has_not_is_refused_with_the_classes_it_has() {
        let gates: Gates = "short:p99>5ms,p50>1ms".parse().unwrap();
        assert_eq!(gates.check_classes(&["short", "long"]), Ok(()));
        let e = gates.check_classes(&["long"]).unwrap_err();
        assert_eq!((e.class.as_str(), e.classes.len()), ("short", 1));
        assert_eq!(
            e.to_string(),
            "--fail-if short:p99>5ms: 'short' is not a class of --mix (long)"
        );
        let e = gates.check_classes(&[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--fail-if short:p99>5ms: the run has no request classes (--mix) for 'short'"
        );
    }
}
