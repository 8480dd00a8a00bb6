//! [`HostFailure`]: why a host of a `--hosts` run has no result.

use std::time::Duration;

use super::reason::reason;

/// Why a host of a `--hosts` run reported no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostFailure {
    /// Its run was never followed to an end.
    #[error("no result")]
    NoResult,
    /// It exited 0 without printing a document.
    #[error("ended without a result")]
    NoDocument,
    /// It ended before printing a document: its exit status (`None`: killed by a signal) and
    /// what it said on stderr (the message is its last line, or the status).
    #[error("ended before reporting: {}", reason(stderr, *code))]
    Ended { code: Option<i32>, stderr: String },
    /// Stopped because another host could not start.
    #[error("stopped: another host could not start")]
    Abandoned,
    /// Nothing heard from it for `silent` (it prints a line each second).
    #[error("lost: nothing heard from it for {:.0}s (network down or host gone?)", silent.as_secs_f64())]
    Lost { silent: Duration },
}
