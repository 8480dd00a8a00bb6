//! [`BadMixFile`]: a `--mix-file` that cannot be read, or a line of it that is wrong.

use std::fmt;
use std::path::PathBuf;

/// A `--mix-file` refused: the file, and where and why.
#[derive(Debug, thiserror::Error)]
pub enum BadMixFile {
    /// The file cannot be read.
    #[error("cannot read --mix-file {}: {source}", path.display())]
    Unreadable { path: PathBuf, source: std::io::Error },
    /// Line `line` (from 1), as given (its comment and outer blanks cut), is wrong.
    #[error("--mix-file {}, line {line}: {}", path.display(), Said { fault, given })]
    Line {
        path: PathBuf,
        line: usize,
        given: String,
        fault: LineFault,
    },
}

/// What is wrong with a line of a `--mix-file` (`NAME WEIGHT METHOD PATH [@BODYFILE]`); the
/// word at fault is the line's, named in [`BadMixFile::Line`]'s words.
#[derive(Debug)]
pub enum LineFault {
    /// Fewer than four words.
    TooFewWords,
    /// A weight (the second word) that does not read as a number.
    WeightNotANumber { source: std::num::ParseFloatError },
    /// A weight that is not above 0 and at most 1e9 (or not a number: NaN).
    WeightOutOfRange { weight: f64 },
    /// A path (the fourth word) that does not start with `/`.
    PathNotRooted,
    /// A fifth word without `@`.
    NotABodyFile,
    /// A body file with `--body-size`.
    BodyFileWithBodySize,
    /// A body file that cannot be read.
    BodyUnreadable { file: PathBuf, source: std::io::Error },
    /// More than five words.
    TooManyWords,
}

/// A line's fault in words, with the line's word at fault.
struct Said<'a> {
    fault: &'a LineFault,
    given: &'a str,
}

impl fmt::Display for Said<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = |n: usize| self.given.split_whitespace().nth(n).unwrap_or("");
        match self.fault {
            LineFault::TooFewWords => f.write_str("write NAME WEIGHT METHOD PATH [@BODYFILE]"),
            LineFault::WeightNotANumber { .. } | LineFault::WeightOutOfRange { .. } => {
                write!(f, "the weight '{}' is not a number above 0 and at most 1e9", word(1))
            }
            LineFault::PathNotRooted => write!(f, "the path '{}' must start with /", word(3)),
            LineFault::NotABodyFile => write!(f, "'{}': a body file is written @FILE", word(4)),
            LineFault::BodyFileWithBodySize => {
                f.write_str("a class's body file cannot go with --body-size (whose echoes are verified)")
            }
            LineFault::BodyUnreadable { file, source } => write!(f, "cannot read @{}: {source}", file.display()),
            LineFault::TooManyWords => f.write_str("too many words: NAME WEIGHT METHOD PATH [@BODYFILE]"),
        }
    }
}
