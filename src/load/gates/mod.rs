//! Pass/fail gates on a run's result (`load --fail-if 'p99>10ms,errors>0.1%,rps<5000'`): each
//! gate names a figure, a direction and a bound; a gate fails when the figure crosses its
//! bound, or when the figure was not measured (no latency to hold to a bound is not a pass).
//! A gate may name a request class of `--mix` (`short:p99>5ms`). Where gates are given they
//! alone decide the exit: 0 when all hold, 3 with the failed ones named.

mod gate;
mod judge;

pub use gate::{BadGate, Figure, Gate, GateFault, Gates, Judged, Quantile, UnknownClass};
pub use judge::{judge_all, judged, measured};
