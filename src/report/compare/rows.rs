//! B against A, cell by cell: each metric's ratio B/A with the spread of both sides' repeats,
//! and whether the change goes beyond the noise (a paired run's rounds by a sign test).

use crate::bench::judge::metric::{self, Metric};
use crate::bench::record::{spread, Cell, Spread};
use crate::bench::Results;

use crate::bench::judge::SINGLE_RUN_NOISE;
use crate::bench::record::CHANCE;

/// One metric of one cell, on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// B's median / A's median.
    pub ratio: f64,
    /// The lowest and highest B/A the repeats allow (B's range over A's; paired rounds: the
    /// lowest and highest round's ratio).
    pub spread: (f64, f64),
    /// `Some(true)`: better beyond the noise, `Some(false)`: worse, `None`: within it.
    pub verdict: Option<bool>,
    /// Paired rounds: in how many B was better, of how many.
    pub rounds: Option<(usize, usize)>,
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
    let (sa, an) = stats(a, m, runs.0)?;
    let (sb, bn) = stats(b, m, runs.1)?;
    let ratio = sb.median / sa.median;
    let beyond = if an > 1 && bn > 1 {
        sb.lowest > sa.highest || sb.highest < sa.lowest
    } else {
        (ratio - 1.0).abs() > SINGLE_RUN_NOISE
    };
    let up = ratio > 1.0;
    Some(Change {
        ratio,
        spread: (sb.lowest / sa.highest, sb.highest / sa.lowest),
        verdict: (beyond && !offered).then_some(up == *higher),
        rounds: None,
    })
}

/// Throughput that the offered rate set on both sides (`metric::throughput_offered`): no change
/// to call, whatever the rounds say.
fn offered_both(a: &[&Cell], b: &[&Cell], m: &Metric) -> bool {
    m.name == metric::THROUGHPUT.name && a.iter().chain(b).all(|c| metric::throughput_offered(c))
}

/// B against A where both ran in one paired run (`bench --baseline` of a `paired = true`
/// experiment: the two servers measured in the same round, one right after the other): the
/// ratio of each round, their median and range; beyond the noise when B moved the same way in
/// so many rounds that chance would do it less than one time in 20 (a sign test).
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
    let Spread {
        median: ratio,
        lowest: lo,
        highest: hi,
    } = spread(ratios)?;
    let sign = crate::bench::record::sign_test;
    let verdict = if offered_both(a, b, m) {
        None
    } else if sign(ups, n) < CHANCE {
        Some(*higher)
    } else if sign(n - ups, n) < CHANCE {
        Some(!*higher)
    } else {
        None
    };
    let better = if *higher { ups } else { n - ups };
    Some(Change {
        ratio,
        spread: (lo, hi),
        verdict,
        rounds: Some((better, n)),
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
