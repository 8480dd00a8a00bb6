//! The part of two designs' cards that carries the gap in mean latency between them: what a
//! verdict's *why* of a p99 gap names ([`why_gap`]).

use super::explain::{of, Card, INTERVALS};
use crate::bench::record::Cell;
use crate::units::fmt_us;

/// A part carries a gap between two designs only where it covers at least this share of the
/// gap in mean latency (a smaller one is never the reason).
pub const CARRIES: f64 = 0.5;

/// The sentence naming the part of the card that carries the gap in mean latency between a
/// finding's best and runner-up at its connections (medians over their repeats); `None` where
/// they have no cards, the gap is within one run's noise, or no part covers half of it.
pub(in crate::bench::judge) fn why_gap(cells: &[&Cell], best: &str, runner_up: &str, n: usize) -> Option<String> {
    let cards = |t: &str| -> Vec<Card> {
        cells
            .iter()
            .filter(|c| c.target == t && c.connections == n)
            .filter_map(|c| of(c))
            .collect()
    };
    let (a, b) = (cards(best), cards(runner_up));
    let median = |v: Vec<f64>| (!v.is_empty()).then(|| crate::bench::record::median(v));
    let mean = |cs: &[Card]| median(cs.iter().filter_map(|c| c.mean_us).collect());
    let part = |cs: &[Card], name: &str| {
        median(
            cs.iter()
                .filter_map(|c| c.parts.iter().find(|p| p.name == name)?.us)
                .collect(),
        )
    };
    let (ma, mb) = (mean(&a)?, mean(&b)?);
    let gap = mb - ma;
    // Only a longer mean for the runner-up has parts to carry it (a p99 finding whose runner-up
    // has the shorter mean is not one the means explain), by more than 5 % (the least gap the
    // judge calls: the verdict asks only of a clear finding).
    if gap <= (crate::bench::judge::MARGIN - 1.0) * ma.max(mb) {
        return None;
    }
    let (name, pa, pb) = INTERVALS
        .iter()
        .filter_map(|&name| Some((name, part(&a, name)?, part(&b, name)?)))
        .max_by(|x, y| (x.2 - x.1).total_cmp(&(y.2 - y.1)))
        // A part carries the gap when it holds at least half of it and no more than all of
        // it (a share over 100 % means other parts ran the other way: no one part carries it).
        .filter(|(_, pa, pb)| (CARRIES..=1.0).contains(&((pb - pa) / gap)))?;
    Some(format!(
        "Where the time went: {runner_up}'s mean is {} longer than {best}'s, {:.0}% of it in {name} ({} against {} per request).",
        fmt_us(gap),
        (pb - pa) / gap * 100.0,
        fmt_us(pb),
        fmt_us(pa)
    ))
}
