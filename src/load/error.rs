//! What can go wrong in `muxlab load`.

pub use crate::sys::error::{io_err, IoError};

/// A load run's error. Every message says what happened and, where the user can act, what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The flags or the URL ask for something impossible (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// One value (a flag, or the scenario key of the same name) breaks a rule (exit code 2).
    #[error("{message}")]
    Invalid { key: &'static str, message: String },
    /// A document (a load result, a shard's or a host's) is not what this version reads.
    #[error("{0}")]
    Document(String),
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
        matches!(self, Error::Usage(_) | Error::Invalid { .. } | Error::Document(_))
    }

    /// A broken rule about `key` (its flag, or the scenario key of the same name).
    pub fn invalid(key: &'static str, message: &str) -> Error {
        Error::Invalid {
            key,
            message: message.to_string(),
        }
    }

    /// The key a broken rule is about, if it is one.
    pub fn key(&self) -> Option<&'static str> {
        match self {
            Error::Invalid { key, .. } => Some(key),
            _ => None,
        }
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
