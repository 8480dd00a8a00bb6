//! Verdicts: for each experiment, which target did best and by how much, worked out from the
//! results (never written by hand). For throughput, p99 latency, server CPU per request and
//! memory per connection: the best target and the runner-up, the ratio between them (the
//! geometric mean over the connection counts both ran), whether the gap is larger than the
//! spread of the repeats, the client-bound caveat where it applies, and a sentence of *why*
//! taken from the counters that differ most between the two (syscalls, useful events, context
//! switches, lost accept races, starved connections).

use serde::{Deserialize, Serialize};

use super::classes;
use super::costs::UnitCosts;
use super::expect::{self, Expectation};
use super::reasons::{counter_value, why, Why};
use super::results::Cell;
use super::runner::TWIN;
use super::scenario::Experiment;
use crate::units::thousands;
use ranking::{better, finding, CAPACITY, CPU, METRICS, P99};

/// A page: the growth of memory PSS resolves.
const PAGE_KIB: f64 = 4.0;

/// With one run per cell the noise is unknown: a gap smaller than this is not called.
const SINGLE_RUN_NOISE: f64 = 0.10;

/// One metric's finding.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    pub metric: String,
    pub best: String,
    pub runner_up: String,
    /// How many times better the best is (≥ 1), geometric mean over the shared counts.
    pub ratio: f64,
    /// The gap is larger than the spread of the repeats (paired repeats: the best wins enough of
    /// the rounds, a sign test; with one run: the gap is over 10%).
    pub clear: bool,
    /// The two medians at the largest shared connection count (paired repeats: freed of each
    /// round's drift first), and that count.
    pub best_value: f64,
    pub runner_up_value: f64,
    pub connections: usize,
    /// Cells of the two targets (shared counts) where the client was saturated.
    pub client_bound_cells: usize,
    /// The last of the ranking and how many times worse than the best it is (when more than
    /// two targets ran).
    pub last: Option<(String, f64)>,
    /// Targets left out of the ranking: not measured at every connection count (for p99, a
    /// cell that starved connections does not count: its latency covers only the served ones).
    #[serde(default)]
    pub unranked: Vec<String>,
    /// The request class the finding is about (`None`: every request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}

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
}

/// What a verdict is worked out against besides the cells: what a syscall and a context
/// switch cost on the server's CPU, and how many CPUs the server had (`None`: not recorded).
#[derive(Debug, Clone, Copy)]
pub struct Context {
    pub costs: UnitCosts,
    pub server_cpus: Option<usize>,
}

impl Context {
    /// The documented unit costs, the server's CPUs not known.
    pub const DOCUMENTED: Context = Context {
        costs: UnitCosts::DOCUMENTED,
        server_cpus: None,
    };
}

/// A counter given as the reason for a lead: its values for the best and the runner-up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Reason {
    pub counter: String,
    pub best: f64,
    pub runner_up: f64,
}

/// How far apart one target measured against itself in the same rounds: differences smaller
/// than this are not resolved on this machine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AaFigure {
    pub target: String,
    pub metric: String,
    /// Rounds (connection counts × repeats) with both measured.
    pub rounds: usize,
    /// The median and the largest difference of a round, per cent of the smaller value.
    #[serde(default)]
    pub median_diff_pct: f64,
    pub max_diff_pct: f64,
}

/// The A/A figure of `twins` (cells of a twin target) against their originals in `cells`:
/// server CPU per request where measured, else throughput.
fn aa_figure(twins: &[&Cell], cells: &[&Cell]) -> Option<AaFigure> {
    let first = twins.first()?;
    let target = first.target.trim_end_matches(TWIN).trim_end().to_string();
    type Reader = fn(&Cell) -> Option<f64>;
    let metrics: [(&str, Reader); 2] = [
        ("server CPU per request", |c| c.figures.cpu_per_req()),
        ("throughput", |c| Some(c.figures.throughput_rps).filter(|v| *v > 0.0)),
    ];
    metrics.into_iter().find_map(|(metric, get)| {
        let diffs: Vec<f64> = twins
            .iter()
            .filter_map(|t| {
                let o = cells
                    .iter()
                    .find(|c| c.target == target && c.connections == t.connections && c.repeat == t.repeat)?;
                let (a, b) = (get(t)?, get(o)?);
                Some((a.max(b) / a.min(b) - 1.0) * 100.0)
            })
            .collect();
        (!diffs.is_empty()).then(|| AaFigure {
            target: target.clone(),
            metric: metric.into(),
            rounds: diffs.len(),
            max_diff_pct: diffs.iter().cloned().fold(0.0, f64::max),
            median_diff_pct: super::results::median(diffs),
        })
    })
}

