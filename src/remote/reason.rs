//! A failed ssh session's reason, as the errors of `remote` say it.

/// A failed ssh session's reason: the last thing it said, or its exit status.
pub fn reason(stderr: &str, code: Option<i32>) -> String {
    let last = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"));
    match (last, code) {
        (Some(l), _) => l.to_string(),
        (None, Some(255)) => "ssh could not connect (exit 255)".into(),
        (None, Some(c)) => format!("exited with status {c}"),
        (None, None) => "killed by a signal".into(),
    }
}
