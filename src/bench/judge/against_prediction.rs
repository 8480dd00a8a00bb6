//! A finding (p99, a class's p99, or capacity at the target) set against the queueing
//! prediction (`crate::queueing`): where the gap their designs' queueing predicts lies inside
//! the interval the rounds measured, the gap is that queueing; where the designs predict no
//! difference (within 5 %), that is said, and whether the rounds found one; where the
//! prediction lies outside the interval, the rest is what the model does not cover ("not
//! modelled"), or, where the design's CPU per request was not measured, that cost too. One
//! round is not judged: its figures are shown beside the prediction, and no cause is claimed.

use super::finding::Finding;
use super::interval::MARGIN;
use super::metric::Metric;
use crate::bench::record::{median, Cell};

/// What the simulation leaves out, in words, for a remainder it does not cover.
pub const NOT_MODELLED: &str =
    "wake-up latency and preemption, batching, locks, the kernel's network path and the client";

/// `target`'s measured figures and its predicted one at `n` connections (the measurements of
/// every repeat that may be ranked, the median prediction).
fn measured_and_predicted(cells: &[&Cell], m: &Metric, target: &str, n: usize) -> Option<(Vec<f64>, f64)> {
    let at: Vec<&&Cell> = cells
        .iter()
        .filter(|c| c.target == target && c.connections == n && super::metric::rankable(m, c, cells).ranked().is_some())
        .collect();
    let measured: Vec<f64> = at.iter().filter_map(|c| m.value(c)).collect();
    let predicted: Vec<f64> = at.iter().filter_map(|c| m.predicted(c)).collect();
    if measured.is_empty() || predicted.is_empty() {
        return None;
    }
    Some((measured, median(predicted)))
}

