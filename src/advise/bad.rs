//! What is wrong with `muxlab advise`'s flags ([`BadPlan`]): each fault its variant, with the
//! values given. All of them are the user's (exit 2).

use std::str::FromStr;
use std::time::Duration;

use crate::load::Slo;
use crate::server::Work;
use crate::units::format_duration;

/// Why advise's flags make no plan.
#[derive(Debug, thiserror::Error)]
pub enum BadPlan {
    /// `--work` that does not read as work (the server's parser's own error).
    #[error("{source}")]
    Work { source: <Work as FromStr>::Err },
    /// `--work none`: nothing to find a design for.
    #[error("--work none: give the work a request does (cpu:D, sleep:D, or both)")]
    NoWork,
    /// `--slo` that does not read as a target (load's parser's own error).
    #[error("{source}")]
    Slo { source: <Slo as FromStr>::Err },
    /// `--slo` with a class's bound: advise sends one kind of request.
    #[error("--slo: advise sends one kind of request; a class's bound has no class to name")]
    SloOfAClass { slo: Slo },
    /// `-c` or `--workers` of 0.
    #[error("-c and --workers must be at least 1")]
    NoConnectionsOrWorkers { connections: usize, workers: Option<usize> },
    /// A `--rate` that is not a positive number.
    #[error("--rate {rate}: give a positive rate")]
    Rate { rate: f64 },
    /// `flag` (`--models`) names no design.
    #[error("{flag}: unknown model '{given}' (see muxlab models)")]
    UnknownModel { given: String, flag: &'static str },
    /// `--time` too short to give each of the `designs` its `least`.
    #[error(
        "--time {}: too short for {designs} designs (each needs {} at least); give more time or fewer --models",
        format_duration(*time),
        format_duration(*least)
    )]
    TooShort {
        time: Duration,
        designs: usize,
        least: Duration,
    },
    /// The scenario the flags make, refused as bench would refuse it (bench's words).
    #[error("{source}")]
    Scenario {
        source: crate::bench::scenario::ScenarioError,
    },
}

impl BadPlan {
    /// Every fault is the flags' (exit code 2), a scenario bench refuses included.
    pub fn is_usage(&self) -> bool {
        true
    }
}
