//! "The client was the limit": the one definition, read by the capacity search (`slo`), the
//! document's `client_saturated`, and through it every bench cell's `client_bound` and the
//! verdicts. A run whose client was the limit says as much about the client as about the server:
//! its throughput and latency are not the server's alone.
//!
//! The client is the limit when:
//! - its CPUs were at least [`BUSY`] busy (any run);
//! - against a latency target, its send lag p99 was over [`LATE_SHARE`] of the tightest bound:
//!   its pacing, not the rate's, shaped the arrivals;
//! - against a latency target that held, it completed under [`COMPLETED_SHARE`] of what its
//!   schedule called for (it did not offer the rate the target held at).

use super::document::Results;
use crate::units::fmt_us;

/// The client's CPUs at least this busy: its own work, not the server, may set the pace (a
/// thread that is busy 90 % of the time queues its sends and reads behind each other).
pub const BUSY: f64 = 0.90;

/// Sent late by more than this share of the tightest latency bound: the lateness alone eats a
/// quarter of the target, so the arrivals the server saw were the client's, not the rate's.
pub const LATE_SHARE: f64 = 0.25;

/// Completed under this share of what the schedule called for while the target held: the
/// client did not offer the rate (2 % allows for requests in flight at the window's close).
pub const COMPLETED_SHARE: f64 = 0.98;

/// Why the client was the limit.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientLimit {
    /// Its CPUs were this busy (a share, ≥ [`BUSY`]).
    Busy(f64),
    /// Its send lag p99 (µs) was over [`LATE_SHARE`] of the target.
    Behind(f64),
    /// It completed under [`COMPLETED_SHARE`] of its schedule while the target held.
    Short,
}

impl ClientLimit {
    /// A client that used `utilization` of its CPUs: the limit where that is [`BUSY`] or more.
    pub fn busy(utilization: f64) -> Option<ClientLimit> {
        (utilization >= BUSY).then_some(ClientLimit::Busy(utilization))
    }

    /// Whether the client of a run with `results` was the limit, against a latency target whose
    /// tightest bound is `bound_us` (`None`: no target, the CPU alone decides) that `held` or not.
    pub fn of(r: &Results, bound_us: Option<f64>, held: bool) -> Option<ClientLimit> {
        if let Some(busy) = ClientLimit::busy(r.client_cpu_utilization) {
            return Some(busy);
        }
        let bound = bound_us?;
        let open = r.open_loop.as_ref();
        if let Some(lag) = open.and_then(|o| o.send_lag_us.p99).filter(|l| *l > bound * LATE_SHARE) {
            return Some(ClientLimit::Behind(lag));
        }
        // Against what the schedule called for in the window (Poisson gaps vary that count),
        // else the offered rate.
        let short = match open.and_then(|o| o.scheduled).filter(|n| *n > 0) {
            Some(n) => (r.requests as f64) < n as f64 * COMPLETED_SHARE,
            None => open.is_some_and(|o| o.achieved_rps < o.offered_rps * COMPLETED_SHARE),
        };
        (held && short).then_some(ClientLimit::Short)
    }

    /// In words, as a probe's note says it.
    pub fn said(&self) -> String {
        match self {
            ClientLimit::Busy(u) => format!("the client's CPUs were {:.0}% busy", u * 100.0),
            ClientLimit::Behind(lag) => format!("the client fell behind its schedule (send lag p99 {})", fmt_us(*lag)),
            ClientLimit::Short => format!(
                "the client completed under {:.0}% of what its schedule called for",
                COMPLETED_SHARE * 100.0
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
