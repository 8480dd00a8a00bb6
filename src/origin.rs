//! Which source this binary was built from, fixed at build time (`build.rs`): the commit and
//! whether the tree had changes not committed. A result records the binary's origin, not the
//! git state of wherever it happens to run (an older build run after a checkout, or a run
//! outside the repository, would otherwise claim a commit it was not built from).

/// The full commit hash, or `None` for a build outside a git checkout.
pub fn commit() -> Option<&'static str> {
    Some(env!("MUXLAB_COMMIT")).filter(|c| !c.is_empty())
}

/// Whether the tree had changes not committed (`None`: not known, outside a checkout).
pub fn dirty() -> Option<bool> {
    match env!("MUXLAB_DIRTY") {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// `muxlab --version`'s line: the package version and the build's origin.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("MUXLAB_BUILD"), ")");

/// The short form results carry as `git_revision`: 12 hex digits, `-dirty` when the tree had
/// changes, `unknown` outside a checkout.
pub fn revision() -> String {
    match (commit(), dirty()) {
        (Some(c), Some(true)) => format!("{}-dirty", &c[..12.min(c.len())]),
        (Some(c), _) => c[..12.min(c.len())].to_string(),
        (None, _) => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_names_the_builds_commit_and_the_revision_agrees() {
        match commit() {
            Some(c) => {
                assert_eq!(c.len(), 40, "{c}");
                assert!(VERSION.contains(&c[..12]), "{VERSION}");
                assert!(revision().starts_with(&c[..12]));
                assert_eq!(revision().ends_with("-dirty"), dirty() == Some(true));
                assert_eq!(VERSION.ends_with(", dirty)"), dirty() == Some(true), "{VERSION}");
            }
            None => assert_eq!(revision(), "unknown"),
        }
    }
}
