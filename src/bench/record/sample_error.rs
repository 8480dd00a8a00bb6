//! Why the server's processes could not be sampled ([`SampleError`]): here, from /proc and its
//! CPU group; on another host, from the sampler there.

use std::path::PathBuf;
use std::time::Duration;

/// Why a sample of the server's processes was not taken (the cell fails with it, never a zero).
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    /// A process of the server's tree could not be moved into its CPU group.
    #[error("sampling the server's processes failed: moving {pid} into {}: {source}", group.display())]
    Move {
        pid: i32,
        group: PathBuf,
        source: std::io::Error,
    },
    /// The CPU group's usage could not be read.
    #[error("sampling the server's processes failed: {source}")]
    Group { source: std::io::Error },
    /// The server's processes could not be read.
    #[error("sampling the server's processes failed: {source}")]
    Read { source: std::io::Error },
    /// The question could not be sent to the host's sampler.
    #[error("sampling the server's processes failed: {source}")]
    Send { source: std::io::Error },
    /// The host's sampler did not answer in time.
    #[error(
        "sampling the server's processes failed: the host's sampler did not answer within {} s",
        within.as_secs()
    )]
    NoAnswer { within: Duration },
    /// The host's sampler answered something that is not a sample.
    #[error("sampling the server's processes failed: the host's sampler answered {answer}")]
    Answer { answer: String, source: serde_json::Error },
}
