//! The error a failed system call becomes in every layer above this one: what was being done, and
//! what the system said. `load` and `bench` wrap it in their own error enums.

use std::io;

/// A system call failed while doing `what`.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct IoError {
    pub what: String,
    #[source]
    pub source: io::Error,
}

/// Wraps an `io::Error` with what was being done. `what` becomes a `String` only when there is
/// an error: a hot path (`wait(...).map_err(io_err("waiting for events"))`) allocates nothing.
pub fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> IoError {
    move |source| IoError {
        what: what.into(),
        source,
    }
}
