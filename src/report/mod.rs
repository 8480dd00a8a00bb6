//! `report`: terminal tables, and the self-contained HTML report with SVG charts.

pub mod charts;
pub mod html;
pub mod table;

use std::path::Path;

use serde_json::Value;

use crate::bench::results::Cell;
use crate::bench::scenario::Scenario;

/// Everything a report is made from (the contents of `results.json`).
#[derive(Debug, Clone)]
pub struct Data {
    pub scenario: Scenario,
    pub environment: Value,
    pub cells: Vec<Cell>,
    pub interrupted: bool,
}

/// Reads `DIR/results.json`.
pub fn read(dir: &Path) -> Result<Data, String> {
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: {e} (is {} a bench results directory?)",
            path.display(),
            dir.display()
        )
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let scenario: Scenario =
        serde_json::from_value(v["scenario"].clone()).map_err(|e| format!("{}: scenario: {e}", path.display()))?;
    let cells: Vec<Cell> =
        serde_json::from_value(v["cells"].clone()).map_err(|e| format!("{}: cells: {e}", path.display()))?;
    Ok(Data {
        scenario,
        environment: v["environment"].clone(),
        cells,
        interrupted: v["interrupted"].as_bool().unwrap_or(false),
    })
}

/// `muxlab report DIR`: rebuilds `DIR/report.html`.
pub fn rebuild(dir: &Path) -> Result<std::path::PathBuf, String> {
    let data = read(dir)?;
    let out = dir.join("report.html");
    std::fs::write(&out, html::render(&data)).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(out)
}
