//! `report`: terminal tables, and the self-contained HTML report with SVG charts.

mod capacity;
mod cards;
mod charts;
mod classes;
pub(crate) mod compare;
pub(crate) mod docs;
pub(crate) mod html;
mod seed;
pub(crate) mod series;
pub(crate) mod table;

#[cfg(test)]
mod rank_tests;

use std::path::{Path, PathBuf};

use crate::bench::error::{io_err, Error};
use crate::bench::{read, Results};

/// Writes `DIR/report.html` for `results`; returns its path.
/// A verdict as the terminal prints it: the experiment and its headline, a row per ranked
/// metric, then the whole verdict.
pub fn verdict_lines(v: &crate::bench::judge::finding::Verdict) -> String {
    let mut s = match v.headline.is_empty() {
        true => format!("  {}\n", v.experiment),
        false => format!("  {}: {}\n", v.experiment, v.headline),
    };
    if !v.table.is_empty() {
        s.push_str(&format!(
            "    {:<34} {:<30} {:<30} {:>7}  {:<10} {:<17} bound by\n",
            "metric", "best", "runner-up", "ratio", "confidence", "reason"
        ));
        for r in &v.table {
            s.push_str(&format!(
                "    {:<34} {:<30} {:<30} {:>6.2}×  {:<10} {:<17} {}\n",
                r.metric,
                r.best,
                r.runner_up,
                r.ratio,
                r.confidence,
                r.reason,
                r.bound_by.as_deref().unwrap_or("–")
            ));
        }
    }
    if !v.fidelity.is_empty() {
        let cols = crate::bench::judge::fidelity::COLUMNS;
        s.push_str(&format!("    {}\n", cols[..11].join(" | ")));
        for r in &v.fidelity {
            let c = r.cells();
            s.push_str(&format!("    {}\n", c[..11].join(" | ")));
        }
    }
    s.push_str(&format!("    {}\n", v.text));
    s
}

/// Writes the report of `results` beside them (`DIR/report.html`, or `STEM.report.html`
/// beside a results file).
pub fn write_html(dir: &Path, results: &Results) -> Result<PathBuf, Error> {
    let out = crate::bench::record::results::beside(dir, "report.html");
    std::fs::write(&out, html::render(results)).map_err(io_err(format!("writing {}", out.display())))?;
    Ok(out)
}

/// `muxlab report DIR`: rebuilds `DIR/report.html` from `DIR/results.json` (or a results
/// file's report beside it).
pub fn rebuild(dir: &Path) -> Result<PathBuf, Error> {
    write_html(dir, &read(dir)?)
}

/// `muxlab report A B`: writes `B/compare.html` (B against A) and returns it with the terminal
/// table.
pub fn compare(a: &Path, b: &Path) -> Result<(PathBuf, String), Error> {
    let (ra, rb) = (read(a)?, read(b)?);
    let rows = compare::rows(&ra, &rb, false);
    if rows.is_empty() {
        return Err(Error::Usage(format!(
            "{} and {} share no finished cell (same experiment, target and connections)",
            a.display(),
            b.display()
        )));
    }
    let (an, bn) = (a.display().to_string(), b.display().to_string());
    let out = crate::bench::record::results::beside(b, "compare.html");
    std::fs::write(&out, compare::html(&an, &bn, &rows)).map_err(io_err(format!("writing {}", out.display())))?;
    Ok((out, compare::table(&an, &bn, &rows)))
}

/// After `bench --baseline`: this binary's cells (B) against the baseline's (A), as
/// `report A B` shows two runs; writes `DIR/compare.html`. None without baseline cells.
pub fn against_baseline(dir: &Path, results: &Results) -> Result<Option<(PathBuf, String)>, Error> {
    let suffix = format!(" {}", crate::bench::runner::BASELINE);
    if !results.cells.iter().any(|c| c.target.ends_with(&suffix)) {
        return Ok(None);
    }
    let side = |baseline: bool| Results {
        cells: results
            .cells
            .iter()
            .filter(|c| c.target.ends_with(&suffix) == baseline)
            .map(|c| {
                let mut c = c.clone();
                c.target = c.target.trim_end_matches(&suffix).to_string();
                c
            })
            .collect(),
        ..results.clone()
    };
    let rows = compare::rows(&side(true), &side(false), true);
    let out = crate::bench::record::results::beside(dir, "compare.html");
    std::fs::write(&out, compare::html("--baseline", "this binary", &rows))
        .map_err(io_err(format!("writing {}", out.display())))?;
    Ok(Some((out, compare::table("--baseline", "this binary", &rows))))
}
