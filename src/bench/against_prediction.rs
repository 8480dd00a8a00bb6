//! A p99 finding set against the queueing prediction (`crate::queueing`): where both targets
//! measured what their designs imply, the gap between them is that queueing; where one measured
//! far more, the rest is its implementation's overhead, said with how much.

use super::results::{median, Cell};
use super::verdict::Finding;
use crate::units::fmt_us;

/// Measured within this share of the prediction (either way) agrees with it.
pub(super) const AGREES: f64 = 0.35;

/// `target`'s measured p99 and its predicted one at `n` connections (medians over the repeats;
/// cells that starved connections do not count).
fn measured_and_predicted(cells: &[&Cell], target: &str, n: usize) -> Option<(f64, f64)> {
    let at: Vec<&&Cell> = cells
        .iter()
        .filter(|c| c.target == target && c.connections == n && c.figures.starved_conns == 0)
        .collect();
    let measured: Vec<f64> = at.iter().map(|c| c.figures.p99_us).filter(|v| *v > 0.0).collect();
    let predicted: Vec<f64> = at.iter().filter_map(|c| c.figures.predicted?.p99_us).collect();
    if measured.is_empty() || predicted.is_empty() {
        return None;
    }
    Some((median(measured), median(predicted)))
}

/// The sentence for a p99 finding (every request's) whose best and runner-up both have a
/// prediction; `None` otherwise.
pub(super) fn sentence(cells: &[&Cell], f: &Finding) -> Option<String> {
    if f.class.is_some() {
        return None;
    }
    let n = f.connections;
    let (bm, bp) = measured_and_predicted(cells, &f.best, n)?;
    let (rm, rp) = measured_and_predicted(cells, &f.runner_up, n)?;
    let agrees = |m: f64, p: f64| (m / p - 1.0).abs() <= AGREES;
    let head = format!(
        "Predicted by their queueing alone: {} {} and {} {}",
        f.best,
        fmt_us(bp),
        f.runner_up,
        fmt_us(rp)
    );
    if agrees(bm, bp) && agrees(rm, rp) {
        return Some(format!(
            "{head}; both measured within {:.0}% of it, so the gap is the queueing their designs imply.",
            AGREES * 100.0
        ));
    }
    let beyond: Vec<String> = [(&f.best, bm, bp), (&f.runner_up, rm, rp)]
        .iter()
        .filter(|(_, m, p)| !agrees(*m, *p))
        .map(|(t, m, p)| {
            if m > p {
                format!(
                    "{t} measured {:.1}× its prediction: {} beyond it is its implementation's overhead",
                    m / p,
                    fmt_us(m - p)
                )
            } else {
                format!(
                    "{t} measured {:.2}× its prediction (less than its queueing implies: the model misses something there)",
                    m / p
                )
            }
        })
        .collect();
    Some(format!("{head}; {}.", beyond.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::results::CellStatus;
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
    fn agreeing_measurements_are_the_queueing_and_a_far_larger_one_is_overhead() {
        let cells = [
            cell("thread", 4750.0, Some(4650.0)),
            cell("queue-pool", 5680.0, Some(5900.0)),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let s = sentence(&refs, &finding()).unwrap();
        assert!(
            s.contains("thread 4.65ms and queue-pool 5.90ms") && s.ends_with("the queueing their designs imply."),
            "{s}"
        );
        let cells = [
            cell("thread", 4750.0, Some(4650.0)),
            cell("queue-pool", 12_000.0, Some(5900.0)),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let s = sentence(&refs, &finding()).unwrap();
        assert!(
            s.contains("queue-pool measured 2.0× its prediction: 6.10ms beyond it is its implementation's overhead"),
            "{s}"
        );
        assert!(!s.contains("thread measured"), "{s}");
        // One target without a prediction: nothing to say.
        let cells = [cell("thread", 4750.0, Some(4650.0)), cell("queue-pool", 5680.0, None)];
        let refs: Vec<&Cell> = cells.iter().collect();
        assert_eq!(sentence(&refs, &finding()), None);
    }
}
