//! The last suite `cargo test` runs (suites run in name order): lists every test of this run
//! that could not run here, with why, so a skip is never mistaken for a pass; and the host
//! facts (`muxlab::sys::host`) that chose which branch a test checked. Under
//! `MUXLAB_REQUIRE_ALL` (CI) a skip has already failed its test instead; a host fact never
//! fails one.

mod common;

use std::io::Write;

use muxlab::testing::{HOST_FACTS, SKIPPED};

/// The lines of this run's ledger of `kind`, which is then removed.
fn take(kind: &str) -> Vec<String> {
    let path = common::skip::ledger(kind);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    text.lines().filter(|l| !l.is_empty()).map(String::from).collect()
}

#[test]
fn list_the_tests_this_run_skipped_and_the_host_facts_that_chose_a_branch() {
    let skipped = take(SKIPPED);
    let facts = take(HOST_FACTS);
    let mut err = std::io::stderr();
    if facts.is_empty() {
        let _ = writeln!(err, "\nmuxlab: no host fact chose a branch in this run");
    } else {
        let _ = writeln!(err, "\nmuxlab: host facts that chose which branch a test checked:");
        for l in &facts {
            let _ = writeln!(err, "  {l}");
        }
    }
    if skipped.is_empty() {
        let _ = writeln!(err, "muxlab: no test was skipped in this run");
    } else {
        let _ = writeln!(
            err,
            "muxlab: {} test(s) could not run here and were skipped (set {}=1 to make them fail):",
            skipped.len(),
            common::skip::REQUIRE_ALL
        );
        for l in &skipped {
            let _ = writeln!(err, "  {l}");
        }
    }
    assert!(
        skipped.is_empty() || !common::skip::required(),
        "tests were skipped under {}",
        common::skip::REQUIRE_ALL
    );
}
