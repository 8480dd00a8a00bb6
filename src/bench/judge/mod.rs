//! `bench::judge`: what the record's cells say. Every figure is read through one [`Metric`]
//! (`metric`: its name, unit, direction, and which cells it may rank); `ranking` ranks targets
//! on one metric beyond the noise; `verdict` turns the findings (`finding`) into an
//! experiment's verdict, with the *why* from the counters (`reasons`), the A/A figure (`aa`),
//! the request classes (`classes`), the shapes the scenario promises (`expect`), the
//! prediction beside the measurement (`against_prediction`), a keyed store's locks and hops
//! (`contention`) and, across experiments, the
//! shapes of one load (`shapes`) and each product beside its model (`fidelity`); per cell, what bound it (`bound`) and where its requests'
//! time went (`card`).
//!
//! A new metric goes in `metric`, a new verdict rule in `verdict` (or a file of its own beside
//! it), a new figure in `bench::record`. The judge reads the record and never runs anything.
//!
//! Beside those: what a verdict is worked out against (`context`), and every verdict of a run
//! (`judged`).

mod aa;
mod against_prediction;
#[cfg(test)]
mod behind_tests;
pub mod bound;
pub mod card;
mod classes;
mod contention;
mod context;
pub mod expect;
pub mod fidelity;
pub mod finding;
pub mod headline;
pub mod interval;
mod judged;
pub mod metric;
mod ranking;
mod reasons;
#[cfg(test)]
mod rounds_tests;
mod shapes;
#[cfg(test)]
mod tests;
mod verdict;

/// A cell seen through one request class (its latency figures the class's).
pub(crate) use classes::as_class;
pub use classes::view as class_view;
pub use context::Context;
pub use finding::{AaFigure, Finding, Reason};
pub use interval::MARGIN;
pub use judged::{all, judged, verdicts};
pub use metric::{Metric, Unranked};
pub use shapes::NAME as ACROSS_SHAPES;
#[cfg(test)]
pub(crate) use verdict::verdict;
pub use verdict::{verdict_with, Verdict};
