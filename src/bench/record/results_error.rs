//! Why a results file cannot be read ([`ResultsError`]): not there, not JSON of a bench's
//! results, or written by a later muxlab. Every one is exit 2.

use std::path::PathBuf;

/// Why a bench results file cannot be read (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// It cannot be read.
    #[error("{}: {source} (give a bench results directory, or a results.json file)", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// It is not a bench's results.
    #[error("{}: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
    /// A later muxlab wrote it, in a format this one does not read (`reads`: the latest this
    /// one does).
    #[error(
        "{}: written in results format {format} by a later muxlab; this one reads up to {reads}",
        path.display()
    )]
    Later { path: PathBuf, format: u32, reads: u32 },
}
