//! `--slo`: the highest open-loop rate at which a latency target ([`Slo`](crate::load::Slo)) holds. Probes at
//! rising rates (each a run of its own: its warm-up, its histogram, its not-completed requests
//! counted), then bisection until the bracket is within 2 %, then a re-check of both ends with
//! longer windows, within `--slo-time` ([`search`]). Each probe is judged on what it measured
//! ([`judge`]): errors and refusals fail it, a bound with too few samples says nothing, a miss
//! is the server's unless the client's lateness accounts for it ([`ClientLimit`](crate::load::ClientLimit)).
//! [`Search::drive`] is the one probe loop: `muxlab load --slo` drives it with runs from here,
//! bench with bursts against the server it started.

mod capacity;
mod judge;
mod probe;
mod runner;
mod search;

pub use capacity::{describe, Capacity};
pub use judge::{judge, unreachable};
pub use probe::{probe_warmup, Nothing, Probe, PROBE, PROBE_WARMUP};
pub use runner::{class_share, run};
pub use search::{Plan, Probed, Search, Searched, NARROW, RECHECK};

#[cfg(test)]
mod tests;
