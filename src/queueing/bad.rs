//! What is wrong with `muxlab predict`'s flags, or what it cannot predict ([`BadPrediction`]):
//! each fault its variant, with the values given. All of them are the user's (exit 2).

use std::str::FromStr;

use crate::server::{Discipline, Reserve, Work};

/// Why `--work` does not read as work (the server's parser's own error).
pub type BadWork = <Work as FromStr>::Err;

/// Why `muxlab predict` has no prediction for the flags given.
#[derive(Debug, thiserror::Error)]
pub enum BadPrediction {
    /// `flag` (`--model`) names no design.
    #[error("{flag}: unknown model '{given}' (see muxlab models)")]
    UnknownModel { given: String, flag: &'static str },
    /// `--workers` given to a design that has none.
    #[error("model '{model}' has no workers; drop --workers")]
    NoWorkers { model: &'static str, workers: usize },
    /// `--work` that does not read as work.
    #[error("{source}")]
    Work { source: BadWork },
    /// Both an open loop (`--rate`) and a closed one (`--think`).
    #[error("--rate and --think: give one (open or closed loop)")]
    RateAndThink,
    /// A `--rate` that is not a positive number.
    #[error("--rate {rate}: give a positive rate")]
    Rate { rate: f64 },
    /// A closed loop with no `-c`.
    #[error("a closed loop needs -c (connections); an open one --rate")]
    ClosedWithoutConnections,
    /// Fewer than 1,000 `--requests`, or no `--cpus`, `--workers` or `-c`.
    #[error("--requests at least 1000; --cpus, --workers and -c at least 1")]
    TooFew,
    /// No class of requests has work to predict.
    #[error("no work to predict: give --work, or --mix classes whose queries name work the server accepts")]
    NoWork,
    /// `--reserve` for a design with no pool to reserve workers of.
    #[error("--reserve: model '{model}' has no pool whose workers could be reserved (model offload has)")]
    NoPool { model: &'static str, reserve: Reserve },
    /// `--reserve` that leaves no worker for the long work.
    #[error("--reserve reserves {reserved} of {workers} workers: leave at least one for the long work")]
    ReservesAll { reserved: usize, workers: usize },
    /// A design whose queueing (its `discipline` over these flags) is not modelled.
    #[error(
        "{model}: its queueing is not modelled (one connection at a time per worker past its workers, work stealing, \
         a spread its wake-ups decide, or a thread per connection whose work only waits and whose CPU per \
         request is not given: --design-cpu), so there is no prediction"
    )]
    NotModelled {
        model: &'static str,
        discipline: Discipline,
    },
}

impl BadPrediction {
    /// Every fault is the flags' (exit code 2).
    pub fn is_usage(&self) -> bool {
        true
    }
}
