//! The A/A figure of a paired experiment: its first model measured twice in the same rounds
//! (the twin beside the original), how far apart the two were. A difference between targets
//! smaller than that is not one this machine resolves.

use super::finding::AaFigure;
use super::metric::{rankable, Metric, CPU, THROUGHPUT};
use crate::bench::record::{median, Cell};

/// The A/A figure of `twins` (the twin's cells) against their originals in `cells`: server CPU
/// per request where ranked ([`rankable`]), else throughput.
pub(super) fn aa_figure(twins: &[&Cell], cells: &[&Cell]) -> Option<AaFigure> {
    let target = &twins.first()?.target;
    [&CPU, &THROUGHPUT].into_iter().find_map(|m: &Metric| {
        let diffs: Vec<f64> = twins
            .iter()
            .filter_map(|t| {
                let o = cells
                    .iter()
                    .find(|c| &c.target == target && c.connections == t.connections && c.repeat == t.repeat)?;
                // As the ranking reads them: a round where either may not be ranked (the client
                // bound it, too few samples) says nothing of the machine's noise.
                let (a, b) = (rankable(m, t, cells).ranked()?, rankable(m, o, cells).ranked()?);
                let r = a.ratio(b, m)?;
                Some((r.max(1.0 / r) - 1.0) * 100.0)
            })
            .collect();
        (!diffs.is_empty()).then(|| AaFigure {
            target: target.clone(),
            metric: m.name.into(),
            rounds: diffs.len(),
            max_diff_pct: diffs.iter().cloned().fold(0.0, f64::max),
            median_diff_pct: median(diffs),
        })
    })
}
