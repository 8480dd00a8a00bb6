//! Every experiment with a `reference`: each other target against it ([`AgainstReference`]),
//! in a sentence and a table.

use super::render::grid;
use super::rows::{change, paired_change, Change, Row, METRICS};
use crate::bench::record::Cell;
use crate::bench::Results;

/// An experiment with a `reference`: each other target against it.
#[derive(Debug, Clone)]
pub struct AgainstReference {
    pub experiment: String,
    pub reference: String,
    pub paired: bool,
    pub rows: Vec<Row>,
}

/// Every experiment with a `reference`: each other target against it, at each connection
/// count both ran (a paired experiment round by round), in the scenario's order of targets.
pub fn against_reference(r: &Results) -> Vec<AgainstReference> {
    let ok: Vec<&Cell> = r.cells.iter().filter(|c| c.ok()).collect();
    let mut out = Vec::new();
    for x in &r.scenario.experiments {
        let Some(reference) = &x.reference else { continue };
        let compare = if x.paired { paired_change } else { change };
        let mut rows = Vec::new();
        for n in &x.connections {
            let of = |t: &str| -> Vec<&Cell> {
                let mine = |c: &&&Cell| c.experiment == x.name && c.label() == t && c.connections == *n;
                ok.iter().filter(mine).copied().collect()
            };
            let base = of(reference);
            if base.is_empty() {
                continue;
            }
            for t in x.models.iter().chain(&x.peers).filter(|t| *t != reference) {
                let cells = of(t);
                if !cells.is_empty() {
                    rows.push(Row {
                        experiment: x.name.clone(),
                        target: t.clone(),
                        connections: *n,
                        changes: METRICS.map(|m| compare(&base, &cells, m, (&ok, &ok))),
                    });
                }
            }
        }
        out.push(AgainstReference {
            experiment: x.name.clone(),
            reference: reference.clone(),
            paired: x.paired,
            rows,
        });
    }
    out
}

impl AgainstReference {
    /// In words, for server CPU per request: how many targets are cheaper or dearer than the
    /// reference beyond the noise, and the cheapest.
    pub fn sentence(&self) -> String {
        let cpu: Vec<(&Row, &Change)> = self
            .rows
            .iter()
            .filter_map(|r| Some((r, r.changes[2].as_ref()?)))
            .collect();
        let Some((best, c)) = cpu.iter().min_by(|a, b| a.1.ratio.total_cmp(&b.1.ratio)) else {
            return format!("{}: no cell to compare with {}.", self.experiment, self.reference);
        };
        let cheaper = cpu.iter().filter(|(_, c)| c.verdict == Some(true)).count();
        let dearer = cpu.iter().filter(|(_, c)| c.verdict == Some(false)).count();
        let within = c.interval.map_or("one round: not judged".to_string(), |i| i.said());
        let how = match (c.verdict, c.rounds) {
            (Some(true), Some((k, n))) => format!("cheaper in {k} of {n} paired rounds, {within}: beyond the noise"),
            (Some(true), None) => format!("{within}: beyond the noise"),
            (Some(false), _) => format!("yet dearer beyond the noise, {within}"),
            (None, Some((k, n))) => format!("cheaper in {k} of {n} paired rounds, {within}: no clear difference"),
            (None, None) if c.interval.is_none() => within,
            (None, None) => format!("{within}: no clear difference"),
        };
        format!(
            "{}: server CPU per request against {}: {cheaper} of {} cells cheaper and {dearer} dearer beyond the noise; \
             the cheapest is {} at {} connections, {:.2}× [{:.2}–{:.2}] ({how}).",
            self.experiment,
            self.reference,
            cpu.len(),
            best.target,
            best.connections,
            c.ratio,
            c.spread.0,
            c.spread.1
        )
    }

    /// The terminal table, with its sentence.
    pub fn table(&self) -> String {
        let spread = if self.paired {
            "lowest–highest round"
        } else {
            "range the repeats allow"
        };
        format!(
            "{}\nEach target / {}: median ratio [{spread}]; better / WORSE when beyond the noise\n{}",
            self.sentence(),
            self.reference,
            grid(&self.rows)
        )
    }
}
