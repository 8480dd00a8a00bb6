//! What can go wrong writing a report's pages ([`Error`]): results bench cannot read, a page
//! that cannot be written, or a report asked of what has nothing to show.

use std::path::PathBuf;

/// Why a report page was not written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Results that bench cannot read (its words, its exit code).
    #[error(transparent)]
    Results(#[from] crate::bench::Error),
    /// A page that could not be written.
    #[error("writing {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// Two runs with no finished cell in common: nothing to compare (exit 2).
    #[error(
        "{} and {} share no finished cell (same experiment, target and connections)",
        a.display(),
        b.display()
    )]
    NothingShared { a: PathBuf, b: PathBuf },
    /// A load document that kept no time series to draw (exit 2).
    #[error(
        "{} has no time series: run muxlab load with --timeseries FILE (or --interval D) and --json",
        path.display()
    )]
    NoSeries { path: PathBuf },
}

impl Error {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Results(e) => e.is_usage(),
            Error::NothingShared { .. } | Error::NoSeries { .. } => true,
            Error::Write { .. } => false,
        }
    }

    /// Writing the page `path` failed with `source`.
    pub(crate) fn write(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Write {
            path: path.to_path_buf(),
            source,
        }
    }
}
