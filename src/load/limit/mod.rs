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

mod client;
mod held;

pub use client::{ClientLimit, BUSY, TURNAROUND};
pub use held::{completed_schedule, of_hold, COMPLETED_SHARE};
