//! The last suite `cargo test` runs (suites run in name order): lists every test of this run
//! that could not run here, with why, so a skip is never mistaken for a pass. Under
//! `MUXLAB_REQUIRE_ALL` (CI) a skip has already failed its test instead.

mod common;

use std::io::Write;

#[test]
fn list_the_tests_this_run_skipped() {
    let path = common::skip::ledger();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    let mut err = std::io::stderr();
    if lines.is_empty() {
        let _ = writeln!(err, "\nmuxlab: no test was skipped in this run");
    } else {
        let _ = writeln!(
            err,
            "\nmuxlab: {} test(s) could not run here and were skipped (set {}=1 to make them fail):",
            lines.len(),
            common::skip::REQUIRE_ALL
        );
        for l in &lines {
            let _ = writeln!(err, "  {l}");
        }
    }
    assert!(
        lines.is_empty() || !common::skip::required(),
        "tests were skipped under {}",
        common::skip::REQUIRE_ALL
    );
}
