//! The *why* of a verdict: the server counters in which the best and the runner-up differ most
//! (syscalls per request, useful events, context switches, lost accept races, starved
//! connections), offered as the reason only where the difference, times what one unit costs
//! ([`UnitCosts`]), accounts for a real share of the gap in server CPU per request; the
//! sentence the verdict gives of them ([`why_sentence`]).

use super::context::Context;
use super::finding::{Finding, Reason};
use super::metric::CPU;
use crate::bench::record::costs::UnitCosts;
use crate::bench::record::{median, Cell};
use crate::units::thousands;

/// A counter under this for both targets (per request) is next to nothing either way: no reason.
const NEXT_TO_NOTHING: f64 = 0.05;

/// A counter must differ by this factor to be offered as a reason.
const REASON_FACTOR: f64 = 1.25;

/// A counter's difference, priced, must account for this share of the CPU gap it explains.
const COVER_SHARE: f64 = 0.25;

/// A counter that explains a gap: its name, how to read it from a cell, and what one unit of it
/// per request costs (in µs of server CPU per request; `None`: it has no price per request).
struct Counter {
    name: &'static str,
    get: fn(&Cell) -> Option<f64>,
    price: Option<fn(&UnitCosts) -> f64>,
}

impl Counter {
    const fn of(name: &'static str, get: fn(&Cell) -> Option<f64>, price: Option<fn(&UnitCosts) -> f64>) -> Counter {
        Counter { name, get, price }
    }
}

/// The counters offered as reasons, each with what one unit of it costs where it has a price.
const COUNTERS: [Counter; 5] = [
    Counter::of(
        "syscalls per request",
        |c| c.figures.syscalls_per_req,
        Some(|u| u.syscall_us),
    ),
    Counter::of("useful events per event examined", |c| c.figures.useful_ratio, None),
    Counter::of(
        "context switches per request",
        |c| c.figures.switches_per_req(),
        Some(|u| u.context_switch_us),
    ),
    Counter::of(
        "lost accept races per connection",
        |c| c.figures.lost_races_per_accept,
        None,
    ),
    Counter::of("starved connections", |c| Some(c.figures.starved_conns as f64), None),
];

/// A counter in which two targets differ.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Difference {
    pub name: &'static str,
    /// The best's and the runner-up's values (medians).
    pub best: f64,
    pub runner_up: f64,
    /// The difference times the unit's cost, in µs of CPU per request (`None`: no price).
    pub priced_us: Option<f64>,
}

/// What the counters say about a CPU-per-request gap of `gap_us` between `a` (best) and `b`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Why {
    /// Counters whose priced difference covers a real share of the gap (two at most, the
    /// largest share first).
    Explained(Vec<Difference>),
    /// The counters that differ (if any) account for too little of the gap, or cannot be
    /// priced, or the gap itself was not measured.
    Unexplained {
        gap_us: Option<f64>,
        differ: Vec<Difference>,
    },
}

