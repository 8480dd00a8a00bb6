//! A finding (p99, a class's p99, or capacity at the target) set against the queueing
//! prediction (`crate::queueing`): where the gap measured between two targets is the gap their
//! designs' queueing predicts, within the noise, it is that queueing; where the designs predict
//! no difference, that is said; where the measurement leaves the prediction by more than the
//! noise, the rest is what the model does not cover ("not modelled"), or, where the design's
//! CPU per request was not measured, that cost too — never claimed beyond the spread.

use super::finding::Finding;
use super::metric::Metric;
use super::SINGLE_RUN_NOISE;
use crate::bench::record::{median, relative_spread, Cell};

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

/// The noise a gap must clear (a share): the wider of the two targets' spreads over their
/// repeats (largest ÷ smallest − 1); with one run each, the A/A difference where the run has
/// one (`aa_pct`), else one run's noise.
pub(super) fn noise(spreads: &[&[f64]], aa_pct: Option<f64>) -> f64 {
    let widest = spreads
        .iter()
        .filter_map(|v| relative_spread(v))
        .fold(None, |a: Option<f64>, s| Some(a.map_or(s, |a| a.max(s))));
    widest.unwrap_or_else(|| aa_pct.map_or(SINGLE_RUN_NOISE, |p| p / 100.0))
}

