//! Verdicts: for each experiment, which target did best and by how much, worked out from the
//! results (never written by hand). For throughput (or, with a latency target, capacity at
//! it), p99 latency, server CPU per request and memory per connection: the best target and the
//! runner-up, the ratio between them (the geometric mean of their rounds' ratios, each over
//! the connection counts both ran), whether the gap is clear by the interval of its rounds
//! (one round is not judged: `interval`), the client-bound caveat where it
//! applies, and a sentence of *why* taken from the counters that differ most between the two
//! (syscalls, useful events, context switches, lost accept races, starved connections).

use serde::{Deserialize, Serialize};

use super::aa::aa_figure;
use super::classes;
use super::context::Context;
use super::expect::{self, Expectation};
use super::finding::{AaFigure, Finding, Reason};
use super::metric::{
    placed_alike, rankable, Metric, Unranked, CAPACITY, CPU, CPU_EVENT, GAP_P99, LATE, MEMORY, P50, P99, THROUGHPUT,
    TTFE_P99,
};
use super::ranking::finding;
use super::reasons::why_sentence;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::Cell;
use crate::units::thousands;

/// An experiment's verdict: the findings and the sentence a person reads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    pub experiment: String,
    pub text: String,
    pub findings: Vec<Finding>,
    /// The counters behind the *why*.
    pub reasons: Vec<Reason>,
    /// A paired experiment's A/A figure: its first model against itself in the same rounds.
    #[serde(default)]
    pub aa: Option<AaFigure>,
    /// The shapes the experiment's `expect` promises, each checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected: Vec<Expectation>,
    /// The answer first: at most two short sentences (`headline`), then a row per finding.
    #[serde(default)]
    pub headline: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table: Vec<super::headline::Row>,
    /// The fidelity verdict's rows: each product beside the model that stands for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fidelity: Vec<super::fidelity::Row>,
}

/// In an open loop, targets that completed at least this share of the offered rate kept up
/// with it: the client, not they, set their throughput.
const KEPT_UP: f64 = 0.9;

/// The verdict of one experiment, with the documented unit costs.
#[cfg(test)]
pub fn verdict(x: &Experiment, cells: &[Cell]) -> Verdict {
    verdict_with(x, cells, &Context::DOCUMENTED)
}

/// The targets of `cells`, in the order they ran.
fn targets_of(cells: &[&Cell]) -> Vec<String> {
    let mut targets: Vec<String> = Vec::new();
    for c in cells {
        if !targets.contains(&c.target) {
            targets.push(c.target.clone());
        }
    }
    targets
}

