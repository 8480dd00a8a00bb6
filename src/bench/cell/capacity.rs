//! A cell of an experiment with a latency target (`slo`): the capacity search of `load --slo`
//! run against one server, each probe a burst of its own (so the server is sampled over each
//! probe's window); the cell is the last probe that held, with the capacity and every probe.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::standing::Standing;
use crate::bench::predict::predicted;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Cell, CellStatus};
use crate::bench::setup::Placement;
use crate::bench::{At, Target};
use crate::load::slo::{class_share, judge, probe_warmup, unreachable, Probe, Probed, Search, PROBE};
use crate::units::thousands;

/// Runs the search for `target` at the cell `at`.
pub(super) fn run_search(at: At, x: &Experiment, target: &Target, place: &Placement, stop_flag: &AtomicU64) -> Cell {
    let started = Instant::now();
    let slo = x.load.slo.clone().expect("a search has a target");
    let window = x.load.duration.unwrap_or(PROBE);
    let warmup = probe_warmup(x.load.warmup);
    let search = Search::new(
        &slo,
        x.load.rate.map_or(1000.0, |r| r.per_s()),
        x.load.slo_time,
        window,
        warmup,
        class_share(&x.load),
    );
    let mut server = Standing::start(x, target, place);
    let place = &place.of_target(x, target);
    // The design's CPU per request at the lowest rate probed: what the prediction adds to the
    // work (at higher rates a design may batch more per wake-up, cheaper per request).
    let mut lowest: Option<(f64, f64)> = None;
    let found = search.drive(&slo, |plan| {
        let rate = plan.rate;
        let mut probe = x.clone();
        probe.load.rate = Some(rate.into());
        probe.load.slo = None;
        probe.load.duration = Some(plan.window);
        probe.load.warmup = warmup;
        let cell = server.burst(at, &probe, stop_flag);
        if let Some(cpu) = cell.figures.server_cpu_us_per_req.filter(|_| cell.ok()) {
            if lowest.is_none_or(|(r, _)| rate < r) {
                lowest = Some((rate, cpu));
            }
        }
        let stopped = stop_flag.load(Ordering::Relaxed) != 0 || cell.status == CellStatus::Interrupted;
        let judged = |doc| Probe {
            recheck: plan.recheck,
            ..judge(&slo, rate, doc)
        };
        match (&cell.status, &cell.load) {
            _ if stopped => Probed::Stopped("interrupted".to_string(), Some(cell)),
            (_, Some(doc)) if let Some(why) = unreachable(doc) => Probed::Stopped(why, Some(cell)),
            (CellStatus::Ok, Some(doc)) => Probed::Ran(judged(doc), cell),
            // A probe that completed nothing: the target did not hold at this rate.
            (CellStatus::Failed(_), Some(doc)) if doc.results.requests == 0 => Probed::Ran(judged(doc), cell),
            // A probe that could not run: no answer, and the cell says why.
            (s, _) => Probed::Stopped(
                format!("the probe at {rate:.0} req/s did not run: {}", s.text()),
                Some(cell),
            ),
        }
    });
    let capacity = found.capacity;
    let mut cell = found.stopped.or(found.held).or(found.failed).unwrap_or_else(|| {
        let mut c = target.cell(&x.name, at);
        c.status = CellStatus::Failed(format!(
            "no probe ran: {}",
            capacity.inconclusive.clone().unwrap_or_default()
        ));
        c
    });
    if let Target::Model(m) | Target::Twin(m) | Target::Baseline(m, _) = target {
        // The whole prediction from the design's CPU per request at the lowest rate probed,
        // never the answer's own (which the prediction is set against): at the cell's rate,
        // with its capacity at the same target beside the measured one. Where the lowest probe
        // is the answer, there is no calibration: no prediction.
        let answer = capacity.rps;
        let calibration = lowest.filter(|(r, _)| Some(*r) != answer);
        match calibration {
            Some((rate, cpu)) => {
                let mut at_rate = x.clone();
                at_rate.load.slo = None;
                at_rate.load.rate = cell
                    .load
                    .as_ref()
                    .and_then(|d| d.config.rate)
                    .map(crate::load::Rate::fixed)
                    .or(x.load.rate);
                let predicted = predicted::prediction(&at_rate, m, at.conns, &place.server_cpus, Some(cpu));
                let capacity = predicted::capacity_at_slo(x, m, at.conns, &place.server_cpus, Some(cpu));
                cell.figures.predicted = predicted.zip(capacity).map(|(mut p, c)| {
                    p.capacity_rps = c;
                    p.costs_from = Some(format!(
                        "the search's lowest probe ({} req/s, not its answer): {cpu:.1} µs of server CPU per request",
                        thousands(rate.round() as u64)
                    ));
                    p
                });
            }
            None => {
                cell.figures.unpredicted = Some(match lowest {
                    Some(_) => "not modelled: the search's only calibration, its lowest probe, is its answer".into(),
                    None => "not modelled: no probe of the search measured the design's CPU per request".into(),
                });
            }
        }
    }
    cell.figures.capacity = Some(capacity);
    server.stop(&mut [&mut cell]);
    cell.seconds = started.elapsed().as_secs_f64();
    cell
}
