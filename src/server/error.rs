//! What can go wrong starting or running a server: the bottom of `server/`, importing nothing
//! of it.

use std::io;
use std::net::SocketAddr;

pub use crate::sys::error::IoError;

/// What can go wrong starting or running a server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user asked for something impossible; the message says what to do instead.
    #[error("{0}")]
    Usage(String),
    #[error("{addr} is already in use: pick another port with --port, or use --port 0 for any free port")]
    AddrInUse { addr: SocketAddr },
    /// A system call failed.
    #[error(transparent)]
    Io(#[from] IoError),
}

impl Error {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Usage(_) | Error::AddrInUse { .. })
    }
}

/// Wraps an `io::Error` with what was being done, as a server error.
pub fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> Error {
    let wrap = crate::sys::error::io_err(what);
    move |source| Error::Io(wrap(source))
}