/// The sentence for a finding of p99 (every request's or a class's: `cells` are then the
/// class's view) or of capacity at the target whose best and runner-up both have a prediction;
/// `None` otherwise. `aa_pct`: the run's A/A difference, if any.
pub(super) fn sentence(cells: &[&Cell], f: &Finding, aa_pct: Option<f64>) -> Option<String> {
    let fig = f.metric();
    let n = f.connections;
    let (bv, bp) = measured_and_predicted(cells, fig, &f.best, n)?;
    let (rv, rp) = measured_and_predicted(cells, fig, &f.runner_up, n)?;
    let noise = noise(&[&bv, &rv], aa_pct);
    let (bm, rm) = (median(bv), median(rv));
    // How many times better the best is than the runner-up, measured and as predicted.
    let better = |a: f64, b: f64| fig.better(a, b);
    let (measured, predicted) = (better(bm, rm), better(bp, rp));
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
    let within = format!("the noise is {:.0}%", noise * 100.0);
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
    // The designs predicted equal: the simulation's own resolution (one run's noise), either
    // way; the measurement's noise is for the measured gap.
    let equal = predicted.max(1.0 / predicted) - 1.0 <= SINGLE_RUN_NOISE;
    let said = if equal {
        match measured - 1.0 <= noise {
            true => format!(
                "{predicts}: the queueing predicts no difference, and none beyond the noise was measured ({measured:.2}×; {within})"
            ),
            false => format!("{predicts}: the queueing predicts no difference; the measured {measured:.2}× is {rest} ({within})"),
        }
    } else if (measured / predicted - 1.0).abs() <= noise {
        format!("{predicts} ({predicted:.2}×), as measured ({measured:.2}×; {within}): the gap is the queueing their designs imply")
    } else if predicted < 1.0 {
        format!("{predicts} ({predicted:.2}×: the other way round); the measured {measured:.2}× is {rest} ({within})")
    } else if measured > predicted {
        format!("{predicts} ({predicted:.2}×); the rest of the measured {measured:.2}× is {rest} ({within})")
    } else {
        format!("{predicts} ({predicted:.2}×); {rest} narrows it to the measured {measured:.2}× ({within})")
    };
    Some(format!("{said} ({each})."))
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn finding() -> Finding {
        Finding {
            metric: "p99 latency".into(),
            best: "thread".into(),
            runner_up: "queue-pool".into(),
            ratio: 1.2,
            clear: true,
            best_value: 0.0,
            runner_up_value: 0.0,
            connections: 500,
            client_bound_cells: 0,
            last: None,
            unranked: Vec::new(),
            class: None,
            placed: None,
            why: String::new(),
            counts: None,
        }
    }

    fn said(cells: &[Cell], aa: Option<f64>) -> String {
        let refs: Vec<&Cell> = cells.iter().collect();
        sentence(&refs, &finding(), aa).unwrap()
    }

    #[test]
    fn a_gap_the_prediction_shares_within_the_noise_is_queueing_and_one_beyond_it_is_not_modelled() {
        let s = said(
            &[
                cell("thread", 4750.0, Some(4650.0)),
                cell("queue-pool", 5680.0, Some(5900.0)),
            ],
            None,
        );
        assert!(
            s.contains("thread 4.65ms and queue-pool 5.90ms (1.27×), as measured (1.20×; the noise is 10%): the gap is the queueing"),
            "{s}"
        );
        assert!(
            s.starts_with("Their queueing, with each design's measured CPU per request, predicts"),
            "{s}"
        );
        let s = said(
            &[
                cell("thread", 4750.0, Some(4650.0)),
                cell("queue-pool", 12_000.0, Some(5900.0)),
            ],
            None,
        );
        assert!(
            s.contains("(1.27×); the rest of the measured 2.53× is not modelled (wake-up latency")
                && s.contains("mostly queue-pool's")
                && s.contains("queue-pool measured 2.03× its prediction"),
            "{s}"
        );
        // Without the design's CPU per request the rest is its cost too.
        let mut bare = [
            cell("thread", 4750.0, Some(4650.0)),
            cell("queue-pool", 12_000.0, Some(5900.0)),
        ];
        for c in &mut bare {
            c.figures.predicted.as_mut().unwrap().design_cpu_us = None;
        }
        let s = said(&bare, None);
        assert!(
            s.starts_with("Their queueing alone predicts")
                && s.contains("implementations' cost and what is not modelled"),
            "{s}"
        );
        // A predicted gap the measurement narrows: said so.
        let s = said(
            &[
                cell("thread", 4750.0, Some(2000.0)),
                cell("queue-pool", 5680.0, Some(6000.0)),
            ],
            None,
        );
        assert!(
            s.contains("(3.00×); not modelled") && s.contains("narrows it to the measured 1.20×"),
            "{s}"
        );
        // One target without a prediction: nothing to say.
        let cells = [cell("thread", 4750.0, Some(4650.0)), cell("queue-pool", 5680.0, None)];
        let refs: Vec<&Cell> = cells.iter().collect();
        assert_eq!(sentence(&refs, &finding(), None), None);
    }

    /// Two designs predicted equal are never given a queueing reason for a measured gap (before:
    /// 1.03× apart was "the gap is the queueing their designs imply").
    #[test]
    fn designs_predicted_equal_are_said_to_have_no_queueing_difference() {
        let s = said(
            &[
                cell("thread", 5000.0, Some(5000.0)),
                cell("queue-pool", 5150.0, Some(5000.0)),
            ],
            None,
        );
        assert!(
            s.contains("the queueing predicts no difference, and none beyond the noise was measured (1.03×"),
            "{s}"
        );
        assert!(!s.contains("the gap is the queueing"), "{s}");
        let s = said(
            &[
                cell("thread", 5000.0, Some(5000.0)),
                cell("queue-pool", 9000.0, Some(5000.0)),
            ],
            None,
        );
        assert!(
            s.contains("the queueing predicts no difference; the measured 1.80× is not modelled"),
            "{s}"
        );
    }

    /// The noise is the repeats' spread, or the A/A difference with one run each, else one
    /// run's 10 %: a 1.15× gap against a predicted 1.00× is beyond 5 % of A/A and within a
    /// spread of 30 %.
    #[test]
    fn a_gap_is_beyond_the_prediction_only_beyond_the_spread() {
        let one = [
            cell("thread", 5000.0, Some(5000.0)),
            cell("queue-pool", 5750.0, Some(5000.0)),
        ];
        assert!(said(&one, Some(5.0)).contains("the measured 1.15× is not modelled"));
        assert!(
            said(&one, None).contains("the measured 1.15× is not modelled"),
            "over one run's 10 %"
        );
        let mut repeats = one.to_vec();
        for (r, v) in [(1, 6500.0), (2, 5000.0)] {
            let mut c = cell("thread", v, Some(5000.0));
            c.repeat = r;
            repeats.push(c);
        }
        let s = said(&repeats, None);
        assert!(
            s.contains("none beyond the noise") && s.contains("the noise is 30%"),
            "{s}"
        );
        assert!((noise(&[&[1.0, 1.2], &[2.0]], Some(3.0)) - 0.2).abs() < 1e-9);
        assert_eq!(noise(&[&[1.0], &[2.0]], Some(3.0)), 0.03);
        assert_eq!(noise(&[&[1.0], &[2.0]], None), SINGLE_RUN_NOISE);
    }
}
