//! "The client was the limit": the one definition, read by the capacity search (`slo`), the
//! document's `client_saturated`, and through it every bench cell's `client_bound` and the
//! verdicts. A run whose client was the limit says as much about the client as about the server:
//! its throughput and latency are not the server's alone.
//!
//! The client is the limit when:
//! - in a run with no latency target (a bench cell), its CPUs were at least [`BUSY`] busy, or,
//!   in a closed loop without think time, its own turnaround took at least [`TURNAROUND`] of
//!   each request's cycle (Little's law: connections ÷ throughput is a cycle, and what the
//!   latency does not cover of it is the client's own time);
//! - against a latency target that failed, its own lateness accounts for the miss (at the
//!   failing quantile, the latency less the send lag at that quantile is within the bound), or
//!   its CPUs were at least [`BUSY`] busy (a saturated client is late reading responses too, which
//!   no lag shows); otherwise the miss is the server's, however late the client was;
//! - against a latency target that held, it did not complete what its schedule called for
//!   before the window's close less the bound ([`COMPLETED_SHARE`]): it did not offer the rate.
//!
//! A busy or late client whose probe held is no limit: the latency counts from each request's
//! intended time, so the client's lateness is in it already, and the rate was offered.

use super::document::Results;
use crate::units::{fmt_us, thousands};

/// The client's CPUs at least this busy: its own work, not the server, may set the pace (a
/// thread that is busy 90 % of the time queues its sends and reads behind each other).
pub const BUSY: f64 = 0.90;

/// Completed under this share of what the schedule called for before the window's close less
/// the bound while the target held: the client did not offer the rate (requests younger than
/// the bound at the close are in flight, not missing; 2 % allows for the Poisson schedule's
/// count in the last bound's time).
pub const COMPLETED_SHARE: f64 = 0.98;

/// A closed loop whose client spends at least this share of each request's cycle
/// (connections ÷ throughput) outside the measured latency: its own turnaround paced it.
pub const TURNAROUND: f64 = 0.5;

/// Why the client was the limit.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientLimit {
    /// Its CPUs were this busy (a share, ≥ [`BUSY`]).
    Busy(f64),
    /// A closed loop without think time: of each request's cycle (µs), this much was the
    /// client's own turnaround (Little's law).
    Turnaround { cycle_us: f64, turnaround_us: f64 },
    /// Its send lag (µs) at the failing quantile accounts for the miss.
    Behind(f64),
    /// While the target held it completed `completed` of the `due` requests its schedule
    /// called for before the close less the bound.
    Short { completed: u64, due: u64 },
}

impl ClientLimit {
    /// A client that used `utilization` of its CPUs: the limit where that is [`BUSY`] or more.
    pub fn busy(utilization: f64) -> Option<ClientLimit> {
        (utilization >= BUSY).then_some(ClientLimit::Busy(utilization))
    }

    /// A closed loop without think time over `connections` at `throughput_rps` whose requests
    /// took `mean_us` on average: the client's where its own turnaround (the cycle less the
    /// latency) is at least [`TURNAROUND`] of the cycle.
    pub fn turnaround(connections: usize, throughput_rps: f64, mean_us: f64) -> Option<ClientLimit> {
        if throughput_rps <= 0.0 || connections == 0 {
            return None;
        }
        let cycle_us = connections as f64 / throughput_rps * 1e6;
        let turnaround_us = cycle_us - mean_us;
        (turnaround_us >= TURNAROUND * cycle_us).then_some(ClientLimit::Turnaround {
            cycle_us,
            turnaround_us,
        })
    }

    /// A latency bound of `max_us` missed at `measured_us`: the client's where its send lag at
    /// the same quantile (`lag_us`) accounts for the miss, else `None` (the server's).
    pub fn of_miss(measured_us: f64, lag_us: Option<f64>, max_us: f64) -> Option<ClientLimit> {
        let lag = lag_us?;
        (measured_us - lag <= max_us).then_some(ClientLimit::Behind(lag))
    }

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
    /// the close aside: the [`of_hold`](Self::of_hold) rule with the run's mean latency as the
    /// bound (`None`: not an open loop over a duration, or no latency).
    pub fn completed_schedule(r: &Results) -> Option<bool> {
        r.open_loop.as_ref()?.scheduled?;
        let mean = r.latency_us.mean?;
        Some(ClientLimit::of_hold(r, mean).is_none())
    }

    /// In words, as a probe's note says it.
    pub fn said(&self) -> String {
        match self {
            ClientLimit::Busy(u) => format!("the client's CPUs were {:.0}% busy", u * 100.0),
            ClientLimit::Turnaround {
                cycle_us,
                turnaround_us,
            } => format!(
                "the client's own turnaround {turnaround_us:.0} µs of each {cycle_us:.0} µs cycle (Little's law)"
            ),
            ClientLimit::Behind(lag) => format!(
                "the client fell behind its schedule: its send lag ({}) accounts for the miss",
                fmt_us(*lag)
            ),
            ClientLimit::Short { completed, due } => format!(
                "the client completed {} of the {} requests its schedule called for before the close less the bound",
                thousands(*completed),
                thousands(*due)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_at_exactly_the_busy_share_is_the_limit_and_one_below_is_not() {
        assert_eq!(ClientLimit::busy(BUSY), Some(ClientLimit::Busy(BUSY)));
        assert_eq!(ClientLimit::busy(BUSY - 0.001), None);
        assert_eq!(ClientLimit::Busy(0.95).said(), "the client's CPUs were 95% busy");
    }
}