/// The verdict of one experiment, with the documented unit costs.
#[cfg(test)]
pub fn verdict(x: &Experiment, cells: &[Cell], repeats: usize) -> Verdict {
    verdict_with(x, cells, repeats, &Context::DOCUMENTED)
}

/// The gap in server CPU per request the *why* weighs, in words.
fn why_gap(cells: &[&Cell], a: &str, b: &str) -> String {
    let med = |t: &str| {
        let xs: Vec<f64> = cells
            .iter()
            .filter(|c| c.target == t)
            .filter_map(|c| c.figures.cpu_per_req())
            .collect();
        (!xs.is_empty()).then(|| super::results::median(xs))
    };
    match (med(a), med(b)) {
        (Some(x), Some(y)) => format!("{:.1} µs gap in server CPU per request", (x - y).abs()),
        _ => "gap".into(),
    }
}

/// [`verdict`] with the unit costs measured on the run's server CPU (a counter is given as the
/// *why* only where its difference, priced, covers a real share of the CPU gap) and the
/// server's CPU count (said first: a comparison on one CPU is not one on eight).
pub fn verdict_with(x: &Experiment, cells: &[Cell], repeats: usize, ctx: &Context) -> Verdict {
    let (twins, ok): (Vec<&Cell>, Vec<&Cell>) = cells
        .iter()
        .filter(|c| c.experiment == x.name && c.ok())
        .partition(|c| c.target.ends_with(TWIN));
    let mut targets: Vec<String> = Vec::new();
    for c in &ok {
        if !targets.contains(&c.target) {
            targets.push(c.target.clone());
        }
    }
    let mut v = Verdict {
        experiment: x.name.clone(),
        text: String::new(),
        findings: Vec::new(),
        reasons: Vec::new(),
        aa: aa_figure(&twins, &ok),
        expected: Vec::new(),
    };
    if targets.len() < 2 {
        v.text = match targets.first() {
            None => format!("{}: no cell finished, so there is nothing to compare.", x.name),
            Some(t) => format!("{}: only {t} finished, so there is nothing to compare it with.", x.name),
        };
        return v;
    }
    // With a latency target, capacity at it takes the place of throughput and p99 (each cell is
    // the probe that held at its own capacity: their rates and latencies do not compare);
    // without one there is no capacity to rank.
    let order: &[usize] = match x.load.slo {
        Some(_) => &[CAPACITY, 2, 3],
        None => &[0, 1, 2, 3],
    };
    // A peer does none of the experiment's work: its capacity is not one to rank beside theirs.
    let works = x.work.is_some() || x.work_from_request;
    let doing: Vec<String> = targets
        .iter()
        .filter(|t| !(works && x.peers.contains(t)))
        .cloned()
        .collect();
    // With a target, CPU per request compares the designs doing the work at their own
    // capacity: a cell without one (starved, or its search stopped) was measured at a rate
    // that says nothing of its cost.
    let held: Vec<&Cell> = ok
        .iter()
        .copied()
        .filter(|c| c.figures.capacity_rps().is_some())
        .collect();
    v.findings = order
        .iter()
        .filter_map(|&i| match i {
            CAPACITY => finding(&ok, &doing, &METRICS[i], repeats, x.paired),
            CPU if x.load.slo.is_some() => finding(&held, &doing, &METRICS[i], repeats, x.paired),
            _ => finding(&ok, &targets, &METRICS[i], repeats, x.paired),
        })
        .collect();
    // Each request class's p99, ranked as the whole's is: a class's own cells' view.
    let classes = classes::names(&ok);
    // With a target, each cell is the probe that held at its own capacity: class latencies of
    // different rates do not compare.
    for (name, _) in classes.iter().filter(|_| x.load.slo.is_none()) {
        let view = classes::view(&ok, name);
        let view: Vec<&Cell> = view.iter().collect();
        if let Some(mut f) = finding(&view, &targets, &METRICS[P99], repeats, x.paired) {
            f.class = Some(name.clone());
            v.findings.push(f);
        }
    }
    // A gap smaller than the first model's difference from itself in the same rounds is not
    // resolved, whatever the rounds say.
    let aa = v.aa.clone();
    let inside_aa = |f: &Finding| {
        aa.as_ref()
            .is_some_and(|a| a.metric == f.metric && (f.ratio - 1.0) * 100.0 < a.median_diff_pct)
            .then(|| aa.as_ref().map_or(0.0, |a| a.median_diff_pct))
    };
    let mut parts = Vec::new();
    for f in &mut v.findings {
        let gated = inside_aa(f).filter(|_| f.clear);
        f.clear &= gated.is_none();
        // In an open loop the client sets the rate: targets that all kept up with it do not
        // differ in throughput, however narrow the spread of their repeats.
        let kept_up = |rate: f64| f.best_value.min(f.runner_up_value) >= 0.9 * rate;
        let open_loop = x.load.rate.filter(|&r| f.metric == METRICS[0].name && kept_up(r));
        if let Some(rate) = open_loop.filter(|_| f.ratio < 1.0 + SINGLE_RUN_NOISE) {
            f.clear = false;
            parts.push(format!(
                "Throughput: no difference between {} and {} ({:.2}×): an open loop at {} req/s, which both kept up with.",
                f.best,
                f.runner_up,
                f.ratio,
                thousands(rate.round() as u64)
            ));
            continue;
        }
        parts.push(sentence(f, gated, repeats, x.paired));
        if f.metric == METRICS[P99].name {
            parts.extend(classes::against_service(x, &ok, f, &classes));
        }
        parts.extend(super::against_prediction::sentence(&ok, f));
    }
    if let Some(s) = why_sentence(&ok, &v.findings, &ctx.costs, &mut v.reasons) {
        parts.push(s);
    }
    if x.load.slo.is_some() {
        parts.extend(no_capacity(&ok, &targets, x, works));
    }
    let bound = ok.iter().filter(|c| c.figures.client_bound).count();
    if bound > 0 {
        parts.push(format!(
            "The client was saturated in {bound} of {} cells: there, throughput and latency say as much about the \
             client as about the servers, while CPU per request still compares them.",
            ok.len()
        ));
    }
    if parts.is_empty() {
        parts.push("No figure was measured for two targets at the same connection count.".into());
    }
    if let Some(a) = &v.aa {
        parts.push(format!(
            "A/A: {} against itself in the same rounds was {:.1}% apart in {} (median; up to {:.1}%, {} \
             round{}): smaller differences are not resolved on this machine.",
            a.target,
            a.median_diff_pct,
            a.metric,
            a.max_diff_pct,
            a.rounds,
            if a.rounds == 1 { "" } else { "s" }
        ));
    }
    v.expected = expect::check(x, &ok, repeats);
    parts.extend(v.expected.iter().map(|e| e.sentence()));
    let on = match ctx.server_cpus {
        Some(n) => format!(" (server on {n} CPU{})", if n == 1 { "" } else { "s" }),
        None => String::new(),
    };
    v.text = format!("{}{on}: {}", x.name, parts.join(" "));
    v
}

