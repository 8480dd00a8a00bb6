//! `report`: terminal tables, and the self-contained HTML report with SVG charts.

pub mod charts;
pub mod html;
pub mod table;

use std::path::{Path, PathBuf};

use crate::bench::error::{io_err, Error};
use crate::bench::results::{read, Results};

/// Writes `DIR/report.html` for `results`; returns its path.
pub fn write_html(dir: &Path, results: &Results) -> Result<PathBuf, Error> {
    let out = dir.join("report.html");
    std::fs::write(&out, html::render(results)).map_err(io_err(format!("writing {}", out.display())))?;
    Ok(out)
}

/// `muxlab report DIR`: rebuilds `DIR/report.html` from `DIR/results.json`.
pub fn rebuild(dir: &Path) -> Result<PathBuf, Error> {
    write_html(dir, &read(dir)?)
}