/// The counters where `a` and `b` differ by more than [`REASON_FACTOR`], weighed against the
/// gap in server CPU per request between them.
pub(super) fn why(cells: &[&Cell], a: &str, b: &str, costs: &UnitCosts) -> Why {
    let med = |t: &str, f: fn(&Cell) -> Option<f64>| {
        let xs: Vec<f64> = cells.iter().filter(|c| c.target == t).filter_map(|c| f(c)).collect();
        (!xs.is_empty()).then(|| median(xs))
    };
    let gap_us = match (med(a, |c| c.figures.cpu_per_req()), med(b, |c| c.figures.cpu_per_req())) {
        (Some(x), Some(y)) => Some((x - y).abs()),
        _ => None,
    };
    let mut differ: Vec<(f64, Difference)> = COUNTERS
        .iter()
        .filter_map(|c| {
            let (x, y) = (med(a, c.get)?, med(b, c.get)?);
            let (hi, lo) = (x.max(y), x.min(y));
            if hi < NEXT_TO_NOTHING {
                // Both next to nothing: no reason either way.
                return None;
            }
            let factor = if lo <= 0.0 {
                if hi >= 1.0 {
                    f64::INFINITY
                } else {
                    1.0
                }
            } else {
                hi / lo
            };
            (factor > REASON_FACTOR).then(|| {
                let d = Difference {
                    name: c.name,
                    best: x,
                    runner_up: y,
                    priced_us: c.price.map(|p| (hi - lo) * p(costs)),
                };
                (factor, d)
            })
        })
        .collect();
    differ.sort_by(|p, q| q.0.total_cmp(&p.0));
    let differ: Vec<Difference> = differ.into_iter().map(|(_, d)| d).collect();
    let mut covering: Vec<Difference> = match gap_us {
        Some(g) if g > 0.0 => differ
            .iter()
            .filter(|d| d.priced_us.is_some_and(|p| p >= COVER_SHARE * g))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    if covering.is_empty() {
        return Why::Unexplained { gap_us, differ };
    }
    covering.sort_by(|p, q| q.priced_us.unwrap_or(0.0).total_cmp(&p.priced_us.unwrap_or(0.0)));
    covering.truncate(2);
    Why::Explained(covering)
}

pub(super) fn counter_value(name: &str, v: f64) -> String {
    if name == "starved connections" {
        thousands(v as u64)
    } else if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The gap in server CPU per request the *why* weighs, in words.
fn why_gap(cells: &[&Cell], a: &str, b: &str) -> String {
    let med = |t: &str| {
        let xs: Vec<f64> = cells
            .iter()
            .filter(|c| c.target == t)
            .filter_map(|c| CPU.value(c))
            .collect();
        (!xs.is_empty()).then(|| median(xs))
    };
    match (med(a), med(b)) {
        (Some(x), Some(y)) => format!("{:.1} µs gap in server CPU per request", (x - y).abs()),
        _ => "gap".into(),
    }
}

/// Counters in words: "0.02 syscalls per request against 2.00 (≈ 1.2 µs)".
fn counters_said(d: &[Difference]) -> Vec<String> {
    d.iter()
        .map(|d| {
            let priced = d.priced_us.map(|p| format!(" (≈ {p:.1} µs)")).unwrap_or_default();
            format!(
                "{} {} against {}{priced}",
                counter_value(d.name, d.best),
                d.name,
                counter_value(d.name, d.runner_up)
            )
        })
        .collect()
}

/// Why the CPU-per-request leader leads: the counters that set it apart, weighed in CPU per
/// request (a latency or throughput gap is not in the counters' unit: no why is given for
/// it). The counters given as the reason go into `reasons`.
pub(super) fn why_sentence(
    ok: &[&Cell],
    findings: &[Finding],
    ctx: &Context,
    reasons: &mut Vec<Reason>,
) -> Option<String> {
    let f = findings.iter().find(|f| f.metric == CPU.name && f.clear)?;
    match why(ok, &f.best, &f.runner_up, &ctx.costs) {
        Why::Explained(found) => {
            *reasons = found
                .iter()
                .map(|d| Reason {
                    counter: d.name.to_string(),
                    best: d.best,
                    runner_up: d.runner_up,
                })
                .collect();
            let gap = why_gap(ok, &f.best, &f.runner_up);
            Some(format!(
                "Why: {} has {}, of the {gap} to {}.",
                f.best,
                counters_said(&found).join(", and "),
                f.runner_up
            ))
        }
        Why::Unexplained { gap_us, differ } if !differ.is_empty() => {
            let gap = gap_us.map(|g| format!(" of {g:.1} µs")).unwrap_or_default();
            Some(format!(
                "The counters muxlab keeps do not explain the gap{gap} between {} and {}: {} ({}) {}.",
                f.best,
                f.runner_up,
                counters_said(&differ).join(", "),
                f.best,
                if gap_us.is_some() {
                    "account for too little of it"
                } else {
                    "cannot be weighed against a CPU gap that was not measured"
                }
            ))
        }
        Why::Unexplained { .. } => None,
    }
}
