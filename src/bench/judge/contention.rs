//! A keyed store's contention, in the verdict: for each target that takes locks or sends
//! commands to another thread, what its counters measured (the share of lock acquisitions that
//! found the lock held, the mean wait and critical section of the one in 64 timed; the hops per
//! command) and how much of its predicted p99 the simulation puts on the lock or the hops (its
//! p99 less that of the same design without them): how much of a gap is contention.

use crate::bench::record::{median, Cell};
use crate::units::fmt_us;

/// The sentence for the cells of one experiment (`None`: no target took a lock or hopped).
pub(super) fn sentence(ok: &[&Cell]) -> Option<String> {
    let mut targets: Vec<&str> = Vec::new();
    for c in ok {
        if !targets.contains(&c.target.as_str()) {
            targets.push(&c.target);
        }
    }
    let parts: Vec<String> = targets.iter().filter_map(|t| of_target(ok, t)).collect();
    (!parts.is_empty()).then(|| format!("Contention: {}.", parts.join("; ")))
}

/// What `target`'s cells say of its lock or hops.
fn of_target(ok: &[&Cell], target: &str) -> Option<String> {
    let cells: Vec<&&Cell> = ok.iter().filter(|c| c.target == target).collect();
    let med = |f: &dyn Fn(&Cell) -> Option<f64>| {
        let xs: Vec<f64> = cells.iter().filter_map(|c| f(c)).collect();
        (!xs.is_empty()).then(|| median(xs))
    };
    let contended = med(&|c| Some(c.figures.locks?.contended));
    let hops = med(&|c| c.figures.hops_per_req.filter(|h| *h > 0.0));
    // A sharded store's locks are its shards', each taken by its owner: its hops are its
    // contention.
    let measured = match (contended, hops) {
        (_, Some(h)) => format!("{target} sent {h:.2} of its commands in 1 to another thread to run"),
        (Some(share), None) => {
            let wait = med(&|c| c.figures.locks?.wait_us);
            let hold = med(&|c| c.figures.locks?.hold_us);
            let timing = match (wait, hold) {
                (Some(w), Some(h)) => format!(" (a mean wait of {}, critical section {})", us(w), us(h)),
                _ => String::new(),
            };
            format!(
                "{target} found its lock held on {} of its acquisitions{timing}",
                share_pct(share)
            )
        }
        (None, None) => return None,
    };
    let store = med(&|c| c.figures.predicted.as_ref()?.store_p99_us);
    let p99 = med(&|c| c.figures.predicted.as_ref()?.p99_us);
    let what = if hops.is_none() { "the lock" } else { "the hops" };
    Some(match (store, p99) {
        (Some(s), Some(p)) => format!(
            "{measured}, and the simulation puts {} of its predicted p99 of {} on {what}",
            fmt_us(s),
            fmt_us(p)
        ),
        _ => measured,
    })
}

/// A share in per cent, small ones with the digits that say they are not none.
fn share_pct(v: f64) -> String {
    match v * 100.0 {
        0.0 => "none".into(),
        p if p < 0.001 => "under 0.001%".into(),
        p if p < 0.1 => format!("{p:.3}%"),
        p => format!("{p:.1}%"),
    }
}

/// A short time, as `fmt_us` writes longer ones: to two decimals under 10 µs.
fn us(v: f64) -> String {
    match v < 10.0 {
        true => format!("{v:.2}us"),
        false => fmt_us(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::{CellStatus, LockFigures};

    #[test]
    fn contention_names_the_measured_lock_waits_and_the_predicted_share_of_the_p99() {
        let mut locked = Cell::new("e", "queue-pool --store locked", 50, 0);
        locked.status = CellStatus::Ok;
        locked.figures.locks = Some(LockFigures {
            per_req: 1.0,
            contended: 0.125,
            hold_us: Some(0.3),
            wait_us: Some(0.8),
        });
        let mut p = crate::queueing::Prediction {
            p50_us: Some(100.0),
            p99_us: Some(210.0),
            mean_us: None,
            capacity_rps: 1e6,
            throughput_rps: 1e5,
            classes: Vec::new(),
            design_cpu_us: None,
            slice_us: None,
            capacity_cost_bound: false,
            costs_from: None,
            store_p99_us: Some(45.0),
        };
        locked.figures.predicted = Some(p.clone());
        let mut sharded = Cell::new("e", "multi-reactor --store sharded", 50, 0);
        sharded.figures.hops_per_req = Some(0.5);
        p.store_p99_us = None;
        sharded.figures.predicted = Some(p);
        let mut owned = Cell::new("e", "reactor", 50, 0);
        owned.figures.hops_per_req = Some(0.0);
        let s = sentence(&[&locked, &sharded, &owned]).unwrap();
        assert_eq!(
            s,
            "Contention: queue-pool --store locked found its lock held on 12.5% of its acquisitions \
             (a mean wait of 0.80us, critical section 0.30us), and the simulation puts 45us of its predicted p99 of 210us on the lock; \
             multi-reactor --store sharded sent 0.50 of its commands in 1 to another thread to run."
        );
        assert_eq!(sentence(&[&owned]), None, "no lock, no hop: nothing to say");
    }

    #[test]
    fn a_share_too_small_for_three_decimals_is_said_as_under_them_never_as_zero() {
        assert_eq!(share_pct(0.0), "none");
        assert_eq!(share_pct(1e-7), "under 0.001%");
        assert_eq!(share_pct(0.0004), "0.040%");
        assert_eq!(share_pct(0.125), "12.5%");
    }
}
