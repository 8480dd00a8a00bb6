//! A finding (p99, or capacity at the target) set against the queueing prediction
//! (`crate::queueing`): where the gap measured between two targets is the gap their designs'
//! queueing predicts, it is that queueing; where it is not, the rest is their implementations'
//! cost, and each target's measurement against its own prediction says whose.

use super::finding::Finding;
use super::metric::Metric;
use crate::bench::record::{median, Cell};

/// A measured ratio between two targets this close to the predicted one is that queueing (one
/// run's noise, as the verdict takes it).
const NOISE: f64 = super::SINGLE_RUN_NOISE;

/// `target`'s measured figure and its predicted one at `n` connections (medians over the
/// repeats; cells that starved connections do not count).
fn measured_and_predicted(cells: &[&Cell], m: &Metric, target: &str, n: usize) -> Option<(f64, f64)> {
    let at: Vec<&&Cell> = cells
        .iter()
        .filter(|c| c.target == target && c.connections == n && c.figures.starved_conns == 0)
        .collect();
    let measured: Vec<f64> = at.iter().filter_map(|c| m.value(c)).collect();
    let predicted: Vec<f64> = at.iter().filter_map(|c| m.predicted(c)).collect();
    if measured.is_empty() || predicted.is_empty() {
        return None;
    }
    Some((median(measured), median(predicted)))
}

/// The sentence for a finding of p99 (every request's) or of capacity at the target whose best
/// and runner-up both have a prediction; `None` otherwise.
pub(super) fn sentence(cells: &[&Cell], f: &Finding) -> Option<String> {
    if f.class.is_some() {
        return None;
    }
    let fig = f.metric();
    let n = f.connections;
    let (bm, bp) = measured_and_predicted(cells, fig, &f.best, n)?;
    let (rm, rp) = measured_and_predicted(cells, fig, &f.runner_up, n)?;
    // How many times better the best is than the runner-up, measured and as predicted.
    let better = |a: f64, b: f64| fig.better(a, b);
    let (measured, predicted) = (better(bm, rm), better(bp, rp));
    let own = |t: &str, m: f64, p: f64| format!("{t} measured {:.2}× its prediction", m / p);
    let each = format!("{}, {}", own(&f.best, bm, bp), own(&f.runner_up, rm, rp));
    if (measured / predicted - 1.0).abs() <= NOISE {
        return Some(format!(
            "Their queueing alone predicts {} {} and {} {} ({predicted:.2}×), as measured ({measured:.2}×): the gap is \
             the queueing their designs imply ({each}).",
            f.best,
            fig.whole(bp),
            f.runner_up,
            fig.whole(rp)
        ));
    }
    // Whose implementation moved the gap: the target further from its own prediction.
    let off = |m: f64, p: f64| (m / p).ln().abs();
    let whose = if off(bm, bp) >= off(rm, rp) {
        &f.best
    } else {
        &f.runner_up
    };
    let how = if measured > predicted {
        format!("the rest of the measured {measured:.2}× is their implementations' cost, mostly {whose}'s")
    } else {
        format!("their implementations' cost, mostly {whose}'s, narrows it to the measured {measured:.2}×")
    };
    Some(format!(
        "Their queueing alone predicts {} {} and {} {} ({predicted:.2}×); {how} ({each}).",
        f.best,
        fig.whole(bp),
        f.runner_up,
        fig.whole(rp)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::CellStatus;
    use crate::queueing::Prediction;

    fn cell(target: &str, measured: f64, predicted: Option<f64>) -> Cell {
        let mut c = Cell::new("e", target, 500, 0);
        c.status = CellStatus::Ok;
        c.figures.p99_us = measured;
        c.figures.predicted = predicted.map(|p| Prediction {
            p50_us: Some(p / 3.0),
            p99_us: Some(p),
            capacity_rps: 4000.0,
            throughput_rps: 2800.0,
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
        }
    }

    #[test]
    fn a_gap_the_prediction_shares_is_queueing_and_one_it_does_not_is_implementation() {
        let cells = [
            cell("thread", 4750.0, Some(4650.0)),
            cell("queue-pool", 5680.0, Some(5900.0)),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let s = sentence(&refs, &finding()).unwrap();
        assert!(
            s.contains("thread 4.65ms and queue-pool 5.90ms (1.27×), as measured (1.20×): the gap is the queueing")
                && s.contains("thread measured 1.02× its prediction, queue-pool measured 0.96× its prediction"),
            "{s}"
        );
        let cells = [
            cell("thread", 4750.0, Some(4650.0)),
            cell("queue-pool", 12_000.0, Some(5900.0)),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let s = sentence(&refs, &finding()).unwrap();
        assert!(
            s.contains("(1.27×); the rest of the measured 2.53× is their implementations' cost, mostly queue-pool's")
                && s.contains("queue-pool measured 2.03× its prediction"),
            "{s}"
        );
        // Capacity: the same prediction for both, 1.19× measured: implementation.
        let mut cap = cells.to_vec();
        for (c, measured) in cap.iter_mut().zip([17_500.0, 14_750.0]) {
            c.figures.capacity = Some(crate::load::slo::Capacity {
                slo: "p99<=10ms".into(),
                rps: Some(measured),
                low: None,
                high: None,
                probes: Vec::new(),
                inconclusive: None,
            });
            c.figures.predicted.as_mut().unwrap().capacity_rps = 19_531.0;
        }
        let refs: Vec<&Cell> = cap.iter().collect();
        let f = Finding {
            metric: "capacity at the target".into(),
            best: "thread".into(),
            runner_up: "queue-pool".into(),
            ..finding()
        };
        let s = sentence(&refs, &f).unwrap();
        assert!(
            s.contains("19,531 req/s (1.00×); the rest of the measured 1.19× is their implementations' cost, mostly queue-pool's")
                && s.contains("queue-pool measured 0.76× its prediction"),
            "{s}"
        );
        // A predicted gap the implementations narrow: said so, not called a "rest".
        let narrow = [
            cell("thread", 4750.0, Some(2000.0)),
            cell("queue-pool", 5680.0, Some(6000.0)),
        ];
        let refs: Vec<&Cell> = narrow.iter().collect();
        let s = sentence(&refs, &finding()).unwrap();
        assert!(
            s.contains("(3.00×); their implementations' cost, mostly thread's, narrows it to the measured 1.20×"),
            "{s}"
        );
        // One target without a prediction: nothing to say.
        let cells = [cell("thread", 4750.0, Some(4650.0)), cell("queue-pool", 5680.0, None)];
        let refs: Vec<&Cell> = cells.iter().collect();
        assert_eq!(sentence(&refs, &finding()), None);
    }
}
