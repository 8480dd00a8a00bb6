//! One target's side of a row: each figure the median over its finished repeats, and the
//! figures of the repeat of median throughput that a cause is named from.

use super::super::card;
use super::super::metric::{median, rankable, Metric, Rank, CPU, P99};
use crate::bench::record::Cell;

/// One target at one connection count, as fidelity reads it: each figure the median over its
/// finished repeats (not compared where any repeat's may not be ranked, or none finished), and
/// the repeat of the median throughput for what names a cause.
pub(super) struct Side<'a> {
    pub(super) label: &'a str,
    pub(super) cell: &'a Cell,
    pub(super) p99: Rank,
    pub(super) cpu: Rank,
}

/// The median of `m` over `repeats` (finished cells) that measured it: ranked where every one
/// is ([`median`], the one rule's); else the first reason one is not.
fn median_rank(m: &Metric, repeats: &[&Cell], beside: &[&Cell]) -> Rank {
    let ranks: Vec<Rank> = repeats.iter().map(|c| rankable(m, c, beside)).collect();
    median(&ranks)
}

impl<'a> Side<'a> {
    /// `cell` is the repeat of the median throughput (`summarize`); `repeats` every finished
    /// one.
    pub(super) fn of(label: &'a str, cell: &'a Cell, repeats: &[&Cell], beside: &[&Cell]) -> Side<'a> {
        let finished: Vec<&Cell> = repeats.iter().copied().filter(|c| c.ok()).collect();
        let (p99, cpu) = match finished.is_empty() {
            true => (Rank::NotMeasured, Rank::NotMeasured),
            false => (
                median_rank(&P99, &finished, beside),
                median_rank(&CPU, &finished, beside),
            ),
        };
        Side { label, cell, p99, cpu }
    }

    pub(super) fn switches_per_req(&self) -> Option<f64> {
        let f = &self.cell.figures;
        Some(f.context_switches? as f64 / f.requests.max(1) as f64).filter(|_| f.requests > 0)
    }

    /// The share of its CPUs it kept busy.
    pub(super) fn busy(&self) -> Option<f64> {
        let f = &self.cell.figures;
        let n = f.why.as_ref()?.server_cpus?;
        Some(f.server_cpu_cores? / n.max(1) as f64).filter(|u| *u > 0.0)
    }

    /// Its threads' time waiting for a CPU, per request (µs).
    pub(super) fn run_queue_us(&self) -> Option<f64> {
        let part = card::of(self.cell)?
            .parts
            .into_iter()
            .find(|p| p.name == "run-queue wait")?;
        part.us
    }
}

/// The value of a rank, where it was measured.
pub(super) fn value(r: Rank) -> Option<f64> {
    r.measured()
}
