//! Running one cell alone: the target's server started for it, one load run against it, the
//! server stopped; or, with a latency target, a capacity search (`capacity`).

use std::sync::atomic::AtomicU64;
use std::time::Instant;

use super::capacity::run_search;
use super::standing::Standing;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::Cell;
use crate::bench::setup::Placement;
use crate::bench::{At, Target};

/// Runs the cell `at`: the target's server started for it alone. `stop_flag` (Ctrl-C)
/// interrupts it: the load is stopped and the cell is recorded as interrupted.
pub fn run_cell(at: At, x: &Experiment, target: &Target, place: &Placement, stop_flag: &AtomicU64) -> Cell {
    if x.load.slo.is_some() {
        return run_search(at, x, target, place, stop_flag);
    }
    let started = Instant::now();
    let mut server = Standing::start(x, target, place);
    let mut cell = server.burst(at, x, stop_flag);
    server.stop(&mut [&mut cell]);
    cell.seconds = started.elapsed().as_secs_f64();
    cell
}
