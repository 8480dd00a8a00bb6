//! The report's files: `report.html` written beside results (or rebuilt from them),
//! `compare.html` for two runs (`report A B`) or for a run with `--baseline`.

use std::path::{Path, PathBuf};

use super::Error;
use crate::bench::{read, Results};

/// Writes the report of `results` beside them (`DIR/report.html`, or `STEM.report.html`
/// beside a results file).
pub fn write_html(dir: &Path, results: &Results) -> Result<PathBuf, Error> {
    let out = crate::bench::record::results::beside(dir, "report.html");
    std::fs::write(&out, super::html::render(results)).map_err(Error::write(&out))?;
    Ok(out)
}

/// `muxlab report DIR`: rebuilds `DIR/report.html` from `DIR/results.json` (or a results
/// file's report beside it).
pub fn rebuild(dir: &Path) -> Result<PathBuf, Error> {
    write_html(dir, &read(dir)?)
}

/// `muxlab report A B`: writes `B/compare.html` (B against A) and returns it with the terminal
/// table.
pub fn compare_runs(a: &Path, b: &Path) -> Result<(PathBuf, String), Error> {
    let (ra, rb) = (read(a)?, read(b)?);
    let rows = super::compare::rows(&ra, &rb, false);
    if rows.is_empty() {
        return Err(Error::NothingShared {
            a: a.to_path_buf(),
            b: b.to_path_buf(),
        });
    }
    let (an, bn) = (a.display().to_string(), b.display().to_string());
    let out = crate::bench::record::results::beside(b, "compare.html");
    std::fs::write(&out, super::compare::html(&an, &bn, &rows)).map_err(Error::write(&out))?;
    Ok((out, super::compare::table(&an, &bn, &rows)))
}

/// After `bench --baseline`: this binary's cells (B) against the baseline's (A), as
/// `report A B` shows two runs; writes `DIR/compare.html`. None without baseline cells.
pub fn against_baseline(dir: &Path, results: &Results) -> Result<Option<(PathBuf, String)>, Error> {
    let Some(rows) = super::compare::baseline_rows(results) else {
        return Ok(None);
    };
    let out = crate::bench::record::results::beside(dir, "compare.html");
    std::fs::write(&out, super::compare::html("--baseline", "this binary", &rows)).map_err(Error::write(&out))?;
    Ok(Some((out, super::compare::table("--baseline", "this binary", &rows))))
}
