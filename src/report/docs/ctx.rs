//! Where a block is rendered ([`Ctx`]): the repository and the Markdown file, and the links
//! from that file to a kept result.

use std::path::{Path, PathBuf};

/// Where a block is rendered: the repository and the Markdown file (relative to it), which
/// its links are relative to.
pub struct Ctx {
    pub root: PathBuf,
    pub file: PathBuf,
}

impl Ctx {
    /// A kept result's path.
    pub fn result(&self, name: &str, ext: &str) -> PathBuf {
        self.root.join("docs").join("results").join(format!("{name}.{ext}"))
    }

    /// A link from the file to `path` (relative to the repository).
    pub fn link(&self, path: &str) -> String {
        let dir = self.file.parent().unwrap_or(Path::new(""));
        let mut p = Path::new(path);
        let mut up = dir.components().count();
        for c in dir.components() {
            match p.strip_prefix(c.as_os_str()) {
                Ok(rest) if up > 0 => {
                    p = rest;
                    up -= 1;
                }
                _ => break,
            }
        }
        format!("{}{}", "../".repeat(up), p.display())
    }

    /// A link from the file to a kept result.
    pub fn result_link(&self, name: &str, ext: &str) -> String {
        self.link(&format!("docs/results/{name}.{ext}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_relative_to_the_file_they_are_in() {
        let at = |file: &str| Ctx {
            root: PathBuf::from("/r"),
            file: PathBuf::from(file),
        };
        assert_eq!(at("README.md").result_link("quick", "json"), "docs/results/quick.json");
        assert_eq!(at("docs/results.md").result_link("quick", "json"), "results/quick.json");
        assert_eq!(at("docs/results.md").link("scripts/x.sh"), "../scripts/x.sh");
    }
}