/// The sentence for a finding of p99 (every request's or a class's: `cells` are then the
/// class's view) or of capacity at the target whose best and runner-up both have a prediction;
/// `None` otherwise.
pub(super) fn sentence(cells: &[&Cell], f: &Finding) -> Option<String> {
    let fig = f.metric();
    let n = f.connections;
    let (bv, bp) = measured_and_predicted(cells, fig, &f.best, n)?;
    let (rv, rp) = measured_and_predicted(cells, fig, &f.runner_up, n)?;
    let (bm, rm) = (median(bv), median(rv));
    // How many times better the best is than the runner-up, measured and as predicted.
    let better = |a: f64, b: f64| fig.better(a, b);
    // The measured gap as the rounds give it (their geometric mean), or the one round's.
    let (measured, predicted) = (f.interval.map_or(better(bm, rm), |i| i.ratio), better(bp, rp));
    let own = |t: &str, m: f64, p: f64| format!("{t} measured {:.2}× its prediction", m / p);
    let each = format!("{}, {}", own(&f.best, bm, bp), own(&f.runner_up, rm, rp));
    // Whether the prediction counted each design's own CPU per request.
    let costed = [&f.best, &f.runner_up].iter().all(|t| {
        cells
            .iter()
            .any(|c| &&c.target == t && c.figures.predicted.as_ref().is_some_and(|p| p.design_cpu_us.is_some()))
    });
    // Where the costs came from: each design's calibration (never the cell predicted).
    let calibrated = [&f.best, &f.runner_up].iter().all(|t| {
        cells
            .iter()
            .any(|c| &&c.target == t && c.figures.predicted.as_ref().is_some_and(|p| p.costs_from.is_some()))
    });
    let queueing = match (costed, calibrated) {
        (true, true) => "Their queueing, with each design's CPU per request from its calibration cell,",
        (true, false) => "Their queueing, with each design's measured CPU per request,",
        (false, _) => "Their queueing alone",
    };
    // A capacity that is the CPUs over the cost is a cost bound, said so.
    let bound = fig.name == super::metric::CAPACITY.name
        && [&f.best, &f.runner_up].iter().all(|t| {
            cells
                .iter()
                .any(|c| &&c.target == t && c.figures.predicted.as_ref().is_some_and(|p| p.capacity_cost_bound))
        });
    let queueing = match bound {
        true => "Their cost bound (the CPUs over each design's calibrated CPU per request, not a queueing result)",
        false => queueing,
    };
    let predicts = format!(
        "{queueing} predicts {} {} and {} {}",
        f.best,
        fig.whole(bp),
        f.runner_up,
        fig.whole(rp)
    );
    let within = f.confidence();
    // Whose measurement is further from its own prediction.
    let off = |m: f64, p: f64| (m / p).ln().abs();
    let whose = if off(bm, bp) >= off(rm, rp) {
        &f.best
    } else {
        &f.runner_up
    };
    let rest = match costed {
        true => format!("not modelled ({NOT_MODELLED}), mostly {whose}'s"),
        false => format!("their implementations' cost and what is not modelled, mostly {whose}'s"),
    };
    // The designs predicted equal (within 5 %), either way; the measured gap judged by its
    // rounds' interval; one round is shown, not judged.
    let equal = predicted.max(1.0 / predicted) <= MARGIN;
    let said = match f.interval {
        None if f.counts.is_none() && f.rounds <= 1 => format!(
            "{predicts} ({predicted:.2}×); the one round measured {measured:.2}× ({within})"
        ),
        None if f.counts.is_none() => format!("{predicts} ({predicted:.2}×); measured {measured:.2}× ({within})"),
        Some(i) if equal && i.within_margin() => format!(
            "{predicts}: the queueing predicts no difference, and none beyond 5 % was measured ({measured:.2}×; {within})"
        ),
        _ if equal && !f.clear => format!(
            "{predicts}: the queueing predicts no difference, and the rounds do not separate them ({measured:.2}×; {within})"
        ),
        _ if equal => format!("{predicts}: the queueing predicts no difference; the measured {measured:.2}× is {rest} ({within})"),
        Some(i) if f.clear && (i.low..=i.high).contains(&predicted) => format!(
            "{predicts} ({predicted:.2}×), as measured ({measured:.2}×; {within}): the gap is the queueing their designs imply"
        ),
        Some(i) if (i.low..=i.high).contains(&predicted) => format!(
            "{predicts} ({predicted:.2}×), inside what the rounds measured ({measured:.2}×; {within}), which do not separate them"
        ),
        _ if predicted < 1.0 => {
            format!("{predicts} ({predicted:.2}×: the other way round); the measured {measured:.2}× is {rest} ({within})")
        }
        _ if measured > predicted => {
            format!("{predicts} ({predicted:.2}×); the rest of the measured {measured:.2}× is {rest} ({within})")
        }
        _ => format!("{predicts} ({predicted:.2}×); {rest} narrows it to the measured {measured:.2}× ({within})"),
    };
    Some(format!("{said} ({each})."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::judge::interval::Interval;
    use crate::bench::record::CellStatus;
    use crate::queueing::Prediction;

    fn cell(target: &str, measured: f64, predicted: Option<f64>) -> Cell {
        let mut c = Cell::new("e", target, 500, 0);
        c.status = CellStatus::Ok;
        c.figures.p99_us = Some(measured);
        c.figures.requests = 10_000;
        c.figures.predicted = predicted.map(|p| Prediction {
            p50_us: Some(p / 3.0),
            p99_us: Some(p),
            mean_us: None,
            capacity_rps: 4000.0,
            throughput_rps: 2800.0,
            classes: Vec::new(),
            design_cpu_us: Some(20.0),
            slice_us: Some(1500.0),
            capacity_cost_bound: false,
            costs_from: None,
            store_p99_us: None,
        });
        c
    }

    /// A finding of thread over queue-pool, clear or not, with its rounds' interval (`None`:
    /// one round).
    fn finding(interval: Option<(f64, f64, f64)>, clear: bool) -> Finding {
        Finding {
            metric: "p99 latency".into(),
            best: "thread".into(),
            runner_up: "queue-pool".into(),
            ratio: interval.map_or(1.2, |i| i.0),
            clear,
            best_value: 0.0,
            runner_up_value: 0.0,
            connections: 500,
            client_bound_cells: 0,
            last: None,
            behind: None,
            unranked: Vec::new(),
            class: None,
            placed: None,
            why: String::new(),
            counts: None,
            interval: interval.map(|(ratio, low, high)| Interval {
                rounds: 3,
                ratio,
                low,
                high,
            }),
            rounds: if interval.is_some() { 3 } else { 1 },
        }
    }

    fn said(cells: &[Cell], f: &Finding) -> String {
        let refs: Vec<&Cell> = cells.iter().collect();
        sentence(&refs, f).unwrap()
    }

    /// A predicted gap inside the rounds' interval is the queueing; one outside it is not
    /// modelled (or the implementations' cost, without each design's CPU per request); a
    /// predicted gap the measurement narrows is said so.
    #[test]
    fn a_predicted_gap_inside_the_rounds_interval_is_queueing_and_one_outside_is_not_modelled() {
        let pair = |qp: f64, qp_pred: f64| {
            [
                cell("thread", 4750.0, Some(4650.0)),
                cell("queue-pool", qp, Some(qp_pred)),
            ]
        };
        // Predicted 1.27×, measured 1.20× over rounds of 1.10–1.31×.
        let s = said(&pair(5680.0, 5900.0), &finding(Some((1.2, 1.1, 1.31)), true));
        assert!(
            s.contains("thread 4.65ms and queue-pool 5.90ms (1.27×), as measured (1.20×; 3 rounds, 1.10–1.31×): the gap is the queueing"),
            "{s}"
        );
        assert!(
            s.starts_with("Their queueing, with each design's measured CPU per request, predicts"),
            "{s}"
        );
        // The same prediction against 2.5× measured over 2.3–2.7×: the rest is not modelled.
        let s = said(&pair(12_000.0, 5900.0), &finding(Some((2.5, 2.3, 2.7)), true));
        assert!(
            s.contains("(1.27×); the rest of the measured 2.50× is not modelled (wake-up latency")
                && s.contains("mostly queue-pool's")
                && s.contains("queue-pool measured 2.03× its prediction"),
            "{s}"
        );
        // Without the design's CPU per request the rest is its cost too.
        let mut bare = pair(12_000.0, 5900.0);
        for c in &mut bare {
            c.figures.predicted.as_mut().unwrap().design_cpu_us = None;
        }
        let s = said(&bare, &finding(Some((2.5, 2.3, 2.7)), true));
        assert!(
            s.starts_with("Their queueing alone predicts")
                && s.contains("implementations' cost and what is not modelled"),
            "{s}"
        );
        // Predicted 3×, measured 1.2× over 1.1–1.31×: the measurement narrows it.
        let s = said(
            &[
                cell("thread", 4750.0, Some(2000.0)),
                cell("queue-pool", 5680.0, Some(6000.0)),
            ],
            &finding(Some((1.2, 1.1, 1.31)), true),
        );
        assert!(
            s.contains("(3.00×); not modelled") && s.contains("narrows it to the measured 1.20×"),
            "{s}"
        );
        // One target without a prediction: nothing to say.
        let cells = [cell("thread", 4750.0, Some(4650.0)), cell("queue-pool", 5680.0, None)];
        let refs: Vec<&Cell> = cells.iter().collect();
        assert_eq!(sentence(&refs, &finding(Some((1.2, 1.1, 1.31)), true)), None);
    }

    /// Two designs predicted equal are never given a queueing reason for a measured gap: where
    /// the rounds found none beyond 5 %, that is said; where they did, it is not modelled.
    #[test]
    fn designs_predicted_equal_are_said_to_have_no_queueing_difference() {
        let pair = |qp: f64| {
            [
                cell("thread", 5000.0, Some(5000.0)),
                cell("queue-pool", qp, Some(5000.0)),
            ]
        };
        let s = said(&pair(5150.0), &finding(Some((1.01, 0.98, 1.04)), false));
        assert!(
            s.contains(
                "the queueing predicts no difference, and none beyond 5 % was measured (1.01×; 3 rounds, 0.98–1.04×"
            ),
            "{s}"
        );
        // An interval reaching past 5 % does not say there is none: only that the rounds do
        // not separate them.
        let s = said(&pair(5150.0), &finding(Some((1.03, 0.98, 1.08)), false));
        assert!(
            s.contains("predicts no difference, and the rounds do not separate them (1.03×; 3 rounds, 0.98–1.08×"),
            "{s}"
        );
        assert!(!s.contains("the gap is the queueing"), "{s}");
        let s = said(&pair(9000.0), &finding(Some((1.8, 1.6, 2.0)), true));
        assert!(
            s.contains("the queueing predicts no difference; the measured 1.80× is not modelled"),
            "{s}"
        );
    }

    /// One round is shown beside the prediction and never judged: no cause is claimed.
    #[test]
    fn one_round_is_shown_beside_the_prediction_and_not_judged() {
        let one = [
            cell("thread", 5000.0, Some(5000.0)),
            cell("queue-pool", 7500.0, Some(5000.0)),
        ];
        let s = said(&one, &finding(None, false));
        assert!(
            s.contains("the one round measured 1.50× (one round: not judged)"),
            "{s}"
        );
        assert!(
            !s.contains("not modelled") && !s.contains("the gap is the queueing"),
            "{s}"
        );
    }
}
