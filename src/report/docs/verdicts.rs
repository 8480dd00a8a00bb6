//! The blocks of a kept run's verdicts, by the current judge: `verdict` (the judge's headline,
//! table and sentences) and `glance` (a row per question: the headline and the figures behind
//! it).

use serde::Deserialize;

use super::cells::{Figure, What};
use super::ctx::Ctx;
use super::error::DocsError;
use super::kept::Kept;
use super::markdown::{table_head, table_row};
use crate::bench::judge::Verdict;
use crate::bench::record::Cell;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VerdictSpec {
    result: String,
    /// Default: every experiment's verdict.
    #[serde(default)]
    experiments: Vec<String>,
    /// Default: the headline, the verdict table and the sentences.
    #[serde(default)]
    parts: Vec<String>,
}

/// `verdict`: the current judge's verdict on the kept cells.
pub fn verdict(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let s: VerdictSpec = toml::from_str(spec)?;
    let k = Kept::read(ctx, &s.result)?;
    const PARTS: [&str; 3] = ["headline", "table", "text"];
    if let Some(p) = s.parts.iter().find(|p| !PARTS.contains(&p.as_str())) {
        return Err(DocsError::NoPart {
            part: p.clone(),
            parts: PARTS.to_vec(),
        });
    }
    let want = |p: &str| s.parts.is_empty() || s.parts.iter().any(|q| q == p);
    let verdicts: Vec<&Verdict> = match s.experiments.is_empty() {
        true => k.results.verdicts.iter().collect(),
        false => s.experiments.iter().map(|x| k.verdict(x)).collect::<Result<_, _>>()?,
    };
    let mut out = String::new();
    for v in verdicts {
        let headline = match v.headline.is_empty() {
            true => v.text.as_str(),
            false => v.headline.as_str(),
        };
        if want("headline") {
            out.push_str(&format!("**{}**: {headline}\n\n", v.experiment));
        }
        if want("table") && !v.table.is_empty() {
            out.push_str(&table_head(
                &[
                    "metric",
                    "best",
                    "runner-up",
                    "ratio",
                    "confidence",
                    "reason",
                    "bound by",
                ]
                .map(String::from),
            ));
            for r in &v.table {
                out.push_str(&table_row(&[
                    r.metric.clone(),
                    r.best.clone(),
                    r.runner_up.clone(),
                    format!("{:.2}×", r.ratio),
                    r.confidence.clone(),
                    r.reason.clone(),
                    r.bound_by.clone().unwrap_or_else(|| "–".into()),
                ]));
            }
            out.push('\n');
        }
        if want("table") && !v.fidelity.is_empty() {
            out.push_str(&table_head(&crate::bench::judge::fidelity::COLUMNS.map(String::from)));
            for r in &v.fidelity {
                out.push_str(&table_row(&r.cells()));
            }
            out.push('\n');
        }
        if want("text") {
            out.push_str(&format!("> {}\n\n", v.text));
        }
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GlanceSpec {
    rows: Vec<GlanceRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GlanceRow {
    question: String,
    result: String,
    experiment: String,
    /// The metric whose figures the row shows (`memory per connection`); by default those of
    /// the finding the headline leads with.
    #[serde(default)]
    metric: Option<String>,
}

/// `glance`: a row per question: the experiment's headline as the current judge says it, the
/// figures of its first ranked metric (best, runner-up, last) and the result it comes from.
pub fn glance(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let s: GlanceSpec = toml::from_str(spec)?;
    let mut out = table_head(&["question", "what this machine says", "its figures", "result"].map(String::from));
    for r in &s.rows {
        let k = Kept::read(ctx, &r.result)?;
        let v = k.verdict(&r.experiment)?;
        let says = match v.headline.is_empty() {
            true => v.text.clone(),
            false => v.headline.clone(),
        };
        out.push_str(&table_row(&[
            r.question.clone(),
            says,
            figures_of(&k, v, r.metric.as_deref())?,
            format!("[{}]({})", k.name, ctx.result_link(&k.name, "json")),
        ]));
    }
    Ok(out)
}

/// The figures behind the finding a verdict's headline leads with (the first clear one, else
/// the first with a design at least 1.5× behind, else the first): the best's, the runner-up's
/// and the last's value at the connection count compared, from their cells (the median of
/// repeats); `metric`: those of that metric's finding instead (an error where the verdict has
/// none).
fn figures_of(k: &Kept, v: &Verdict, metric: Option<&str>) -> Result<String, DocsError> {
    let behind = |f: &&crate::bench::judge::Finding| {
        f.last
            .as_ref()
            .is_some_and(|l| l.1 >= crate::bench::judge::headline::BEHIND)
    };
    let chosen = match metric {
        Some(m) => Some(
            v.findings
                .iter()
                .find(|f| f.metric == m && f.class.is_none())
                .ok_or_else(|| DocsError::NoMetric {
                    result: k.name.clone(),
                    experiment: v.experiment.clone(),
                    metric: m.to_string(),
                    ranked: v.findings.iter().map(|f| f.metric.clone()).collect(),
                })?,
        ),
        None => v
            .findings
            .iter()
            .find(|f| f.clear)
            .or_else(|| v.findings.iter().find(behind))
            .or_else(|| v.findings.first()),
    };
    let Some(f) = chosen else {
        return Ok("–".into());
    };
    let m = f.metric();
    let figure = Figure {
        key: String::new(),
        class: f.class.clone(),
        what: What::Metric(m),
    };
    let at = |target: &str| -> Option<String> {
        let cells: Vec<&Cell> = k
            .results
            .cells
            .iter()
            .filter(|c| {
                c.experiment == v.experiment && c.compared() && c.label() == target && c.connections == f.connections
            })
            .collect();
        let value = figure.values(&cells).0?;
        Some(format!("{target} {}", m.whole(value)))
    };
    let mut parts: Vec<String> = [
        Some(f.best.as_str()),
        Some(f.runner_up.as_str()),
        f.last.as_ref().map(|l| l.0.as_str()),
    ]
    .into_iter()
    .flatten()
    .filter_map(at)
    .collect();
    parts.dedup();
    let what = match &f.class {
        Some(c) => format!("{} of {c}", f.metric),
        None => f.metric.clone(),
    };
    Ok(format!(
        "{what} at {}: {}",
        connections(f.connections),
        parts.join(", ")
    ))
}

/// "1 connection", "1,000 connections".
fn connections(n: usize) -> String {
    match n {
        1 => "1 connection".into(),
        n => format!("{} connections", crate::units::thousands(n as u64)),
    }
}
