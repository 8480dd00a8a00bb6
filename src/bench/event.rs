//! What a run tells its caller as it goes ([`Event`]): the caller owns the terminal.

use std::path::Path;
use std::time::Duration;

use crate::bench::record::scenario::{Experiment, Scenario};
use crate::bench::record::Cell;

/// What a run tells its caller as it goes (the caller owns the terminal).
pub enum Event<'a> {
    /// The run starts: the scenario, its cells, where things run, where results go, and
    /// notes on what was set for the run.
    Started {
        scenario: &'a Scenario,
        cells: usize,
        /// About how long the run takes: its cells × (duration + warm-up + set-up).
        estimate: std::time::Duration,
        placement: String,
        dir: &'a Path,
        notes: &'a [String],
    },
    /// The cells of this experiment come next.
    Experiment(&'a Experiment),
    /// Cell `number` (from 0) of `of` starts; `left` guesses the rest of the run.
    Progress {
        number: usize,
        of: usize,
        experiment: &'a str,
        target: String,
        connections: usize,
        elapsed: Duration,
        left: Duration,
    },
    /// A cell finished.
    Cell(&'a Cell),
    /// The run ended: cells done of those planned, how long it took, how many failed or were
    /// skipped, and whether Ctrl-C cut it short (what finished is saved).
    Finished {
        done: usize,
        planned: usize,
        elapsed: Duration,
        failed: usize,
        skipped: usize,
        interrupted: bool,
    },
}
