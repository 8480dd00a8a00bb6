//! What one unit of a counter costs the server in CPU, as a run recorded it (measured by
//! `bench::setup::unit_costs` on the server's CPU): a verdict's *why* weighs a counter's difference
//! with it, and names the counter only if that accounts for a real share of the gap it
//! explains.

use serde::{Deserialize, Serialize};

/// CPU cost of one unit of each priced counter, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UnitCosts {
    pub syscall_us: f64,
    pub context_switch_us: f64,
    /// Measured on this run's server CPU (`false`: [`UnitCosts::DOCUMENTED`]).
    pub measured: bool,
}

impl UnitCosts {
    /// For results written before the costs were measured: the dev machine's (a 2-vCPU KVM
    /// guest, Linux 6.x), measured by `bench::setup::unit_costs` on 2026-11-24.
    pub const DOCUMENTED: UnitCosts = UnitCosts {
        syscall_us: 0.27,
        context_switch_us: 4.0,
        measured: false,
    };
}

/// A loopback round trip as a run measured it (`bench::setup::unit_costs::round_trip`): its mean
/// (µs) between the client's and the server's CPUs, and the client thread's CPU per round
/// trip (µs), the least a request's time outside the server can be.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoundTrip {
    pub us: f64,
    pub client_cpu_us: f64,
}
