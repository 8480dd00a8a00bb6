//! When requests are sent: closed loop, closed loop with think time, or open loop at a rate.

use std::time::Duration;

/// The pacing of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Send the next request as soon as a response arrives (wrk, ab).
    Closed,
    /// Wait this long after each response before the next request, per connection (seed 003).
    Think(Duration),
    /// Open loop: this many requests per second overall, on schedule whatever the latency;
    /// latency counts from the scheduled time (coordinated-omission-correct).
    Rate(f64),
}

impl Pacing {
    pub fn describe(&self) -> String {
        match self {
            Pacing::Closed => "closed loop".into(),
            Pacing::Think(d) => format!("closed loop, {} think time", crate::units::format_duration(*d)),
            Pacing::Rate(r) => format!("open loop at {r} req/s"),
        }
    }
}
