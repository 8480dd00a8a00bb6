//! Why the hosts of a run cannot be used ([`HostError`]): an ssh configuration that is not there,
//! a host not reached or running another muxlab, a session that did not start.

use std::path::PathBuf;

use crate::remote::ssh::PrepError;

/// Why a host of the run cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// `--ssh-config` names no file (exit 2).
    #[error("--ssh-config {}: no such file", path.display())]
    NoSshConfig { path: PathBuf },
    /// A host that cannot be reached when the run is checked (exit 2).
    #[error("host {host}: cannot reach it: {source}")]
    Unreachable { host: String, source: crate::remote::Error },
    /// The server's host could not be made ready: another muxlab there (exit 2), or unreachable.
    #[error("host {host}: {prep}")]
    Prepare { host: String, prep: PrepError },
    /// A session on the host (the server under its guard) did not start.
    #[error("host {host}: {source}")]
    Session { host: String, source: crate::remote::Error },
    /// The sampler on the server's host did not start.
    #[error("{0}")]
    Sampler(crate::remote::Error),
}

impl HostError {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        match self {
            HostError::NoSshConfig { .. } | HostError::Unreachable { .. } => true,
            HostError::Prepare { prep, .. } => prep.is_usage(),
            HostError::Session { .. } | HostError::Sampler(_) => false,
        }
    }
}
