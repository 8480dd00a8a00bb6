//! What can go wrong on another host.

/// Why a command over ssh failed. The message is what the host (or ssh) said last.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// ssh itself cannot be run on this machine.
    #[error("cannot run ssh: {0} (install openssh-client)")]
    NoSsh(String),
    /// The session or the command there failed.
    #[error("{0}")]
    Failed(String),
}
