//! What is wrong with `--work`'s text: a distribution D that does not read ([`BadDist`]), and
//! a spec whose parts do not ([`BadWork`], which names the spec as given).

use std::fmt;
use std::path::PathBuf;

use crate::units::BadValue;

/// A distribution D that does not read.
#[derive(Debug)]
pub enum BadDist {
    /// A time (a fixed time, or a mean) that is not a duration.
    Duration(BadValue),
    /// D, or one of its arguments (`given`), and what is wrong with it.
    Part { given: String, fault: DistFault },
    /// `hist:FILE` that cannot be read.
    HistRead { path: PathBuf, source: std::io::Error },
    /// `hist:FILE` that holds no histogram with values.
    HistEmpty { path: PathBuf },
}

/// What is wrong with D or one of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum DistFault {
    /// An argument that is not a number: what it was to be.
    NotANumber { what: &'static str },
    /// A mean of zero.
    ZeroMean,
    /// A call with the wrong number of arguments.
    Arguments { name: &'static str, takes: usize },
    /// lognormal's sigma outside 0..10.
    Sigma { sigma: f64 },
    /// pareto's alpha at 1 or below.
    Alpha,
    /// A call of no distribution muxlab knows.
    Unknown,
    /// A part of `mix(...)` that is not `P%:D`.
    MixPart { part: String },
    /// A weight of `mix(...)` that is not positive.
    MixWeight { weight: f64 },
    /// The weights of `mix(...)`, not summing to 100 %.
    MixSum { total: f64 },
}

impl From<BadValue> for BadDist {
    fn from(e: BadValue) -> Self {
        BadDist::Duration(e)
    }
}

impl fmt::Display for BadDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, fault) = match self {
            BadDist::Duration(e) => return e.fmt(f),
            BadDist::HistRead { path, source } => return write!(f, "hist:{}: {source}", path.display()),
            BadDist::HistEmpty { path } => {
                return write!(
                    f,
                    "hist:{}: neither a .hgrm percentile listing nor an HdrHistogram V2 log with values",
                    path.display()
                )
            }
            BadDist::Part { given, fault } => (given, fault),
        };
        match fault {
            DistFault::NotANumber { what } => write!(f, "'{s}' is not a number ({what})"),
            DistFault::ZeroMean => write!(f, "'{s}': a mean must be more than zero"),
            DistFault::Arguments { name, takes } => write!(
                f,
                "'{s}': {name} takes {takes} argument{}",
                if *takes == 1 { "" } else { "s" }
            ),
            DistFault::Sigma { sigma } => write!(f, "'{s}': sigma {sigma} is outside 0..10"),
            DistFault::Alpha => write!(
                f,
                "'{s}': alpha must be more than 1 (the mean is infinite at 1 and below)"
            ),
            DistFault::Unknown => write!(
                f,
                "'{s}' is not a distribution: write exp(MEAN), lognormal(MEAN,SIGMA), pareto(MEAN,ALPHA), mix(P%:D,...), bimodal1(MEAN), bimodal2(MEAN) or hist:FILE"
            ),
            DistFault::MixPart { part } => write!(f, "'{s}': '{part}' is not P%:D (e.g. 99.5%:50us)"),
            DistFault::MixWeight { weight } => write!(f, "'{s}': the weight {weight}% is not positive"),
            DistFault::MixSum { total } => write!(f, "'{s}': the weights sum to {total}%, not 100%"),
        }
    }
}

impl std::error::Error for BadDist {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BadDist::Duration(e) => Some(e),
            BadDist::HistRead { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A `--work` spec (or a request's query, read as one) that does not read: the spec as given,
/// and what is wrong with it.
#[derive(Debug)]
pub struct BadWork {
    pub given: String,
    pub fault: WorkFault,
}

/// What is wrong with a `--work` spec.
#[derive(Debug)]
pub enum WorkFault {
    /// A part that is not `cpu:D` or `sleep:D`.
    NoKind { part: String },
    /// A part's distribution does not read.
    Dist(BadDist),
    /// A part of a kind other than cpu and sleep.
    UnknownKind { kind: String },
    /// A kind given twice.
    Twice { kind: &'static str },
    /// Neither part.
    Nothing,
}

impl fmt::Display for BadWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--work '{}': ", self.given)?;
        match &self.fault {
            WorkFault::NoKind { part } => write!(f, "'{part}' is not cpu:D or sleep:D (or none): write e.g. cpu:200us"),
            WorkFault::Dist(e) => e.fmt(f),
            WorkFault::UnknownKind { kind } => write!(
                f,
                "'{kind}' is not cpu or sleep: write cpu:200us, sleep:exp(1ms) or cpu:50us+sleep:1ms"
            ),
            WorkFault::Twice { kind } => write!(f, "{kind} is given twice"),
            WorkFault::Nothing => f.write_str("write cpu:200us, sleep:1ms, cpu:exp(50us)+sleep:1ms or none"),
        }
    }
}

impl std::error::Error for BadWork {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.fault {
            WorkFault::Dist(e) => Some(e),
            _ => None,
        }
    }
}
