//! The client's limit in a run whose latency target held: it did not complete what its
//! schedule called for before the window's close less the bound, so it did not offer the rate.

use super::ClientLimit;
use crate::load::Results;

/// Completed under this share of what the schedule called for before the window's close less
/// the bound while the target held: the client did not offer the rate (requests younger than
/// the bound at the close are in flight, not missing; 2 % allows for the Poisson schedule's
/// count in the last bound's time).
pub const COMPLETED_SHARE: f64 = 0.98;

/// A latency target whose tightest bound is `bound_us` held in the run with `results`: the
/// client's limit where it completed under [`COMPLETED_SHARE`] of what its schedule called
/// for before the close less the bound.
pub fn of_hold(r: &Results, bound_us: f64) -> Option<ClientLimit> {
    let open = r.open_loop.as_ref()?;
    let window_us = r.duration_s * 1e6;
    // Before the close less the bound: the schedule's share of the window then (Poisson
    // counts vary around it by far less than the 2 % allowed).
    let before = ((window_us - bound_us) / window_us).clamp(0.0, 1.0);
    let due = match open.scheduled.filter(|n| *n > 0) {
        Some(n) => n as f64 * before,
        None => open.offered_rps * r.duration_s * before,
    };
    ((r.requests as f64) < due * COMPLETED_SHARE).then_some(ClientLimit::Short {
        completed: r.requests,
        due: due.round() as u64,
    })
}

/// Whether an open loop over a duration completed what it scheduled, requests in flight at
/// the close aside: the [`of_hold`] rule with the run's mean latency as the
/// bound (`None`: not an open loop over a duration, or no latency).
pub fn completed_schedule(r: &Results) -> Option<bool> {
    r.open_loop.as_ref()?.scheduled?;
    let mean = r.latency_us.mean?;
    Some(of_hold(r, mean).is_none())
}