/// An experiment's verdict, with the unit costs measured on the run's server CPU (a counter is given as the
/// *why* only where its difference, priced, covers a real share of the CPU gap) and the
/// server's CPU count (said first: a comparison on one CPU is not one on eight).
pub fn verdict_with(x: &Experiment, cells: &[Cell], ctx: &Context) -> Verdict {
    // An A/A twin measures the machine's noise, not a target: never ranked.
    // Calibration cells measure a design under lighter load for its predictions: never ranked.
    let (twins, ok): (Vec<&Cell>, Vec<&Cell>) = cells
        .iter()
        .filter(|c| c.experiment == x.name && c.ok() && c.calibration.is_none())
        .partition(|c| c.twin);
    let targets = targets_of(&ok);
    let mut v = Verdict {
        experiment: x.name.clone(),
        text: String::new(),
        findings: Vec::new(),
        reasons: Vec::new(),
        aa: aa_figure(&twins, &ok),
        expected: Vec::new(),
        headline: String::new(),
        table: Vec::new(),
        fidelity: Vec::new(),
    };
    if targets.len() < 2 {
        v.text = match targets.first() {
            None => format!("{}: no cell finished, so there is nothing to compare.", x.name),
            Some(t) => format!("{}: only {t} finished, so there is nothing to compare it with.", x.name),
        };
        let all: Vec<&Cell> = cells
            .iter()
            .filter(|c| c.experiment == x.name && c.compared())
            .collect();
        v.headline = super::headline::nothing_to_compare(&v.text, &all);
        return v;
    }
    v.findings = findings(x, &ok, &twins, &targets);
    let mut parts = said(x, &ok, &mut v.findings);
    parts.extend(placements(&ok, &targets));
    parts.extend(too_few(x, &ok, &v.findings));
    // After `said`, which clears what the A/A pair or an open loop does not resolve.
    let all: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.experiment == x.name && c.compared())
        .collect();
    v.table = super::headline::rows(&v.findings, &ok);
    v.headline = super::headline::headline(&v.findings, &ok, &all, &choose_by(x));
    if let Some(s) = why_sentence(&ok, &v.findings, ctx, &mut v.reasons) {
        parts.push(s);
    }
    if x.load.slo.is_some() {
        parts.extend(no_capacity(&ok, &targets));
    }
    if x.proto.is_keyed() {
        parts.extend(super::contention::sentence(&ok));
    }
    let bound = ok.iter().filter(|c| super::bound::client_limit(c).is_some()).count();
    if bound > 0 {
        parts.push(format!(
            "The client was the limit in {bound} of {} cells (its CPUs busy, or its own turnaround by Little's law): there, throughput and latency say as much about the \
             client as about the servers, while CPU per request still compares them.",
            ok.len()
        ));
    }
    if parts.is_empty() {
        parts.push("No figure was measured for two targets at the same connection count.".into());
    }
    parts.extend(v.aa.as_ref().map(AaFigure::sentence));
    v.expected = expect::check(x, &ok, &twins);
    parts.extend(v.expected.iter().map(|e| e.sentence()));
    let cpus = |n: usize| format!("{n} CPU{}", if n == 1 { "" } else { "s" });
    // Two CPU counts only where some target ran on the threaded ones.
    let wide = ok.iter().any(|c| {
        let on = c.figures.why.as_ref().and_then(|w| w.server_cpus);
        on.is_some() && on == ctx.threaded_cpus
    });
    let on = match (ctx.server_cpus, ctx.threaded_cpus) {
        (Some(n), Some(t)) if t != n && wide => format!(
            " (server on {}; those serving on several threads on {})",
            cpus(n),
            cpus(t)
        ),
        (Some(n), _) => format!(" (server on {})", cpus(n)),
        (None, _) => String::new(),
    };
    v.text = format!("{}{on}: {}", x.name, parts.join(" "));
    v
}

/// Each metric ranked, then each request class's p99, among targets placed alike: where the
/// experiment's targets ran placed differently (`threaded_cpus`), each group of targets placed
/// alike is ranked on its own, its findings saying where it ran, and no pair across groups is
/// compared.
fn findings(x: &Experiment, ok: &[&Cell], twins: &[&Cell], targets: &[String]) -> Vec<Finding> {
    let groups = placed_alike(ok, targets);
    if groups.len() < 2 {
        return findings_placed_alike(x, ok, twins, targets);
    }
    let mut all = Vec::new();
    for (placed, ts) in groups.iter().filter(|(_, ts)| ts.len() >= 2) {
        let cells: Vec<&Cell> = ok.iter().copied().filter(|c| ts.contains(&c.target)).collect();
        let mut found = findings_placed_alike(x, &cells, twins, ts);
        for f in &mut found {
            f.placed = Some(placed.as_ref().map_or("where not recorded".into(), |p| p.server_said()));
        }
        all.extend(found);
    }
    all
}

/// "Targets placed differently are not compared: reactor and redis-server ran with the server
/// on CPU 0, multi-reactor and dispatch on CPUs 0-1." (`None`: every target placed alike).
fn placements(ok: &[&Cell], targets: &[String]) -> Option<String> {
    let groups = placed_alike(ok, targets);
    if groups.len() < 2 {
        return None;
    }
    let each: Vec<String> = groups
        .iter()
        .map(|(p, ts)| {
            let at = p.as_ref().map_or("where not recorded".into(), |p| p.said());
            format!("{} ({at})", ts.join(", "))
        })
        .collect();
    Some(format!(
        "Targets placed differently are not compared (each group is ranked on its own): {}.",
        each.join("; ")
    ))
}

