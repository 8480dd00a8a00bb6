//! `against`: a kept run's binary against its baseline (`bench --baseline`: a before/after in
//! one sitting), or, for a run without one, each experiment's targets against its `reference`:
//! per cell the ratio of throughput, p99 and server CPU per request with the spread of the
//! rounds and whether it goes beyond the noise, as `report` prints it, then the geometric means.

use serde::Deserialize;

use super::ctx::Ctx;
use super::error::DocsError;
use super::kept::Kept;
use super::markdown::{table_head, table_row};
use crate::report::compare::{self, Row};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgainstSpec {
    result: String,
    /// Default: every experiment's rows.
    #[serde(default)]
    experiments: Vec<String>,
}

/// `against`: the table of ratios, its headline first and the geometric means after; against
/// references, a sentence and a table per experiment.
pub fn against(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let s: AgainstSpec = toml::from_str(spec)?;
    let k = Kept::read(ctx, &s.result)?;
    for x in &s.experiments {
        k.verdict(x)?;
    }
    let wanted = |e: &str| s.experiments.is_empty() || s.experiments.iter().any(|x| x == e);
    if let Some(rows) = compare::baseline_rows(&k.results) {
        let rows: Vec<Row> = rows.into_iter().filter(|r| wanted(&r.experiment)).collect();
        if rows.is_empty() {
            return Err(nothing(&s));
        }
        let mut out = format!(
            "B = this binary, A = its baseline (`bench --baseline`). {}\n\n",
            compare::headline(&rows)
        );
        out.push_str(&table(&rows, "B/A"));
        for line in compare::summary(&rows).lines() {
            out.push_str(&format!("- {line}\n"));
        }
        return Ok(out);
    }
    let mut out = String::new();
    for a in compare::against_reference(&k.results)
        .iter()
        .filter(|a| wanted(&a.experiment))
    {
        out.push_str(&format!("{}\n\n", a.sentence()));
        out.push_str(&table(&a.rows, &format!("/ {}", a.reference)));
    }
    match out.is_empty() {
        true => Err(nothing(&s)),
        false => Ok(out),
    }
}

/// The block's run has no rows to show.
fn nothing(s: &AgainstSpec) -> DocsError {
    DocsError::NothingToCompare {
        result: s.result.clone(),
        experiments: s.experiments.clone(),
    }
}

/// The rows as a Markdown table, each cell the median of the paired rounds' ratios (`ratio`
/// says of what) with the lowest and highest round's, and better / WORSE beyond the noise.
fn table(rows: &[Row], ratio: &str) -> String {
    let mut out = table_head(
        &[
            "experiment",
            "target",
            "conns",
            &format!("throughput {ratio}"),
            &format!("p99 {ratio}"),
            &format!("CPU/request {ratio}"),
        ]
        .map(String::from),
    );
    for r in rows {
        out.push_str(&table_row(&[
            r.experiment.clone(),
            r.target.clone(),
            r.connections.to_string(),
            compare::cell_text(&r.changes[0]),
            compare::cell_text(&r.changes[1]),
            compare::cell_text(&r.changes[2]),
        ]));
    }
    out.push_str(
        "\nEach cell: the median of the paired rounds' ratios [lowest–highest round] (an unpaired experiment: \
         the ratio of medians [the range its repeats allow]); better / WORSE where the interval lies past 5 %; \
         - where either side has no figure to rank.\n\n",
    );
    out
}
