//! For every test, the unit tests beside the code and the behaviour suites alike
//! (`tests/common` re-exports this): what a test that cannot run here, or that checks the
//! branch this host has, tells a person.
//!
//! - [`skip`]: something the project could install is missing (a peer, root, a Python
//!   package). It fails the test under `MUXLAB_REQUIRE_ALL` (what `.ci/run` sets: a green CI run
//!   proves every test ran); otherwise it writes `SKIPPED suite::test: why` to the terminal,
//!   past libtest's capture, and to this run's ledger, which `tests/zz_skipped.rs` (the last
//!   suite) lists at the end.
//! - [`host_fact`]: a host fact ([`crate::sys::host`]) that no install changes chooses which
//!   branch the test checks. Never a skip and never a failure; the run's end lists each fact
//!   that chose a branch, so a reader knows which branch this machine showed.

use std::io::Write;
use std::path::PathBuf;

use crate::sys::host::{Fact, Reading};

/// The variable under which a test that cannot run fails instead of skipping.
pub const REQUIRE_ALL: &str = "MUXLAB_REQUIRE_ALL";

/// Whether skipping is forbidden (CI).
pub fn required() -> bool {
    std::env::var_os(REQUIRE_ALL).is_some_and(|v| !v.is_empty() && v != "0")
}

/// This run's ledgers: `target/tmp/<kind>/<cargo's pid>.txt` (every test binary runs in
/// `target/<profile>/deps` and is a child of `cargo test`).
pub fn ledger(kind: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let target = exe.parent()?.parent()?.parent()?;
    Some(
        target
            .join("tmp")
            .join(kind)
            .join(format!("{}.txt", std::os::unix::process::parent_id())),
    )
}

/// The ledger of skips.
pub const SKIPPED: &str = "skipped";
/// The ledger of host facts that chose a branch.
pub const HOST_FACTS: &str = "host-facts";

/// `suite::test` for the calling test (the suite: the test binary's name without its hash).
fn who() -> String {
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let suite = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| s.rsplit_once('-').map_or(s.clone(), |(name, _hash)| name.to_string()))
        .unwrap_or_default();
    format!("{suite}::{test}")
}

fn append(kind: &str, line: &str) {
    let Some(path) = ledger(kind) else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Records that the calling test cannot run, and why; panics under `MUXLAB_REQUIRE_ALL`. The
/// caller returns right after: `return skip("...")`. Never for a host fact: see [`host_fact`].
pub fn skip(why: &str) {
    let who = who();
    if required() {
        panic!("{who} cannot run here, and {REQUIRE_ALL} forbids skipping: {why}");
    }
    let line = format!("SKIPPED {who}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    append(SKIPPED, &line);
}

/// Reads host fact `fact` for the calling test, which then checks the branch the host has;
/// records which branch in the run's list of host facts.
pub fn host_fact(fact: Fact) -> Reading {
    let r = fact.read();
    let has = if r.present { "has" } else { "lacks" };
    append(
        HOST_FACTS,
        &format!(
            "{}: this host {has} {} ({}): {}\n",
            who(),
            fact.name(),
            r.detail,
            branch(r.present)
        ),
    );
    r
}

fn branch(present: bool) -> &'static str {
    match present {
        true => "the branch with it was checked",
        false => "the branch without it was checked",
    }
}
