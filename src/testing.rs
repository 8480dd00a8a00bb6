//! For the unit tests beside the code: a test that cannot run here (no root, a kernel feature
//! missing) says so where a person sees it, in the same ledger as the behaviour suites'
//! (`tests/common/skip.rs`, listed at the end by `tests/zz_skipped.rs`), and fails instead
//! under `MUXLAB_REQUIRE_ALL` (what `.ci/run` sets).

use std::io::Write;
use std::path::PathBuf;

/// The variable under which a test that cannot run fails instead of skipping.
const REQUIRE_ALL: &str = "MUXLAB_REQUIRE_ALL";

/// This run's ledger: `target/tmp/skipped/<cargo's pid>.txt` (this test binary runs in
/// `target/<profile>/deps`).
fn ledger() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let target = exe.parent()?.parent()?.parent()?;
    Some(
        target
            .join("tmp")
            .join("skipped")
            .join(format!("{}.txt", std::os::unix::process::parent_id())),
    )
}

/// Records that the calling test cannot run, and why; panics under `MUXLAB_REQUIRE_ALL`. The
/// caller returns right after: `return skip("...")`.
pub fn skip(why: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    if std::env::var_os(REQUIRE_ALL).is_some_and(|v| !v.is_empty() && v != "0") {
        panic!("muxlab (lib)::{test} cannot run here, and {REQUIRE_ALL} forbids skipping: {why}");
    }
    let line = format!("SKIPPED muxlab (lib)::{test}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    if let Some(path) = ledger() {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            let _ = f.write_all(line.as_bytes());
        }
    }
}
