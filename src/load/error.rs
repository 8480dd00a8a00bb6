//! What can go wrong in `muxlab load`.

pub use crate::error::{io_err, IoError};

/// A load run's error. Every message says what happened and, where the user can act, what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The flags or the URL ask for something impossible (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// A system call the run needs failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// An engine thread or a shard process failed.
    #[error("{0}")]
    Failed(String),
}

impl Error {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Usage(_))
    }
}

impl From<&str> for Error {
    fn from(s: &str) -> Self {
        Error::Usage(s.to_string())
    }
}

impl From<String> for Error {
    fn from(s: String) -> Self {
        Error::Usage(s)
    }
}

impl From<crate::units::BadValue> for Error {
    fn from(e: crate::units::BadValue) -> Self {
        Error::Usage(e.0)
    }
}
