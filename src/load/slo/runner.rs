//! `muxlab load --slo`: the search run from here, each probe a run of this process's at one
//! rate, and the share of each class of the workload the search counts samples by.

use super::{judge, probe_warmup, unreachable, Probe, Probed, Search, PROBE};
use crate::load::{run_here, Document, Error, LoadArgs, Show, Workload};

/// A class's share of a workload's requests, by its `--mix` weight, or a keyed target's
/// command by `--ratio` (`None`: a class the weights do not name, as from a `--mix-file`).
pub fn class_share(w: &Workload) -> impl Fn(&str) -> Option<f64> + '_ {
    let total: f64 = w.mix.iter().map(|m| m.weight).sum();
    move |c| {
        if w.mix.is_empty() {
            // Without a mix only a keyed target's classes can be named (`LoadArgs::resolve`).
            let r = w.ratio.unwrap_or_default();
            let weights = [r.set, r.get];
            let k = crate::load::keyed::CLASSES.iter().position(|n| *n == c)?;
            return Some(weights[k] / (r.set + r.get));
        }
        let m = w.mix.iter().find(|m| m.name == c)?;
        (total > 0.0).then(|| m.weight / total)
    }
}

/// Runs the search `args` asks for (its workload's `slo`), each probe a run from here at one
/// rate; `each` sees every probe as it ends. The document is the latest probe at the bracket's
/// low end (or the last probe) with the capacity and every probe in `capacity`.
pub fn run(args: &LoadArgs, mut each: impl FnMut(&Probe)) -> Result<Document, Error> {
    let w = &args.workload;
    let slo = w.slo.clone().ok_or(Error::NoSlo)?;
    let window = w.duration.unwrap_or(PROBE);
    let warmup = probe_warmup(w.warmup);
    let search = Search::new(
        &slo,
        w.rate.map_or(1000.0, |r| r.per_s()),
        w.slo_time,
        window,
        warmup,
        class_share(w),
    );
    let mut failure = None;
    let found = search.drive(&slo, |plan| {
        let mut probe_args = args.clone();
        probe_args.workload.rate = Some(plan.rate.into());
        probe_args.workload.slo = None;
        probe_args.workload.duration = Some(plan.window);
        probe_args.workload.warmup = warmup;
        let ran = crate::load::resolve(probe_args).and_then(|spec| Ok((run_here(&spec, Show::Nothing, false)?, spec)));
        let (outcome, spec) = match ran {
            Ok(r) => r,
            Err(e) => {
                let why = e.to_string();
                failure = Some(e);
                return Probed::Stopped(why, None);
            }
        };
        let doc = Document::new(&spec, &outcome);
        if outcome.interrupted {
            return Probed::Stopped("interrupted".into(), Some(doc));
        }
        if let Some(why) = unreachable(&doc) {
            return Probed::Stopped(why, Some(doc));
        }
        let p = Probe {
            recheck: plan.recheck,
            ..judge(&slo, plan.rate, &doc)
        };
        each(&p);
        Probed::Ran(p, doc)
    });
    if let Some(e) = failure {
        return Err(e);
    }
    let mut doc = found
        .held
        .or(found.stopped)
        .or(found.failed)
        .ok_or(Error::SloTimeTooShort { slo_time: w.slo_time })?;
    doc.capacity = Some(found.capacity);
    Ok(doc)
}
