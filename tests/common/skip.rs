//! Tests that cannot run here (no root, a tool or a kernel feature missing) say so where a
//! person sees it. libtest hides what a passing test prints, so a bare `eprintln!` + `return`
//! passes silently; [`skip`] instead:
//!
//! - fails the test when `MUXLAB_REQUIRE_ALL` is set (`.ci/run` sets it: a green CI run then
//!   proves that every test ran);
//! - otherwise writes `SKIPPED test: why` straight to the terminal (past the capture) and adds it
//!   to this run's ledger, which `tests/zz_skipped.rs`, the last suite cargo runs, lists at the end.

use std::io::Write;
use std::path::PathBuf;

/// The variable under which a test that cannot run fails instead of skipping.
pub const REQUIRE_ALL: &str = "MUXLAB_REQUIRE_ALL";

/// Whether skipping is forbidden (CI).
pub fn required() -> bool {
    std::env::var_os(REQUIRE_ALL).is_some_and(|v| !v.is_empty() && v != "0")
}

/// This run's ledger: one file per `cargo test` process (every suite is its child).
pub fn ledger() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skipped");
    dir.join(format!("{}.txt", std::os::unix::process::parent_id()))
}

/// Records that the calling test cannot run, and why; panics under `MUXLAB_REQUIRE_ALL`. The
/// caller returns right after: `return skip("...")`.
pub fn skip(why: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let suite = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| s.rsplit_once('-').map_or(s.clone(), |(name, _hash)| name.to_string()))
        .unwrap_or_default();
    if required() {
        panic!("{suite}::{test} cannot run here, and {REQUIRE_ALL} forbids skipping: {why}");
    }
    let line = format!("SKIPPED {suite}::{test}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    let path = ledger();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
        let _ = f.write_all(line.as_bytes());
    }
}
