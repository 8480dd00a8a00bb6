//! Why a cell's value may not be ranked on a metric ([`Unranked`]), and that reason in words.

use crate::units::thousands;

/// Why a cell's value may not be ranked on a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unranked {
    /// Connections starved: a latency covers only the requests that were served, so it
    /// flatters the cell.
    Starved,
    /// Under what the measurement resolves (memory: under a page over all the connections):
    /// no ratio can be taken of it, though it is still the least of the values beside it.
    Unresolved,
    /// The cell was bound by something other than the server (the client, or another task on
    /// its CPUs: `judge::bound`): its throughput and latency are not the server's.
    NotTheServer,
    /// Requests failed (errors, or answers other than 2xx/3xx): its latency and memory cover
    /// only what it served.
    Lost,
    /// The design starved connections or lost requests in another cell of the experiment: it
    /// is named best on nothing there either.
    Elsewhere,
    /// A quantile from fewer samples than it needs (n ≥ 10 / (1 − q)): `n` of `needed`.
    TooFewSamples { n: u64, needed: u64 },
    /// A quantile whose samples were not counted (results written before they were).
    SamplesUnknown,
    /// A calibration cell: the design under lighter load, for its predictions.
    Calibration,
    /// Its target does none of the experiment's work (a peer serving a fixed body beside
    /// designs doing `work`): its figures are of another load.
    DoesNoWork,
}

impl Unranked {
    /// Why, in a few words.
    pub fn said(self) -> String {
        match self {
            Self::Starved => "it starved connections".into(),
            Self::Unresolved => "under what the measurement resolves".into(),
            Self::NotTheServer => "the server was not the limit".into(),
            Self::Lost => "it lost requests".into(),
            Self::Elsewhere => "its design starved connections or lost requests in another cell".into(),
            Self::TooFewSamples { n, needed } => {
                format!("too few samples ({}, {} needed)", thousands(n), thousands(needed))
            }
            Self::SamplesUnknown => "its samples were not counted".into(),
            Self::Calibration => "a calibration cell, measured for the predictions".into(),
            Self::DoesNoWork => "it serves a fixed body and does none of the experiment's work".into(),
        }
    }
}
