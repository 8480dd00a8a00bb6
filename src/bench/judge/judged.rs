//! Every verdict of a run: each experiment's, the shapes across them where the scenario asks,
//! and the fidelity verdict where a product ran beside its model; a run's results judged anew.

use super::context::Context;
use super::verdict::{verdict_with, Verdict};
use super::{fidelity, shapes};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Cell, Results};

/// Every experiment's verdict, with `shapes` (a scenario's `compare_shapes`) the verdict
/// across them, and where a product ran beside the model that stands for it, the fidelity
/// verdict.
pub fn all(experiments: &[Experiment], cells: &[Cell], ctx: &Context, shapes: bool) -> Vec<Verdict> {
    let mut v: Vec<Verdict> = experiments.iter().map(|x| verdict_with(x, cells, ctx)).collect();
    if shapes {
        v.extend(shapes::verdict(experiments, cells, ctx.server_cpus));
    }
    v.extend(fidelity::verdict(experiments, cells).map(|f| Verdict {
        experiment: fidelity::NAME.to_string(),
        text: f.text,
        findings: Vec::new(),
        reasons: Vec::new(),
        aa: None,
        expected: Vec::new(),
        headline: f.headline,
        table: Vec::new(),
        fidelity: f.rows,
    }));
    v
}

/// The verdicts of a run's results, as its environment says to work them out.
pub fn verdicts<V>(r: &Results<V>) -> Vec<Verdict> {
    all(
        &r.scenario.experiments,
        &r.cells,
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
