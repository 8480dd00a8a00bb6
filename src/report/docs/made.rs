//! What a kept result says made it, as its caption words it ([`Made`]): "by the binary of
//! commit X" only where the result recorded the binary's own commit (`build_commit`, fixed
//! into the binary when it was built and read from `muxlab --version`). A result from before
//! builds recorded it holds only the commit written beside it (`commit`: the checkout's
//! revision when it ran, or the commit it was kept at), and its caption says so.

use serde_json::Value;

/// What a kept result records of the binary that made it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Made {
    /// The binary's own commit (`build_commit`).
    pub build: Option<String>,
    /// Whether the binary's tree had changes not committed (`build_dirty`).
    pub dirty: Option<bool>,
    /// The commit written beside the result (`commit`), wherever its keeper took it from.
    pub recorded: Option<String>,
}

impl Made {
    /// From a kept file: `build_commit` and `build_dirty` in its `environment` (a bench run) or
    /// at its top (a script's file), and its `commit`.
    pub fn of(doc: &Value) -> Made {
        let field = |k: &str| doc["environment"].get(k).or_else(|| doc.get(k));
        Made {
            build: field("build_commit").and_then(Value::as_str).map(str::to_string),
            dirty: field("build_dirty").and_then(Value::as_bool),
            recorded: doc["commit"].as_str().map(str::to_string),
        }
    }

    /// The words after the command: which binary made it, or that none was recorded.
    pub fn words(&self) -> String {
        let short = |c: &str| c[..c.len().min(8)].to_string();
        match (&self.build, self.dirty, &self.recorded) {
            (Some(b), Some(true), _) => {
                format!("by a binary of commit `{}` built with changes not committed", short(b))
            }
            (Some(b), _, _) => format!("by the binary of commit `{}`", short(b)),
            (None, _, Some(r)) => format!(
                "recorded with commit `{}` (which binary ran it is not recorded)",
                short(r)
            ),
            (None, _, None) => "with no commit recorded".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_result_that_recorded_its_binary_names_one() {
        let bench = json!({"environment": {"build_commit": "cc66880f022f464061eee09d592887895b13b79c",
            "build_dirty": false, "git_revision": "cc66880f022f"}, "commit": "cc66880f022f464061eee09d592887895b13b79c"});
        assert_eq!(Made::of(&bench).words(), "by the binary of commit `cc66880f`");
        let script = json!({"build_commit": "cc66880f022f", "build_dirty": true});
        assert_eq!(
            Made::of(&script).words(),
            "by a binary of commit `cc66880f` built with changes not committed"
        );
        // Kept before builds recorded their commit: the checkout's revision, written beside it.
        let old = json!({"environment": {"git_revision": "5eb6302"}, "commit": "5eb6302"});
        let w = Made::of(&old).words();
        assert!(!w.contains("binary of commit"), "{w}");
        assert_eq!(
            w,
            "recorded with commit `5eb6302` (which binary ran it is not recorded)"
        );
        assert_eq!(
            Made::of(&json!({"commit": "17661a3e", "dirty": false})).words(),
            w.replace("5eb6302", "17661a3e")
        );
        assert_eq!(Made::of(&json!({})).words(), "with no commit recorded");
    }
}
