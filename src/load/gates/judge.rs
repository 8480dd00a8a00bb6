//! Judging a run's document by its gates: the figure each gate names, as the document measured
//! it, held to the gate's bound.

use super::{Figure, Gate, Gates, Judged};
use crate::load::Document;

/// The figure `gate` names, as `doc` measured it (`None`: not measured, or no such class).
pub fn measured(gate: &Gate, doc: &Document) -> Option<f64> {
    let r = &doc.results;
    let (requests, errors, latency) = match &gate.class {
        None => (r.requests, r.error_total, &r.latency_us),
        Some(c) => {
            let k = r.classes.get(c)?;
            (k.requests, k.errors, &k.latency_us)
        }
    };
    match gate.figure {
        Figure::Latency(q) => q.of(latency),
        Figure::Errors { share: false } => Some(errors as f64),
        Figure::Errors { share: true } => {
            let all = requests + errors;
            (all > 0).then(|| errors as f64 * 100.0 / all as f64)
        }
        Figure::Rps => (r.duration_s > 0.0).then_some(r.throughput_rps),
    }
}

/// Whether `doc` holds `gate`, and the figure it measured.
pub fn judged(gate: &Gate, doc: &Document) -> Judged {
    let value = measured(gate, doc);
    let held = value.is_some_and(|v| {
        if gate.fails_over {
            v <= gate.bound
        } else {
            v >= gate.bound
        }
    });
    Judged {
        gate: gate.to_string(),
        value,
        held,
        vacuous: vacuous(gate, doc),
    }
}

/// Why `doc`'s own figures could not fail `gate`, where they could not: an error count bound
/// at or over every request the run sent (answered or failed).
fn vacuous(gate: &Gate, doc: &Document) -> Option<String> {
    let r = &doc.results;
    let sent = match &gate.class {
        None => r.requests + r.error_total,
        Some(c) => r.classes.get(c).map(|k| k.requests + k.errors)?,
    };
    match gate.figure {
        Figure::Errors { share: false } if gate.fails_over && gate.bound >= sent as f64 => Some(format!(
            "the run sent {} requests, so its errors could not exceed {}",
            crate::units::thousands(sent),
            gate.bound
        )),
        _ => None,
    }
}

/// Each of `gates` judged against `doc`.
pub fn judge_all(gates: &Gates, doc: &Document) -> Vec<Judged> {
    gates.0.iter().map(|g| judged(g, doc)).collect()
}