/// [`findings`] of targets that all ran placed alike.
fn findings_placed_alike(x: &Experiment, ok: &[&Cell], twins: &[&Cell], targets: &[String]) -> Vec<Finding> {
    // With a latency target, capacity at it takes the place of throughput and p99 (each cell is
    // the probe that held at its own capacity: their rates and latencies do not compare);
    // without one there is no capacity to rank.
    // Event streams: a stream is long, its rate says little; what ranks is how late events
    // come at the tail, the first event, the server's own lateness, and what each event and
    // each open stream cost.
    let streams = ok.iter().any(|c| c.figures.streams.is_some());
    let usual: &[&Metric] = match x.load.slo {
        Some(_) => &[&CAPACITY, &CPU, &MEMORY],
        None if streams => &[&GAP_P99, &TTFE_P99, &LATE, &CPU_EVENT, &MEMORY],
        None => &[&THROUGHPUT, &P99, &CPU, &MEMORY],
    };
    // The metrics a choice is made on first (`choose_by`), then the rest in their usual order.
    let chosen = choose_by(x);
    let order: Vec<&Metric> = chosen
        .iter()
        .copied()
        .chain(
            usual
                .iter()
                .copied()
                .filter(|m| !chosen.iter().any(|c| c.name == m.name)),
        )
        .collect();
    // With a target, CPU per request compares the designs doing the work at their own
    // capacity: a cell without one (starved, or its search stopped) was measured at a rate
    // that says nothing of its cost.
    let held: Vec<&Cell> = ok
        .iter()
        .copied()
        .filter(|c| c.figures.capacity_rps().is_some())
        .collect();
    let mut found: Vec<Finding> = order
        .iter()
        .filter_map(|&m| match m.name {
            n if n == CPU.name && x.load.slo.is_some() => finding(&held, twins, targets, m, x.paired),
            _ => finding(ok, twins, targets, m, x.paired),
        })
        .collect();
    // Each request class's p99, ranked as every request's is: a class's own cells' view. With
    // a target, each cell is the probe that held at its own capacity: class latencies of
    // different rates do not compare.
    // A class whose p99 has too few samples is ranked on the quantile its samples support
    // (its p50, from 20), named so.
    for (name, _) in classes::names(ok).iter().filter(|_| x.load.slo.is_none()) {
        let view = classes::view(ok, name);
        let view: Vec<&Cell> = view.iter().collect();
        let twins = classes::view(twins, name);
        let twins: Vec<&Cell> = twins.iter().collect();
        let f = finding(&view, &twins, targets, &P99, x.paired)
            .or_else(|| thin(&view, &P99).and_then(|_| finding(&view, &twins, targets, &P50, x.paired)));
        if let Some(mut f) = f {
            f.class = Some(name.clone());
            found.push(f);
        }
    }
    found
}

/// The metrics of `x`'s `choose_by`, in its order (none with a latency target or event
/// streams: their cells rank other figures).
pub(super) fn choose_by(x: &Experiment) -> Vec<&'static Metric> {
    if x.load.slo.is_some() || x.stream.is_some() {
        return Vec::new();
    }
    x.choose_by
        .iter()
        .filter_map(|w| crate::bench::record::expect::Measure::of(w))
        .map(super::expect::metric)
        .collect()
}

/// The fewest samples any cell had for quantile metric `m` where that is why it was not
/// ranked: (n, needed).
fn thin(cells: &[&Cell], m: &Metric) -> Option<(u64, u64)> {
    cells
        .iter()
        .filter_map(|c| match rankable(m, c, cells).why_not() {
            Some(Unranked::TooFewSamples { n, needed }) => Some((n, needed)),
            _ => None,
        })
        .min()
}

/// What the sample floor left unranked, in sentences: a quantile with too few samples is
/// never called clear ("P99 latency of long requests: too few samples to rank (79, 1,000
/// needed); ranked on its p50 instead").
fn too_few(x: &Experiment, ok: &[&Cell], findings: &[Finding]) -> Vec<String> {
    let streams = ok.iter().any(|c| c.figures.streams.is_some());
    let mut out = Vec::new();
    let mut say = |cells: &[&Cell], m: &Metric, class: Option<&str>| {
        let uncounted = cells
            .iter()
            .any(|c| rankable(m, c, cells).why_not() == Some(Unranked::SamplesUnknown));
        let thin = thin(cells, m);
        if thin.is_none() && !uncounted {
            return;
        }
        let ranked = findings
            .iter()
            .any(|f| f.metric == m.name && f.class.as_deref() == class);
        if ranked {
            return;
        }
        let instead = findings
            .iter()
            .any(|f| f.metric == P50.name && f.class.as_deref() == class && class.is_some());
        let what = match class {
            Some(k) => format!("{} of {k} requests", capital(m.name)),
            None => capital(m.name),
        };
        let why = match thin {
            Some((n, needed)) => format!(
                "too few samples to rank ({}, {} needed)",
                crate::units::thousands(n),
                crate::units::thousands(needed)
            ),
            None => "not ranked: its samples were not counted (results from before they were)".into(),
        };
        out.push(format!(
            "{what}: {why}{}.",
            if instead { "; ranked on its p50 instead" } else { "" }
        ));
    };
    if x.load.slo.is_none() {
        let metrics: &[&Metric] = match streams {
            true => &[&GAP_P99, &TTFE_P99],
            false => &[&P99],
        };
        for m in metrics {
            say(ok, m, None);
        }
        for (name, _) in classes::names(ok) {
            let view = classes::view(ok, &name);
            let view: Vec<&Cell> = view.iter().collect();
            say(&view, &P99, Some(&name));
        }
    }
    out
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().collect::<String>() + c.as_str())
}

