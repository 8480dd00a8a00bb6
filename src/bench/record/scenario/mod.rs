//! Scenarios: TOML files, one matrix per `[[experiment]]`: models (with serve flags) and peers
//! × connection counts × repeats, under one workload. Built-in ones are compiled in.
//!
//! A scenario file (`file`) and its experiments (`experiment`), read and checked (`check`,
//! errors pointing at their line by `origin`, `axes` expanded first), with what its entries
//! say: the shapes an experiment expects (`expect`) and the peers it sets beside its models
//! (`peer`). What can be wrong with one is a [`ScenarioError`] (`error`; a model entry serve
//! would refuse is a [`BadEntry`], `entry`).

mod axes;
mod check;
#[cfg(test)]
mod check_tests;
mod entry;
mod error;
pub mod expect;
mod experiment;
mod file;
mod origin;
pub mod peer;

pub use axes::{AxisFault, BadAxis};
pub use entry::{BadEntry, EntryFault};
pub use error::{BadScenario, ScenarioError, ScenarioFault};

pub(in crate::bench) use check::serve_line;
pub use check::{check, load, parse};
#[cfg(test)]
pub(crate) use check::{experiment_expecting, experiment_of};
pub use experiment::{model_name, rate_of, BadRateOf, Experiment, Protocol, Published, RateOfFault, SERIES_INTERVAL};
pub use file::{Scenario, Unsteerable, BUILTIN, ROUNDS};
