//! B against A, cell by cell: each metric's ratio B/A, and whether the change goes beyond the
//! noise by the judge's one rule for rounds (`judge::interval`): two runs' rounds by Welch's
//! interval of their logs, a paired run's by the interval of its rounds' ratios; beyond where
//! the interval lies past 5 % either way; one round a side is not judged.

use crate::bench::judge::interval::{self, Interval, Judged, MARGIN};
use crate::bench::judge::metric::{self, Metric};
use crate::bench::record::{spread, Cell, Spread};
use crate::bench::Results;

/// One metric of one cell, on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// B's median / A's median.
    pub ratio: f64,
    /// The lowest and highest B/A the repeats allow (B's range over A's; paired rounds: the
    /// lowest and highest round's ratio).
    pub spread: (f64, f64),
    /// `Some(true)`: better beyond the noise, `Some(false)`: worse, `None`: within it (or not
    /// judged).
    pub verdict: Option<bool>,
    /// Paired rounds: in how many B was better, of how many.
    pub rounds: Option<(usize, usize)>,
    /// The interval of B/A over the rounds (`None`: one round a side, not judged).
    pub interval: Option<Interval>,
}

/// Better or worse beyond the noise where the interval of B/A lies past 5 % either way
/// (`higher`: whether higher is better); `None` within it or not judged.
fn verdict_of(j: &Judged, higher: bool) -> Option<bool> {
    let i = j.interval()?;
    if i.low > MARGIN {
        Some(higher)
    } else if i.high < 1.0 / MARGIN {
        Some(!higher)
    } else {
        None
    }
}

/// A cell present in both runs.
#[derive(Debug, Clone)]
pub struct Row {
    pub experiment: String,
    pub target: String,
    pub connections: usize,
    /// Throughput, p99, CPU per request (a metric missing on either side is `None`).
    pub changes: [Option<Change>; 3],
}

/// The metrics compared, in the tables' order.
pub(super) const METRICS: [&Metric; 3] = [&metric::THROUGHPUT, &metric::P99, &metric::CPU];

/// A figure's spread over the repeats that measured it where it may be ranked
/// ([`metric::rankable`], beside the rest of its run), and how many did.
fn stats(cells: &[&Cell], m: &Metric, run: &[&Cell]) -> Option<(Spread, usize)> {
    let xs: Vec<f64> = cells
        .iter()
        .filter_map(|c| metric::rankable(m, c, run).ranked().map(|r| r.get()))
        .collect();
    let n = xs.len();
    spread(xs).map(|s| (s, n))
}

pub(super) fn change(a: &[&Cell], b: &[&Cell], m: &Metric, runs: (&[&Cell], &[&Cell])) -> Option<Change> {
    let higher = &m.higher_is_better;
    let offered = offered_both(a, b, m);
    // One target in two runs compares only where both placed it alike.
    let first = |cells: &[&Cell], run: &[&Cell]| cells.iter().find_map(|c| metric::rankable(m, c, run).ranked());
    if !first(a, runs.0)?.alike(first(b, runs.1)?) {
        return None;
    }
    let (sa, _) = stats(a, m, runs.0)?;
    let (sb, _) = stats(b, m, runs.1)?;
    let logs = |cells: &[&Cell], run: &[&Cell]| -> Vec<f64> {
        cells
            .iter()
            .filter_map(|c| metric::rankable(m, c, run).ranked())
            .map(|v| v.get().ln())
            .filter(|l| l.is_finite())
            .collect()
    };
    let j = interval::judge_apart(&logs(b, runs.1), &logs(a, runs.0));
    Some(Change {
        ratio: sb.median / sa.median,
        spread: (sb.lowest / sa.highest, sb.highest / sa.lowest),
        verdict: verdict_of(&j, *higher).filter(|_| !offered),
        rounds: None,
        interval: j.interval(),
    })
}

/// Throughput that the offered rate set on both sides (`metric::throughput_offered`): no change
/// to call, whatever the rounds say.
fn offered_both(a: &[&Cell], b: &[&Cell], m: &Metric) -> bool {
    m.name == metric::THROUGHPUT.name && a.iter().chain(b).all(|c| metric::throughput_offered(c))
}

/// B against A where both ran in one paired run (`bench --baseline` of a `paired = true`
/// experiment: the two servers measured in the same round, one right after the other): the
/// ratio of each round, their median and range; beyond the noise where the interval of the
/// rounds' ratios lies past 5 % either way.
pub(super) fn paired_change(a: &[&Cell], b: &[&Cell], m: &Metric, runs: (&[&Cell], &[&Cell])) -> Option<Change> {
    let higher = &m.higher_is_better;
    let ratios: Vec<f64> = b
        .iter()
        .filter_map(|cb| {
            let ca = a.iter().find(|ca| ca.repeat == cb.repeat)?;
            let (vb, va) = (
                metric::rankable(m, cb, runs.1).ranked()?,
                metric::rankable(m, ca, runs.0).ranked()?,
            );
            // A round compares the target with itself only where both runs placed it alike.
            vb.alike(va).then(|| vb.get() / va.get())
        })
        .collect();
    let n = ratios.len();
    let ups = ratios.iter().filter(|r| **r > 1.0).count();
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).filter(|l| l.is_finite()).collect();
    let j = interval::judge(&logs, None);
    let Spread {
        median: ratio,
        lowest: lo,
        highest: hi,
    } = spread(ratios)?;
    let better = if *higher { ups } else { n - ups };
    Some(Change {
        ratio,
        spread: (lo, hi),
        verdict: verdict_of(&j, *higher).filter(|_| !offered_both(a, b, m)),
        rounds: Some((better, n)),
        interval: j.interval(),
    })
}

/// The cells of B that A also has, compared. `same_run`: A and B come from one run (`bench
/// --baseline`), so a paired experiment's rounds pair up.
pub fn rows(a: &Results, b: &Results, same_run: bool) -> Vec<Row> {
    let ok = |r: &Results| -> Vec<Cell> { r.cells.iter().filter(|c| c.ok()).cloned().collect() };
    let (ca, cb) = (ok(a), ok(b));
    let (run_a, run_b): (Vec<&Cell>, Vec<&Cell>) = (ca.iter().collect(), cb.iter().collect());
    let mut keys: Vec<(String, String, usize)> = Vec::new();
    for c in &cb {
        let k = (c.experiment.clone(), c.label(), c.connections);
        if !keys.contains(&k)
            && ca
                .iter()
                .any(|x| (&x.experiment, &x.label(), x.connections) == (&k.0, &k.1, k.2))
        {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(e, t, n)| {
            let pick = |cells: &[Cell]| -> Vec<Cell> {
                cells
                    .iter()
                    .filter(|c| c.experiment == e && c.label() == t && c.connections == n)
                    .cloned()
                    .collect()
            };
            let (pa, pb) = (pick(&ca), pick(&cb));
            let (ra, rb): (Vec<&Cell>, Vec<&Cell>) = (pa.iter().collect(), pb.iter().collect());
            let paired = same_run && a.scenario.experiments.iter().any(|x| x.name == e && x.paired);
            let compare = if paired { paired_change } else { change };
            Row {
                experiment: e,
                target: t,
                connections: n,
                changes: METRICS.map(|m| compare(&ra, &rb, m, (&run_a, &run_b))),
            }
        })
        .collect()
}
