//! Judging a run's document by its gates: the figure each gate names, as the document measured
//! it, held to the gate's bound.

use super::{Figure, Gate, Gates, Judged};
use crate::load::Document;

impl Gate {
    /// The figure this gate names, as `doc` measured it (`None`: not measured, or no such
    /// class).
    pub fn value(&self, doc: &Document) -> Option<f64> {
        let r = &doc.results;
        let (requests, errors, latency) = match &self.class {
            None => (r.requests, r.error_total, &r.latency_us),
            Some(c) => {
                let k = r.classes.get(c)?;
                (k.requests, k.errors, &k.latency_us)
            }
        };
        match self.figure {
            Figure::Latency(q) => q.of(latency),
            Figure::Errors { share: false } => Some(errors as f64),
            Figure::Errors { share: true } => {
                let all = requests + errors;
                (all > 0).then(|| errors as f64 * 100.0 / all as f64)
            }
            Figure::Rps => (r.duration_s > 0.0).then_some(r.throughput_rps),
        }
    }

    /// Whether `doc` holds this gate, and the figure it measured.
    pub fn judge(&self, doc: &Document) -> Judged {
        let value = self.value(doc);
        let held = value.is_some_and(|v| {
            if self.fails_over {
                v <= self.bound
            } else {
                v >= self.bound
            }
        });
        Judged {
            gate: self.to_string(),
            value,
            held,
        }
    }
}

impl Gates {
    /// Each gate judged against `doc`.
    pub fn judge(&self, doc: &Document) -> Vec<Judged> {
        self.0.iter().map(|g| g.judge(doc)).collect()
    }
}
