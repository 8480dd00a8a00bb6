//! [`ClientLimit`]: why the client was the limit, and the rules that read it from the client's
//! CPU use, a closed loop's turnaround and an open loop's send lag (the rule for a target that
//! held, which reads a run's results, is in `held`).

use crate::units::{fmt_us, thousands};

/// The client's CPUs at least this busy: its own work, not the server, may set the pace (a
/// thread that is busy 90 % of the time queues its sends and reads behind each other).
pub const BUSY: f64 = 0.90;

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