/// The targets of a capacity search that have no capacity to rank, each with why.
fn no_capacity(ok: &[&Cell], targets: &[String], x: &Experiment, works: bool) -> Option<String> {
    let why: Vec<String> = targets
        .iter()
        .filter_map(|t| {
            if works && x.peers.contains(t) {
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

/// A finding in a sentence. `inside_aa`: the A/A difference the gap is under (then the
/// finding is no clear difference whatever the rounds say).
fn sentence(f: &Finding, inside_aa: Option<f64>, repeats: usize, paired: bool) -> String {
    let m = METRICS.iter().find(|m| m.name == f.metric).expect("known");
    let at = format!("at {} connections", thousands(f.connections as u64));
    // The rank is over every connection count; at the largest the order can flip.
    let flipped = better(m, f.best_value, f.runner_up_value) < 1.0;
    let title = match &f.class {
        Some(c) => format!("{} of {c} requests", cap(&f.metric)),
        None => cap(&f.metric),
    };
    let mut s = if f.clear {
        format!(
            "{title}: {} is best{}, {:.2}× {} ({} against {} {at}{})",
            f.best,
            if flipped { " over all counts" } else { "" },
            f.ratio,
            f.runner_up,
            (m.show)(f.best_value),
            (m.show)(f.runner_up_value),
            if flipped { ", where the order flips" } else { "" }
        )
    } else {
        format!(
            "{title}: no clear difference between {} and {} ({:.2}×, {})",
            f.best,
            f.runner_up,
            f.ratio,
            match inside_aa {
                Some(pct) => format!("under the {pct:.1}% the A/A pair differed by"),
                None if repeats > 1 && paired => format!("not better in enough of {repeats} paired rounds"),
                None if repeats > 1 => format!("inside the spread of {repeats} runs"),
                None => "one run each, and under 10%".to_string(),
            }
        )
    };
    if let Some((t, r)) = &f.last {
        s.push_str(&format!("; last is {t} at {r:.2}× the best"));
    }
    if !f.unranked.is_empty() {
        s.push_str(&format!(
            "; not ranked: {} ({})",
            f.unranked.join(", "),
            if f.metric == "p99 latency" {
                "connections starved or a count missing: their latency covers only what was served"
            } else {
                "not measured at every connection count"
            }
        ));
    }
    s + "."
}

/// Why the CPU-per-request leader leads: the counters that set it apart, weighed in CPU per
/// request (a latency or throughput gap is not in the counters' unit: no why is given for
/// it). The counters given as the reason go into `reasons`.
fn why_sentence(ok: &[&Cell], findings: &[Finding], costs: &UnitCosts, reasons: &mut Vec<Reason>) -> Option<String> {
    let f = findings
        .iter()
        .find(|f| f.metric == "server CPU per request" && f.clear)?;
    let said = |d: &[super::reasons::Difference]| -> Vec<String> {
        d.iter()
            .map(|d| {
                let priced = d.priced_us.map(|p| format!(" (≈ {p:.1} µs)")).unwrap_or_default();
                format!(
                    "{} {} against {}{priced}",
                    counter_value(d.name, d.best),
                    d.name,
                    counter_value(d.name, d.runner_up)
                )
            })
            .collect()
    };
    match why(ok, &f.best, &f.runner_up, costs) {
        Why::Explained(found) => {
            *reasons = found
                .iter()
                .map(|d| Reason {
                    counter: d.name.to_string(),
                    best: d.best,
                    runner_up: d.runner_up,
                })
                .collect();
            let gap = why_gap(ok, &f.best, &f.runner_up);
            Some(format!(
                "Why: {} has {}, of the {gap} to {}.",
                f.best,
                said(&found).join(", and "),
                f.runner_up
            ))
        }
        Why::Unexplained { gap_us, differ } if !differ.is_empty() => {
            let gap = gap_us.map(|g| format!(" of {g:.1} µs")).unwrap_or_default();
            Some(format!(
                "The counters muxlab keeps do not explain the gap{gap} between {} and {}: {} ({}) {}.",
                f.best,
                f.runner_up,
                said(&differ).join(", "),
                f.best,
                if gap_us.is_some() {
                    "account for too little of it"
                } else {
                    "cannot be weighed against a CPU gap that was not measured"
                }
            ))
        }
        Why::Unexplained { .. } => None,
    }
}

fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Every experiment's verdict, and with `shapes` (a scenario's `compare_shapes`) the verdict
/// across them.
pub fn all(experiments: &[Experiment], cells: &[Cell], repeats: usize, ctx: &Context, shapes: bool) -> Vec<Verdict> {
    let mut v: Vec<Verdict> = experiments
        .iter()
        .map(|x| verdict_with(x, cells, repeats, ctx))
        .collect();
    if shapes {
        v.extend(super::shapes::verdict(experiments, cells, ctx.server_cpus));
    }
    v
}

mod ranking;
#[cfg(test)]
mod verdicts;
