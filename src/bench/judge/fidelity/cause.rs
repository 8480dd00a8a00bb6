//! Why a model differs from its product, priced against the gap: each candidate is a figure
//! the cells measured, turned into what it predicts of the gap in the same unit (E[S]), and a
//! cause is named only where it covers at least [`COVERS`] of the gap and at most
//! [`OVERSHOOTS`] times it, in its direction. The candidates: how busy each kept its CPUs (one
//! queue's p50 or p99 at that utilization, M/M/1 at the utilization per CPU: a side with
//! several CPUs queues less, which this overstates) and how long each one's threads waited for
//! a CPU per request (a mean, priced as it is: it covers a tail's gap only where the tail moves
//! with the mean). Where none covers it, the row says so with what each figure does cover.

use super::side::Side;

/// A figure names the cause where it accounts for at least this share of the gap...
pub const COVERS: f64 = 0.5;

/// ...and at most this many times it: a figure predicting a gap far past the one measured is
/// not what made it.
pub const OVERSHOOTS: f64 = 2.0;

/// A utilization over this is read as this: one queue's response grows without bound at 1.
const BUSIEST: f64 = 0.99;

/// One priced candidate: what it is, how much of the gap (E[S]) it predicts, signed as model
/// less product, and its figures in words.
struct Priced {
    what: &'static str,
    predicts: Option<f64>,
    said: String,
}

/// The q-quantile of an M/M/1 queue's response time at utilization `busy`, in E[S].
fn mm1_quantile(q: f64, busy: f64) -> f64 {
    -(1.0 - q).ln() / (1.0 - busy.min(BUSIEST))
}

/// What pricing a gap found.
pub(super) enum Cause {
    /// The figures that cover it, in words.
    Named(String),
    /// None does: what each covers, in words.
    Uncovered(String),
}

impl Cause {
    pub(super) fn said(self) -> String {
        match self {
            Cause::Named(s) | Cause::Uncovered(s) => s,
        }
    }
}

/// The cause of a gap on the figure `what` at quantile `q` (p50: 0.5, p99: 0.99), the model's
/// median shape `sm` against the product's `sp` (both in their own E[S]): the figures that
/// cover it, or what each covers where none does. `blocking`: the requests' time is mostly a
/// blocking call (a pool's occupancy, not its CPUs' utilization, is its queue's load:
/// utilization names nothing there).
pub(super) fn priced(m: &Side, p: &Side, what: &str, q: f64, sm: f64, sp: f64, blocking: bool) -> Cause {
    let gap = sm - sp;
    // A share that rounds to 0 is "0%", never "-0%".
    let pct = |x: f64| format!("{:.0}%", (x * 100.0).round() + 0.0);
    let mut candidates = Vec::new();
    let (bm, bp) = (m.busy(), p.busy());
    candidates.push(Priced {
        what: "utilization",
        predicts: match blocking {
            true => None,
            false => bm.zip(bp).map(|(a, b)| mm1_quantile(q, a) - mm1_quantile(q, b)),
        },
        said: match (bm, bp) {
            (Some(a), Some(b)) => format!("{} kept its CPUs {} busy, {} {}", m.label, pct(a), p.label, pct(b)),
            _ => "how busy each kept its CPUs was not measured".to_string(),
        },
    });
    let (rm, rp) = (m.run_queue(), p.run_queue());
    candidates.push(Priced {
        what: "waiting for a CPU",
        predicts: rm.zip(rp).map(|(a, b)| a - b),
        said: match (rm, rp) {
            (Some(a), Some(b)) => format!(
                "{}'s threads waited {a:.2} E[S] per request for a CPU, {}'s {b:.2}",
                m.label, p.label
            ),
            _ => "the time its threads waited for a CPU was not measured on both".to_string(),
        },
    });
    let share = |c: &Priced| c.predicts.map(|x| x / gap).filter(|s| s.is_finite());
    let named: Vec<String> = candidates
        .iter()
        .filter(|c| share(c).is_some_and(|s| (COVERS..=OVERSHOOTS).contains(&s)))
        .map(|c| {
            format!(
                "{} ({}: it predicts {:+.2} E[S] of the {what} gap of {:+.2} E[S], {})",
                c.said,
                c.what,
                c.predicts.unwrap_or(0.0),
                gap,
                pct(share(c).unwrap_or(0.0))
            )
        })
        .collect();
    if !named.is_empty() {
        return Cause::Named(named.join("; "));
    }
    let each: Vec<String> = candidates
        .iter()
        .map(|c| match (share(c), blocking && c.what == "utilization") {
            (_, true) => format!("{} names nothing where the work is a blocking call", c.what),
            (Some(s), _) => format!("{} {} ({})", c.what, pct(s), c.said),
            (None, _) => format!("{}: {}", c.what, c.said),
        })
        .collect();
    Cause::Uncovered(format!(
        "no measured figure covers half the {what} gap of {gap:+.2} E[S] (and at most twice it): {}",
        each.join("; ")
    ))
}
