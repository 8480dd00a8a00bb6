//! [`BadDocument`]: a text that is not a load result this version reads.

use std::fmt;

/// A document refused: where it came from (a file's name, `a result line`), and why.
#[derive(Debug)]
pub struct BadDocument {
    pub name: String,
    pub fault: DocumentFault,
}

/// Why a document is refused.
#[derive(Debug)]
pub enum DocumentFault {
    /// Not JSON at all.
    NotJson,
    /// JSON that another tool wrote (or none said).
    NotLoadResult,
    /// A load result without an interchange section of the format this version reads (`reads`).
    OtherInterchange { reads: u32 },
    /// A load result of the right format that does not read (a part of it wrong).
    Unreadable(serde_json::Error),
}

impl fmt::Display for BadDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.name)?;
        match &self.fault {
            DocumentFault::NotJson => f.write_str("not a muxlab load result (not a JSON document)"),
            DocumentFault::NotLoadResult => f.write_str("not a muxlab load result (write one with muxlab load --json)"),
            DocumentFault::OtherInterchange { reads } => write!(
                f,
                "no interchange section of format {reads} (written by another muxlab version?)"
            ),
            DocumentFault::Unreadable(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BadDocument {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.fault {
            DocumentFault::Unreadable(e) => Some(e),
            _ => None,
        }
    }
}
