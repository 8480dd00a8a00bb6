//! [`BadMixFile`]: a `--mix-file` that cannot be read, or a line of it that is wrong.

use std::fmt;
use std::path::PathBuf;

/// A `--mix-file` refused: the file, and where and why.
#[derive(Debug, thiserror::Error)]
pub enum BadMixFile {
    /// The file cannot be read.
    #[error("cannot read --mix-file {}: {source}", path.display())]
    Unreadable { path: PathBuf, source: std::io::Error },
    /// Line `line` (from 1) is wrong.
    #[error("--mix-file {}, line {line}: {fault}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        fault: LineFault,
    },
}

/// What is wrong with a line of a `--mix-file` (`NAME WEIGHT METHOD PATH [@BODYFILE]`), with
/// the word at fault.
#[derive(Debug)]
pub enum LineFault {
    /// Fewer than four words.
    TooFewWords,
    /// A weight that is not a number above 0 and at most 1e9.
    Weight(String),
    /// A path that does not start with `/`.
    PathNotRooted(String),
    /// A fifth word without `@`.
    NotABodyFile(String),
    /// A body file with `--body-size`.
    BodyFileWithBodySize,
    /// A body file that cannot be read.
    BodyUnreadable { file: String, source: std::io::Error },
    /// More than five words.
    TooManyWords,
}

impl fmt::Display for LineFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineFault::TooFewWords => f.write_str("write NAME WEIGHT METHOD PATH [@BODYFILE]"),
            LineFault::Weight(w) => write!(f, "the weight '{w}' is not a number above 0 and at most 1e9"),
            LineFault::PathNotRooted(p) => write!(f, "the path '{p}' must start with /"),
            LineFault::NotABodyFile(w) => write!(f, "'{w}': a body file is written @FILE"),
            LineFault::BodyFileWithBodySize => {
                f.write_str("a class's body file cannot go with --body-size (whose echoes are verified)")
            }
            LineFault::BodyUnreadable { file, source } => write!(f, "cannot read @{file}: {source}"),
            LineFault::TooManyWords => f.write_str("too many words: NAME WEIGHT METHOD PATH [@BODYFILE]"),
        }
    }
}
