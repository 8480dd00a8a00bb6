//! What can go wrong in `muxlab bench` ([`Error`]): one variant per concept, each its own type
//! (beside this file, or the scenario's in `scenario/`).

pub use crate::sys::error::{io_err, IoError};

use super::cell_error::CellError;
use super::flag_error::FlagError;
use super::host_error::HostError;
use super::peer_error::PeerError;
use super::results_error::ResultsError;
use super::sample_error::SampleError;
use super::scenario::{BadEntry, ScenarioError};
use super::skip::SkipReason;
use super::steer_error::SteerError;

/// A bench run's error. Every message says what happened and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A scenario's fault; the message names the file, the line and the field (exit 2).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A model entry `muxlab serve` would refuse (exit 2).
    /// (Boxed, as `Host` is: the entry and its serve error are large.)
    #[error(transparent)]
    Entry(Box<BadEntry>),
    /// A flag asks for something impossible (exit 2).
    #[error(transparent)]
    Flag(#[from] FlagError),
    /// A results file that cannot be read (exit 2).
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// Loopback that cannot be steered (exit 2).
    #[error(transparent)]
    Steer(#[from] SteerError),
    /// A host of the run that cannot be used (exit 2 where the user can fix it).
    /// (Boxed: a host's error holds what ssh said, and would make every bench result large.)
    #[error(transparent)]
    Host(Box<HostError>),
    /// A peer that did not start (exit 2 for an entry refused).
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// Writing results failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// Why one cell failed. Recorded in the cell's status; the matrix goes on.
    #[error(transparent)]
    Cell(#[from] CellError),
    /// The server's processes could not be sampled: the cell fails.
    #[error(transparent)]
    Sample(#[from] SampleError),
    /// Why one cell cannot run here (a peer that is missing or cannot speak the protocol).
    #[error("skipped: {0}")]
    Skipped(SkipReason),
}

impl From<BadEntry> for Error {
    fn from(e: BadEntry) -> Self {
        Error::Entry(Box::new(e))
    }
}

impl From<HostError> for Error {
    fn from(e: HostError) -> Self {
        Error::Host(Box::new(e))
    }
}

impl Error {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Scenario(_) | Error::Entry(_) | Error::Flag(_) | Error::Results(_) | Error::Steer(_) => true,
            Error::Host(e) => e.is_usage(),
            Error::Peer(e) => e.is_usage(),
            Error::Io(_) | Error::Cell(_) | Error::Sample(_) | Error::Skipped(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the user can fix is exit 2; what the machine or a cell did is not.
    #[test]
    fn the_users_faults_are_usage_and_a_cells_are_not() {
        assert!(Error::from(FlagError::ZeroRepeats).is_usage());
        let peer = crate::bench::record::scenario::peer::Peer::parse("redis").unwrap_err();
        assert!(Error::from(PeerError::Entry(peer)).is_usage());
        let no_bin = CellError::NoBinary {
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert!(!Error::from(no_bin).is_usage());
        assert!(!Error::Skipped(SkipReason::RemoteServer { product: "nginx" }).is_usage());
        assert!(Error::from(HostError::NoSshConfig { path: "/x".into() }).is_usage());
    }
}
