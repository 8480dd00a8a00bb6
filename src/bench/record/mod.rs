//! `bench::record`: what a bench run is and what it measured, as data. The scenario and its
//! reader (`scenario`, `check`, `axes`), one record per cell (`cell`: its status and
//! figures), how a cell's figures are derived from the load's document and the server's
//! samples (`figures`), where its time went as raw figures (`why`), the repeats taken together
//! (`repeats`), the peers an experiment may set beside its models (`peer`), the unit costs of a syscall and a context switch (`costs`), and the results
//! files (`results`).
//!
//! Nothing here judges or measures: the verdicts a [`Results`] holds are handed to it by its
//! caller (`bench::judge` works them out), and the unit costs it records were measured by the
//! run (`bench::unit_costs`). The record imports neither the judge nor the run; beside the
//! layers below, it uses bench's error type (`bench::error`, shared by the three rooms).

mod axes;
mod cell;
mod check;
#[cfg(test)]
mod check_tests;
pub mod costs;
pub mod expect;
mod figures;
pub mod peer;
mod repeats;
pub mod results;
pub mod scenario;
mod why;

pub use cell::{Cell, CellStatus, ClassFigure, CpuSource, Figures, LockFigures, StreamFigures, TWIN};
pub(in crate::bench) use check::serve_line;
pub(in crate::bench) use figures::{counters, figures, Samples};
pub use repeats::{
    drift, in_round, median, relative_spread, sign_test, spread, summarize, within_rounds, Spread, Summary, CHANCE,
};
pub use results::{Environment, HostsEnvironment, Results, FORMAT};
pub use why::Why;
