//! The plan of a run: its cells in order ([`Step`]) in rounds, every target of each experiment
//! once in each (with a baseline, each model twice; the first model again as the A/A twin where
//! the experiment has two targets or more), each design's calibration first, and a guess of a
//! cell's length for the ETA.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::options::Options;
use super::predict::calibration;
use super::record::scenario::{Experiment, Scenario};
use super::target::Target;

/// The targets of an experiment (with a baseline, each model twice in a row).
pub(super) fn targets(x: &Experiment, external: Option<SocketAddr>, baseline: Option<&PathBuf>) -> Vec<Target> {
    match external {
        Some(a) => vec![Target::External(a)],
        None => x
            .models
            .iter()
            .flat_map(|m| {
                let base = baseline.map(|b| Target::Baseline(m.clone(), b.clone()));
                std::iter::once(Target::Model(m.clone())).chain(base)
            })
            .chain(x.peers.iter().map(|p| Target::Peer(p.clone())))
            // Its first model twice in every round, A against A: the machine's noise (the twin
            // is no target of anyone's choosing, so it cannot be the steadiest).
            .chain(
                x.models
                    .first()
                    .filter(|_| x.has_twin())
                    .map(|m| Target::Twin(m.clone())),
            )
            .collect(),
    }
}

/// The order of `n` targets in round `r`: rotated by `r`, and reversed in every odd round.
/// The targets the run's Prometheus scrapes (`prometheus = true`): each experiment's models and
/// their A/A twins, by experiment and label. The baseline binary may predate `--metrics`: not
/// scraped.
pub(super) fn scraped(sc: &Scenario, opts: &Options) -> Vec<(String, String)> {
    sc.experiments
        .iter()
        .flat_map(|x| {
            targets(x, opts.target, opts.baseline.as_ref())
                .into_iter()
                .filter(|t| matches!(t, Target::Model(_) | Target::Twin(_)))
                .map(|t| (x.name.clone(), t.label()))
        })
        .collect()
}

pub(super) fn round_order(n: usize, r: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).map(|i| (i + r) % n.max(1)).collect();
    if r % 2 == 1 {
        order.reverse();
    }
    order
}

/// The longest run `bench` starts without `--yes-long`: a day.
pub const LONGEST: Duration = Duration::from_secs(24 * 3600);

/// How many cells `plan` would make of `sc`, and about how long they take (each its
/// [`guess`]), counted without making them: a scenario of a million rounds is refused on
/// this, before anything is allocated or started.
pub(super) fn estimate(sc: &Scenario, opts: &Options) -> (u128, Duration) {
    let mut cells: u128 = 0;
    let mut secs: f64 = 0.0;
    for x in &sc.experiments {
        let ts = targets(x, opts.target, opts.baseline.as_ref());
        let models = ts
            .iter()
            .filter(|t| matches!(t, Target::Model(_) | Target::Baseline(..)))
            .count() as u128;
        let calibrations = match calibration::wanted(x) && x.calibrate_by.is_none() {
            true => models,
            false => 0,
        };
        let n = calibrations + x.connections.len() as u128 * x.rounds(sc.repeats) as u128 * ts.len() as u128;
        cells += n;
        secs += n as f64 * guess(x).as_secs_f64();
    }
    (cells, Duration::from_secs_f64(secs.min(1e12)))
}

/// A guess of a cell's length, for the ETA before any cell finished.
pub(super) fn guess(x: &Experiment) -> Duration {
    // A capacity search takes about its budget.
    if x.load.slo.is_some() {
        return x.load.slo_time + Duration::from_secs(2);
    }
    x.duration().unwrap_or(Duration::from_secs(5)) + x.warmup() + Duration::from_millis(700)
}

/// One cell to run: experiment `xi`, its target `ti`, a connection count, a repeat.
pub(super) struct Step {
    pub(super) xi: usize,
    pub(super) ti: usize,
    pub(super) target: Target,
    pub(super) conns: usize,
    pub(super) repeat: usize,
    /// A calibration cell (`calibration`): the design under lighter load, for its predictions.
    pub(super) calibration: bool,
}

/// The run's cells in order: per experiment and connection count, round after round, every
/// target once in each; the order rotates by one target from round to round and is reversed
/// every other round, so the machine's drift over a run falls on every target alike.
pub(super) fn plan(sc: &Scenario, opts: &Options) -> Vec<Step> {
    let mut steps = Vec::new();
    for (xi, x) in sc.experiments.iter().enumerate() {
        let ts = targets(x, opts.target, opts.baseline.as_ref());
        // Each model's calibration first (at the first connection count), so every cell of the
        // experiment is predicted from it.
        if calibration::wanted(x) && x.calibrate_by.is_none() {
            let models = ts
                .iter()
                .enumerate()
                .filter(|(_, t)| matches!(t, Target::Model(_) | Target::Baseline(..)));
            steps.extend(models.map(|(ti, t)| Step {
                xi,
                ti,
                target: t.clone(),
                conns: x.connections[0],
                repeat: 0,
                calibration: true,
            }));
        }
        for &conns in &x.connections {
            for repeat in 0..x.rounds(sc.repeats) {
                let order = round_order(ts.len(), repeat);
                steps.extend(order.into_iter().map(|ti| Step {
                    xi,
                    ti,
                    target: ts[ti].clone(),
                    conns,
                    repeat,
                    calibration: false,
                }));
            }
        }
    }
    steps
}
