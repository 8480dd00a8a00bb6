//! What can go wrong in `muxlab bench`.

pub use crate::sys::error::{io_err, IoError};

/// A bench run's error. Every message says what happened and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A scenario file's fault; the message names the file, the line and the field (exit 2).
    #[error("{0}")]
    Scenario(String),
    /// A flag asks for something impossible (exit 2).
    #[error("{0}")]
    Usage(String),
    /// Writing results failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// Why one cell failed. Recorded in the cell's status; the matrix goes on.
    #[error("{0}")]
    Cell(String),
    /// Why one cell cannot run here (a peer that is missing or cannot speak the protocol).
    #[error("skipped: {0}")]
    Skipped(String),
}

impl Error {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Scenario(_) | Error::Usage(_))
    }
}

impl From<String> for Error {
    fn from(s: String) -> Self {
        Error::Cell(s)
    }
}

impl From<&str> for Error {
    fn from(s: &str) -> Self {
        Error::Cell(s.to_string())
    }
}
