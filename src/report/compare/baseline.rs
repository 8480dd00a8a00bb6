//! A run made with `bench --baseline`: this binary's cells against the baseline binary's, made
//! in the same sitting (a paired experiment's rounds pair up).

use super::rows::{rows, Row};
use crate::bench::Results;

/// This binary's cells (B) against the baseline's (A, `MODEL @baseline`), calibration cells
/// left out (they measure the machine, not the binary); `None` for a run without baseline
/// cells.
pub fn baseline_rows(results: &Results) -> Option<Vec<Row>> {
    let suffix = format!(" {}", crate::bench::BASELINE);
    if !results.cells.iter().any(|c| c.target.ends_with(&suffix)) {
        return None;
    }
    let side = |baseline: bool| Results {
        cells: results
            .cells
            .iter()
            .filter(|c| c.target.ends_with(&suffix) == baseline && c.calibration.is_none())
            .map(|c| {
                let mut c = c.clone();
                c.target = c.target.trim_end_matches(&suffix).to_string();
                c
            })
            .collect(),
        ..results.clone()
    };
    Some(rows(&side(true), &side(false), true))
}
