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

mod aa;
mod against_prediction;
pub mod bound;
pub mod card;
mod classes;
mod contention;
pub mod expect;
pub mod fidelity;
pub mod finding;
pub mod headline;
pub mod metric;
mod ranking;
mod reasons;
mod shapes;
#[cfg(test)]
mod tests;
mod verdict;

/// A cell seen through one request class (its latency figures the class's).
pub(crate) use classes::as_class;
pub use finding::{AaFigure, Finding, Reason, Verdict};
pub use metric::{Metric, Unranked};
pub use shapes::NAME as ACROSS_SHAPES;
#[cfg(test)]
pub(crate) use verdict::verdict;
pub use verdict::{verdict_with, SINGLE_RUN_NOISE};

use crate::bench::record::costs::UnitCosts;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Cell, Environment, Results};

/// What a verdict is worked out against besides the cells: what a syscall and a context
/// switch cost on the server's CPU, and how many CPUs the server had (`None`: not recorded).
#[derive(Debug, Clone, Copy)]
pub struct Context {
    pub costs: UnitCosts,
    pub server_cpus: Option<usize>,
    /// The CPUs of the targets serving on several threads, where they had others.
    pub threaded_cpus: Option<usize>,
}

impl Context {
    /// The documented unit costs, the server's CPUs not known.
    pub const DOCUMENTED: Context = Context {
        costs: UnitCosts::DOCUMENTED,
        server_cpus: None,
        threaded_cpus: None,
    };

    /// What a run's environment says: the unit costs it measured and the server's CPUs.
    pub fn of(env: &Environment) -> Context {
        Context {
            costs: env.unit_costs(),
            server_cpus: env.server_cpu_count(),
            threaded_cpus: env.threaded_cpu_count(),
        }
    }
}

/// Every experiment's verdict, with `shapes` (a scenario's `compare_shapes`) the verdict
/// across them, and where a product ran beside the model that stands for it, the fidelity
/// verdict.
pub fn all(experiments: &[Experiment], cells: &[Cell], repeats: usize, ctx: &Context, shapes: bool) -> Vec<Verdict> {
    let mut v: Vec<Verdict> = experiments
        .iter()
        .map(|x| verdict_with(x, cells, x.rounds(repeats), ctx))
        .collect();
    if shapes {
        v.extend(shapes::verdict(experiments, cells, ctx.server_cpus));
    }
    v.extend(fidelity::verdict(experiments, cells));
    v
}

/// The verdicts of a run's results, as its environment says to work them out.
pub fn verdicts<V>(r: &Results<V>) -> Vec<Verdict> {
    all(
        &r.scenario.experiments,
        &r.cells,
        r.scenario.repeats,
        &Context::of(&r.environment),
        r.scenario.compare_shapes,
    )
}

/// `r` with its verdicts worked out (a file's own are never read).
pub fn judged<V>(r: Results<V>) -> Results<Verdict> {
    let verdicts = verdicts(&r);
    Results {
        format: r.format,
        scenario: r.scenario,
        environment: r.environment,
        interrupted: r.interrupted,
        verdicts,
        cells: r.cells,
    }
}
