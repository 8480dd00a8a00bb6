//! The *why* of a verdict: the server counters in which the best and the runner-up differ most
//! (syscalls per request, useful events, context switches, lost accept races, starved
//! connections).

use super::results::{median, Cell};
use crate::load::summary::thousands;

/// A counter must differ by this factor to be offered as a reason.
const REASON_FACTOR: f64 = 1.25;

/// A counter that explains a gap, read from a cell.
type Counter = (&'static str, fn(&Cell) -> Option<f64>);

/// Counters that explain a gap: (name, per-cell value).
fn counters() -> [Counter; 5] {
    [
        ("syscalls per request", |c| c.figures.syscalls_per_req),
        ("useful events per event examined", |c| c.figures.useful_ratio),
        ("context switches per request", |c| c.figures.switches_per_req()),
        ("lost accept races per connection", |c| c.figures.lost_races_per_accept),
        ("starved connections", |c| Some(c.figures.starved_conns as f64)),
    ]
}

/// The counters where `a` and `b` differ by more than [`REASON_FACTOR`], largest first (two).
pub(super) fn reasons(cells: &[&Cell], a: &str, b: &str) -> Vec<(String, f64, f64)> {
    let med = |t: &str, f: fn(&Cell) -> Option<f64>| {
        let xs: Vec<f64> = cells.iter().filter(|c| c.target == t).filter_map(|c| f(c)).collect();
        (!xs.is_empty()).then(|| median(xs))
    };
    let mut found: Vec<(f64, String, f64, f64)> = counters()
        .into_iter()
        .filter_map(|(name, f)| {
            let (x, y) = (med(a, f)?, med(b, f)?);
            let (hi, lo) = (x.max(y), x.min(y));
            if hi < 0.05 {
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
            (factor > REASON_FACTOR).then(|| (factor, name.to_string(), x, y))
        })
        .collect();
    found.sort_by(|p, q| q.0.total_cmp(&p.0));
    found.into_iter().take(2).map(|(_, n, x, y)| (n, x, y)).collect()
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