/// The findings in sentences, each with what it is set against (the class's service time, the
/// prediction); an open loop's throughput that every target kept up with, where its rounds do
/// not separate them, is no difference (the client set the rate).
fn said(x: &Experiment, ok: &[&Cell], findings: &mut [Finding]) -> Vec<String> {
    let classes = classes::names(ok);
    let mut parts = Vec::new();
    for f in findings {
        f.why = match f.clear {
            true => format!("beyond the noise ({})", f.confidence()),
            false => f.noise(),
        };
        // In an open loop the client sets the rate: targets that all kept up with it and that
        // the rounds do not separate do not differ in throughput.
        let kept_up = |rate: f64| f.best_value.min(f.runner_up_value) >= KEPT_UP * rate;
        let open_loop = x
            .load
            .rate
            .map(|r| r.per_s())
            .filter(|&r| f.metric == THROUGHPUT.name && kept_up(r));
        if let Some(rate) = open_loop.filter(|_| !f.clear) {
            f.why = super::finding::OFFERED.into();
            parts.push(format!(
                "Throughput: no difference between {} and {} ({:.2}×): an open loop at {} req/s, which both kept up with.",
                f.best,
                f.runner_up,
                f.ratio,
                thousands(rate.round() as u64)
            ));
            continue;
        }
        // An open loop whose rate an earlier experiment set (`rate_of`): the cells say whether
        // both completed what was offered.
        let offered = |t: &str| {
            let mine: Vec<&&Cell> = ok.iter().filter(|c| c.label() == t && c.compared()).collect();
            !mine.is_empty() && mine.iter().all(|c| super::metric::throughput_offered(c))
        };
        if f.metric == THROUGHPUT.name && !f.clear && offered(&f.best) && offered(&f.runner_up) {
            f.why = super::finding::OFFERED.into();
            parts.push(format!(
                "Throughput: no difference between {} and {} ({:.2}×): an open loop both kept up with.",
                f.best, f.runner_up, f.ratio
            ));
            continue;
        }
        parts.push(f.sentence());
        if f.metric == P99.name {
            parts.extend(classes::against_service(x, ok, f, &classes));
        }
        // A class's finding is set against the class's own prediction.
        let view = f.class.as_deref().map(|name| classes::view(ok, name));
        let seen: Vec<&Cell> = match &view {
            Some(v) => v.iter().collect(),
            None => ok.to_vec(),
        };
        parts.extend(super::against_prediction::sentence(&seen, f));
        if f.metric == P99.name && f.class.is_none() && f.clear {
            parts.extend(super::card::why_gap(ok, &f.best, &f.runner_up, f.connections));
        }
    }
    parts
}

/// The targets of a capacity search that have no capacity to rank, each with why.
fn no_capacity(ok: &[&Cell], targets: &[String]) -> Option<String> {
    let why: Vec<String> = targets
        .iter()
        .filter_map(|t| {
            if ok
                .iter()
                .any(|c| &c.target == t && rankable(&CAPACITY, c, ok).why_not() == Some(Unranked::DoesNoWork))
            {
                return Some(format!(
                    "{t} (it serves a fixed body and does none of the work: not ranked)"
                ));
            }
            let cells: Vec<&&Cell> = ok.iter().filter(|c| &c.target == t).collect();
            if cells.iter().any(|c| c.figures.capacity_rps().is_some()) {
                return None;
            }
            let reason = cells
                .iter()
                .find_map(|c| {
                    let k = c.figures.capacity.as_ref()?;
                    Some(
                        k.inconclusive
                            .clone()
                            .unwrap_or_else(|| format!("no probed rate held {}", k.slo)),
                    )
                })
                .unwrap_or_else(|| "no search finished".into());
            Some(format!("{t} ({reason})"))
        })
        .collect();
    (!why.is_empty()).then(|| format!("No capacity for {}.", why.join("; ")))
}
