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
use super::results::{in_round, sign_test, spread, Cell, Spread};
use super::runner::TWIN;
use super::scenario::Experiment;
use crate::units::{fmt_us, thousands};

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

/// A metric: its name, how to read it from a cell, whether higher is better, and its unit.
struct Metric {
    name: &'static str,
    get: fn(&Cell) -> Option<f64>,
    higher_is_better: bool,
    show: fn(f64) -> String,
    /// Compared at the largest connection count only (memory per connection is noise at few).
    largest_only: bool,
}

/// The p99 metric (in [`METRICS`]), which request classes are ranked by too.
const P99: usize = 1;
/// Server CPU per request's place in [`METRICS`].
const CPU: usize = 2;

/// The capacity metric (in [`METRICS`]): ranked first, in throughput's place, where an
/// experiment has a latency target.
const CAPACITY: usize = 4;

const METRICS: [Metric; 5] = [
    Metric {
        name: "throughput",
        get: |c| Some(c.figures.throughput_rps).filter(|v| *v > 0.0),
        higher_is_better: true,
        show: |v| format!("{} req/s", crate::units::si(v)),
        largest_only: false,
    },
    Metric {
        name: "p99 latency",
        // Starved connections have no latency to show: such a cell's p99 flatters it.
        get: |c| Some(c.figures.p99_us).filter(|v| *v > 0.0 && c.figures.starved_conns == 0),
        higher_is_better: false,
        show: fmt_us,
        largest_only: false,
    },
    Metric {
        name: "server CPU per request",
        get: |c| c.figures.cpu_per_req(),
        higher_is_better: false,
        show: |v| format!("{v:.1} µs"),
        largest_only: false,
    },
    Metric {
        name: "memory per connection",
        // Below a page over all the connections, PSS does not resolve a difference.
        get: |c| {
            c.figures
                .mem_per_conn()
                .filter(|v| v * c.figures.established as f64 >= PAGE_KIB)
        },
        higher_is_better: false,
        show: |v| match v < 1.0 {
            true => format!("{v:.2} KiB"),
            false => format!("{v:.1} KiB"),
        },
        largest_only: true,
    },
    Metric {
        name: "capacity at the target",
        get: |c| c.figures.capacity_rps(),
        higher_is_better: true,
        show: |v| format!("{} req/s", crate::units::si(v)),
        largest_only: false,
    },
];

/// One target at one connection count: its median over the repeats, and their range.
#[derive(Debug, Clone, Copy)]
struct Row {
    connections: usize,
    spread: Spread,
}

/// One target's rows of a metric, by connection count.
#[derive(Debug, Clone)]
struct TargetRows {
    target: String,
    rows: Vec<Row>,
}

impl TargetRows {
    /// The row at `n` connections (a count every ranked target has).
    fn at(&self, n: usize) -> Spread {
        self.rows
            .iter()
            .find(|r| r.connections == n)
            .expect("shared count")
            .spread
    }

    fn has(&self, n: usize) -> bool {
        self.rows.iter().any(|r| r.connections == n)
    }
}

/// The medians and spreads of one metric, per target and connection count. Paired repeats
/// (every target measured in each round) are first freed of each round's drift: a value is
/// divided by its round's [`drift`], so targets are ranked by how they did against each other
/// within rounds, as the per-round ratios compare them, not by medians a drifting round skews.
fn table(cells: &[&Cell], targets: &[String], m: &Metric, paired: bool) -> Vec<TargetRows> {
    let value = |c: &Cell| match paired {
        true => in_round(cells, m.get, c),
        false => (m.get)(c),
    };
    targets
        .iter()
        .map(|t| {
            let mut counts: Vec<usize> = cells.iter().filter(|c| &c.target == t).map(|c| c.connections).collect();
            counts.sort_unstable();
            counts.dedup();
            let rows = counts
                .into_iter()
                .filter_map(|n| {
                    let xs: Vec<f64> = cells
                        .iter()
                        .filter(|c| &c.target == t && c.connections == n)
                        .filter_map(|c| value(c))
                        .collect();
                    spread(xs).map(|spread| Row { connections: n, spread })
                })
                .collect();
            TargetRows {
                target: t.clone(),
                rows,
            }
        })
        .filter(|t| !t.rows.is_empty())
        .collect()
}

/// How much better `a` is than `b` (≥ 1 means a is better).
fn better(m: &Metric, a: f64, b: f64) -> f64 {
    if m.higher_is_better {
        a / b
    } else {
        b / a
    }
}

/// The targets ranked: those measured at every connection count (the others, when that leaves
/// two or more, are named as not ranked: a count failed, or its figure does not count there),
/// and the counts all of them share.
fn rankable(all: Vec<TargetRows>) -> (Vec<TargetRows>, Vec<String>, Vec<usize>) {
    let mut union: Vec<usize> = all.iter().flat_map(|t| t.rows.iter().map(|r| r.connections)).collect();
    union.sort_unstable();
    union.dedup();
    let complete: Vec<TargetRows> = all.iter().filter(|t| t.rows.len() == union.len()).cloned().collect();
    let ranked = if complete.len() >= 2 { complete } else { all.clone() };
    let unranked = all
        .iter()
        .filter(|a| !ranked.iter().any(|r| r.target == a.target))
        .map(|a| a.target.clone())
        .collect();
    let shared = ranked[0]
        .rows
        .iter()
        .map(|r| r.connections)
        .filter(|&n| ranked.iter().all(|t| t.has(n)))
        .collect();
    (ranked, unranked, shared)
}

/// Each target scored by how far it is from the best at each shared count (the geometric mean
/// of the ratios; 0 is the best everywhere), best first.
fn scored<'t>(m: &Metric, targets: &'t [TargetRows], shared: &[usize]) -> Vec<(f64, &'t TargetRows)> {
    let best_at = |n: usize| {
        targets
            .iter()
            .map(|t| t.at(n).median)
            .reduce(|a, v| if better(m, v, a) > 1.0 { v } else { a })
            .expect("two targets")
    };
    let score = |t: &TargetRows| {
        shared
            .iter()
            .map(|&n| better(m, best_at(n), t.at(n).median).ln())
            .sum::<f64>()
            / shared.len() as f64
    };
    let mut ranked: Vec<(f64, &TargetRows)> = targets.iter().map(|t| (score(t), t)).collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    ranked
}

fn finding(cells: &[&Cell], targets: &[String], m: &Metric, repeats: usize, paired: bool) -> Option<Finding> {
    let largest = cells.iter().map(|c| c.connections).max()?;
    let cells: Vec<&Cell> = cells
        .iter()
        .copied()
        .filter(|c| !m.largest_only || c.connections == largest)
        .collect();
    let cells = &cells[..];
    let all = table(cells, targets, m, paired);
    if all.len() < 2 {
        return None;
    }
    let (t, unranked, shared) = rankable(all);
    if shared.is_empty() {
        return None;
    }
    let ranked = scored(m, &t, &shared);
    let (best, second) = (ranked[0].1, ranked[1].1);
    let ratio = (shared
        .iter()
        .map(|&n| better(m, best.at(n).median, second.at(n).median).ln())
        .sum::<f64>()
        / shared.len() as f64)
        .exp();
    // Separated at a count: paired, by a sign test over the rounds; else the ranges apart.
    let separated = shared
        .iter()
        .filter(|&&n| {
            if paired {
                return paired_clear(cells, m, &best.target, &second.target, n);
            }
            let (b, s) = (best.at(n), second.at(n));
            if m.higher_is_better {
                b.lowest > s.highest
            } else {
                b.highest < s.lowest
            }
        })
        .count();
    let clear = if repeats > 1 {
        separated * 2 > shared.len()
    } else {
        ratio > 1.0 + SINGLE_RUN_NOISE
    };
    let worst = ranked
        .last()
        .filter(|_| ranked.len() > 2)
        .map(|(score, e)| (e.target.clone(), (score - ranked[0].0).exp()));
    let last = *shared.last().expect("not empty");
    let client_bound_cells = cells
        .iter()
        .filter(|c| (c.target == best.target || c.target == second.target) && shared.contains(&c.connections))
        .filter(|c| c.figures.client_bound)
        .count();
    Some(Finding {
        metric: m.name.into(),
        best: best.target.clone(),
        runner_up: second.target.clone(),
        ratio,
        clear,
        best_value: best.at(last).median,
        runner_up_value: second.at(last).median,
        connections: last,
        client_bound_cells,
        last: worst,
        unranked,
        class: None,
    })
}

/// Paired repeats (`paired = true`: the two targets measured in the same round, one right after
/// the other): is `best` better than `second` in so many rounds that chance would do it less
/// than one time in 20 (a one-sided sign test)?
fn paired_clear(cells: &[&Cell], m: &Metric, best: &str, second: &str, n: usize) -> bool {
    let value = |t: &str, r: usize| {
        cells
            .iter()
            .find(|c| c.target == t && c.connections == n && c.repeat == r)
            .and_then(|c| (m.get)(c))
    };
    let repeats = cells.iter().map(|c| c.repeat + 1).max().unwrap_or(0);
    let rounds: Vec<bool> = (0..repeats)
        .filter_map(|r| Some(better(m, value(best, r)?, value(second, r)?) > 1.0))
        .collect();
    let wins = rounds.iter().filter(|w| **w).count();
    sign_test(wins, rounds.len()) < 0.05
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

/// Every experiment's verdict.
pub fn all(experiments: &[Experiment], cells: &[Cell], repeats: usize, ctx: &Context) -> Vec<Verdict> {
    experiments
        .iter()
        .map(|x| verdict_with(x, cells, repeats, ctx))
        .collect()
}

#[cfg(test)]
mod verdicts {
    use crate::bench::results::{Cell, Figures};
    use crate::bench::scenario::parse;
    use crate::bench::verdict::verdict;

    fn cell(target: &str, conns: usize, repeat: usize, rps: f64, cpu: f64, syscalls: f64, bound: bool) -> Cell {
        Cell {
            experiment: "e".into(),
            target: target.into(),
            connections: conns,
            repeat,
            status: crate::bench::results::CellStatus::Ok,
            seconds: 1.0,
            figures: Figures {
                throughput_rps: rps,
                requests: 1000,
                p99_us: 1e6 / rps,
                server_cpu_us_per_req: Some(cpu),
                syscalls_per_req: Some(syscalls),
                client_bound: bound,
                ..Figures::default()
            },
            load: None,
            server_stats: None,
        }
    }

    fn experiment() -> crate::bench::scenario::Experiment {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"epoll\", \"poll\", \"thread\"]\nconnections = [10, 100]\nduration = \"1s\"\n";
        parse(text, "t").unwrap().experiments.remove(0)
    }

    /// A request class's p99 is ranked as every request's is, set against its service time,
    /// and the verdict says on how many server CPUs it ran.
    #[test]
    fn each_class_gets_a_p99_finding_against_its_service_time_and_the_cpus_are_said() {
        use crate::bench::results::ClassFigure;
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"reactor\", \"thread\"]\nconnections = [10]\nduration = \"1s\"\n\
                    work_from_request = true\nmix = [\"short=995:/?cpu=20us\", \"long=5:/?cpu=5ms\"]\n\
                    expect = [\"short p99: thread < reactor\"]\n";
        let x = parse(text, "t").unwrap().experiments.remove(0);
        let class = |name: &str, path: &str, p99: f64| ClassFigure {
            name: name.into(),
            path: path.into(),
            requests: 100,
            p99_us: Some(p99),
            ..Default::default()
        };
        let mut cells = Vec::new();
        for (t, short) in [("reactor", 6000.0), ("thread", 80.0)] {
            let mut c = cell(t, 10, 0, 5000.0, 30.0, 2.0, false);
            c.figures.classes = vec![class("short", "/?cpu=20us", short), class("long", "/?cpu=5ms", 9000.0)];
            cells.push(c);
        }
        let ctx = crate::bench::verdict::Context {
            server_cpus: Some(1),
            ..crate::bench::verdict::Context::DOCUMENTED
        };
        let v = crate::bench::verdict::verdict_with(&x, &cells, 1, &ctx);
        let short = v.findings.iter().find(|f| f.class.as_deref() == Some("short")).unwrap();
        assert_eq!((short.best.as_str(), short.runner_up.as_str()), ("thread", "reactor"));
        assert!(short.clear);
        for said in [
            "e (server on 1 CPU): ",
            "P99 latency of short requests: thread is best, 75.00× reactor (80us against 6.00ms at 10 connections).",
            "The short requests' p99 is 300× their 20us service time under reactor and 4.0× under thread: \
             under reactor they wait behind the long requests (5.00ms).",
            "P99 latency of long requests: no clear difference",
            "Expected shape 'short p99: thread < reactor' holds",
        ] {
            assert!(v.text.contains(said), "{said}\n{}", v.text);
        }
        assert_eq!(v.expected[0].held, Some(true));
    }

    /// An open loop whose targets all kept up with the rate names no throughput winner, even
    /// where three repeats' ranges do not overlap; one that fell behind is ranked as usual.
    #[test]
    fn an_open_loop_that_every_target_kept_up_with_has_no_throughput_winner() {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"reactor\", \"thread\"]\nconnections = [10]\nduration = \"1s\"\nrate = 5000\n";
        let x = parse(text, "t").unwrap().experiments.remove(0);
        let mut cells = Vec::new();
        for r in 0..3 {
            cells.push(cell("reactor", 10, r, 5011.0, 50.0, 2.0, false));
            cells.push(cell("thread", 10, r, 5006.0, 50.0, 2.0, false));
        }
        let v = verdict(&x, &cells, 3);
        assert!(
            v.text
                .contains("Throughput: no difference between reactor and thread (1.00×): an open loop at 5,000 req/s"),
            "{}",
            v.text
        );
        assert!(!v.findings[0].clear);
        for c in cells.iter_mut().filter(|c| c.target == "thread") {
            c.figures.throughput_rps = 800.0;
        }
        let v = verdict(&x, &cells, 3);
        assert!(
            v.text.contains("Throughput: reactor is best, 6.26× thread"),
            "{}",
            v.text
        );
    }

    /// With a target: capacity ranked first among the designs that do the work (a peer that
    /// does none is named, not ranked), and every target without a capacity said with why.
    #[test]
    fn capacity_ranks_the_designs_doing_the_work_and_says_why_others_have_none() {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"reactor\", \"epoll\", \"thread\"]\npeers = [\"nginx\"]\nconnections = [10]\n\
                    work = \"cpu:50us\"\nslo = \"p99<=10ms\"\n";
        let x = parse(text, "t").unwrap().experiments.remove(0);
        let capacity = |rps: Option<f64>, why: Option<&str>| crate::load::slo::Capacity {
            slo: "p99<=10ms".into(),
            rps,
            failed_at: None,
            probes: Vec::new(),
            inconclusive: why.map(String::from),
        };
        let mut cells = Vec::new();
        for (t, rps, why) in [
            ("reactor", Some(17_500.0), None),
            ("epoll", Some(14_000.0), None),
            ("thread", None, Some("the client could not offer more than 9,000 req/s")),
            ("nginx", Some(60_000.0), None),
        ] {
            // nginx (no work) and thread (no capacity) would be cheapest per request.
            let cpu = match t {
                "reactor" => 50.0,
                "epoll" => 60.0,
                _ => 5.0,
            };
            let mut c = cell(t, 10, 0, rps.unwrap_or(9000.0), cpu, 2.0, false);
            c.figures.capacity = Some(capacity(rps, why));
            cells.push(c);
        }
        let v = verdict(&x, &cells, 1);
        let f = &v.findings[0];
        assert_eq!(
            (f.metric.as_str(), f.best.as_str(), f.runner_up.as_str()),
            ("capacity at the target", "reactor", "epoll")
        );
        let cpu = v
            .findings
            .iter()
            .find(|f| f.metric == "server CPU per request")
            .unwrap();
        assert_eq!(
            (cpu.best.as_str(), cpu.runner_up.as_str()),
            ("reactor", "epoll"),
            "CPU per request ranks the designs doing the work at their capacity"
        );
        assert!(
            !v.text.contains("P99 latency"),
            "held probes' p99s do not compare: {}",
            v.text
        );
        assert!(
            v.text.contains("No capacity for thread (the client could not offer more than 9,000 req/s); nginx (it serves a fixed body"),
            "{}",
            v.text
        );
    }

    /// Ranked over every count, the best can still lose at the largest, whose values are
    /// quoted: the sentence says so instead of calling the smaller number the worse one.
    #[test]
    fn a_best_that_loses_at_the_largest_count_is_said_to_flip_there() {
        let mut cells = Vec::new();
        for r in 0..3 {
            let j = r as f64 * 0.01;
            for n in [10, 50] {
                cells.push(cell("epoll", n, r, 100_000.0, 2.0 + j, 2.0, false));
                cells.push(cell("poll", n, r, 100_000.0, 6.0 + j, 2.0, false));
            }
            cells.push(cell("epoll", 100, r, 100_000.0, 5.5 + j, 2.0, false));
            cells.push(cell("poll", 100, r, 100_000.0, 5.0 + j, 2.0, false));
        }
        let v = verdict(&experiment(), &cells, 3);
        assert!(
            v.text.contains("Server CPU per request: epoll is best over all counts")
                && v.text.contains("at 100 connections, where the order flips"),
            "{}",
            v.text
        );
    }

    /// Paired rounds drift: nginx's median (9.5) is below epoll's (10.2), yet epoll was cheaper
    /// than nginx in two of the three rounds, by 11% and 13%, and dearer in one by 24%. Ranked
    /// within rounds, epoll is the runner-up to uring and nginx is last, as the rounds' ratios say.
    #[test]
    fn paired_rounds_are_ranked_within_rounds_not_by_drifting_medians() {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    paired = true\nmodels = [\"epoll\", \"uring\"]\npeers = [\"nginx\"]\nconnections = [50]\nduration = \"1s\"\n";
        let x = parse(text, "t").unwrap().experiments.remove(0);
        let rounds = [(8.51, 7.42, 9.51), (10.34, 7.0, 8.33), (10.2, 9.7, 11.78)];
        let mut cells = Vec::new();
        for (r, (epoll, uring, nginx)) in rounds.into_iter().enumerate() {
            cells.push(cell("epoll", 50, r, 100_000.0, epoll, 2.0, false));
            cells.push(cell("uring", 50, r, 100_000.0, uring, 0.3, false));
            cells.push(cell("nginx", 50, r, 100_000.0, nginx, 2.0, false));
        }
        let cpu = |x: &crate::bench::scenario::Experiment| {
            let v = verdict(x, &cells, 3);
            let f = v.findings.into_iter().find(|f| f.metric == "server CPU per request");
            (f.unwrap(), v.text)
        };
        let (f, text) = cpu(&x);
        assert_eq!((f.best.as_str(), f.runner_up.as_str()), ("uring", "epoll"), "{text}");
        assert_eq!(f.last.as_ref().unwrap().0, "nginx", "{text}");
        // Unpaired, the medians rank nginx second.
        let mut unpaired = x.clone();
        unpaired.paired = false;
        let (f, text) = cpu(&unpaired);
        assert_eq!(f.runner_up, "nginx", "{text}");
    }

    /// The report's table bolds, in paired rounds, the target best within rounds: B's raw
    /// median CPU (9.5) is below A's (10.0), but A was cheaper in 2 of 3 rounds.
    #[test]
    fn a_paired_table_marks_the_best_within_rounds() {
        let text = "name = \"x\"\ndescription = \"d\"\nrepeats = 3\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    paired = true\nmodels = [\"epoll\", \"poll\"]\nconnections = [50]\nduration = \"1s\"\n";
        let scenario = parse(text, "t").unwrap();
        let mut cells = Vec::new();
        // Round 1 has the median throughput: its cells are the ones the table shows.
        for (r, (a, b)) in [(5.0, 6.0), (10.0, 9.5), (10.0, 11.0)].into_iter().enumerate() {
            let rps = 90_000.0 + 10_000.0 * r as f64;
            cells.push(cell("epoll", 50, r, rps, a, 2.0, false));
            cells.push(cell("poll", 50, r, rps, b, 2.0, false));
        }
        let mut results = crate::bench::results::Results {
            format: crate::bench::results::FORMAT,
            scenario,
            environment: Default::default(),
            cells,
            interrupted: false,
            verdicts: Vec::new(),
        };
        let page = crate::report::html::render(&results);
        assert!(page.contains("<td class=\"best\">10.0<br>"), "epoll's CPU is marked");
        assert!(
            !page.contains("<td class=\"best\">9.5<br>"),
            "poll's lower median is not"
        );
        // Unpaired, the lower median is the best.
        results.scenario.experiments[0].paired = false;
        let page = crate::report::html::render(&results);
        assert!(page.contains("<td class=\"best\">9.5<br>"));
    }

    #[test]
    fn the_sign_test_counts_the_chance_of_so_many_wins() {
        use crate::bench::results::sign_test;
        assert!((sign_test(8, 8) - 1.0 / 256.0).abs() < 1e-12);
        assert!((sign_test(0, 8) - 1.0).abs() < 1e-12);
        assert!((sign_test(7, 8) - 9.0 / 256.0).abs() < 1e-12);
        assert!(sign_test(6, 8) > 0.05);
    }

    /// Paired rounds: a target better in 7 of 8 rounds is clearly better even where the two
    /// ranges overlap (the machine drifted between rounds); better in 5 of 8 is not.
    #[test]
    fn a_paired_experiment_calls_a_difference_by_the_rounds_it_wins() {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    paired = true\nmodels = [\"epoll\", \"poll\"]\nconnections = [100]\nduration = \"1s\"\n";
        let x = parse(text, "t").unwrap().experiments.remove(0);
        for (wins, clear) in [(7, true), (5, false)] {
            let mut cells = Vec::new();
            for r in 0..8 {
                // The machine's state moves every round by far more than the gap.
                let drift = 1.0 + 0.1 * r as f64;
                let gap = if r < wins { 0.95 } else { 1.02 };
                cells.push(cell("epoll", 100, r, 100_000.0, 5.0 * drift * gap, 2.0, false));
                cells.push(cell("poll", 100, r, 100_000.0, 5.0 * drift, 2.0, false));
            }
            let v = verdict(&x, &cells, 8);
            let cpu = v
                .findings
                .iter()
                .find(|f| f.metric == "server CPU per request")
                .unwrap();
            assert_eq!((cpu.best.as_str(), cpu.clear), ("epoll", clear), "{}", v.text);
            if !clear {
                assert!(v.text.contains("not better in enough of 8 paired rounds"), "{}", v.text);
            }
        }
    }

    #[test]
    fn a_clear_winner_is_named_with_its_ratio_and_the_counters_behind_it() {
        let mut cells = Vec::new();
        for r in 0..3 {
            let j = r as f64;
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, 100_000.0 + j * 1000.0, 5.0 + j * 0.1, 2.0, false));
                cells.push(cell("poll", n, r, 80_000.0 + j * 1000.0, 6.5 + j * 0.1, 6.0, false));
                cells.push(cell("thread", n, r, 50_000.0 + j * 1000.0, 11.0, 2.0, true));
            }
        }
        let v = verdict(&experiment(), &cells, 3);
        let cpu = v
            .findings
            .iter()
            .find(|f| f.metric == "server CPU per request")
            .unwrap();
        assert_eq!(
            (cpu.best.as_str(), cpu.runner_up.as_str(), cpu.clear),
            ("epoll", "poll", true)
        );
        assert!((cpu.ratio - 6.6 / 5.1).abs() < 0.01, "{}", cpu.ratio);
        assert!(
            v.text.contains("Server CPU per request: epoll is best, 1.29× poll"),
            "{}",
            v.text
        );
        assert!(v.text.contains("last is thread"), "{}", v.text);
        assert!(
            v.text
                .contains("Why: epoll has 2.00 syscalls per request against 6.00 (≈ 1.1 µs), of the 1.5 µs gap in server CPU per request to poll."),
            "{}",
            v.text
        );
        assert!(v.text.contains("client was saturated in 6 of 18 cells"), "{}", v.text);
    }

    /// Two syscalls cannot cover 20 µs: a counter that differs a lot but accounts for little
    /// of the gap is not given as its reason.
    #[test]
    fn a_counter_too_small_to_cover_the_gap_is_not_its_reason() {
        let mut cells = Vec::new();
        for r in 0..3 {
            let j = r as f64 * 0.1;
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, 10_000.0, 114.0 + j, 0.05, false));
                cells.push(cell("poll", n, r, 9_000.0, 134.0 + j, 2.08, false));
            }
        }
        let costs = crate::bench::verdict::Context::DOCUMENTED;
        let v = crate::bench::verdict::verdict_with(&experiment(), &cells, 3, &costs);
        assert!(v.reasons.is_empty(), "{:?}", v.reasons);
        assert!(!v.text.contains("Why:"), "{}", v.text);
        assert!(
            v.text.contains(
                "The counters muxlab keeps do not explain the gap of 20.0 µs between epoll and poll: \
                 0.05 syscalls per request against 2.08 (≈ 0.5 µs) (epoll) account for too little of it."
            ),
            "{}",
            v.text
        );
        // The same counter at 80 syscalls' difference covers it.
        let more: Vec<Cell> = cells
            .into_iter()
            .map(|mut c| {
                if c.target == "poll" {
                    c.figures.syscalls_per_req = Some(80.0);
                }
                c
            })
            .collect();
        let v = crate::bench::verdict::verdict_with(&experiment(), &more, 3, &costs);
        assert!(
            v.text.contains("Why: epoll has 0.05 syscalls per request against 80"),
            "{}",
            v.text
        );
    }

    #[test]
    fn a_row_says_steal_time_above_two_percent_and_dashes_what_was_not_measured() {
        let mut c = cell("epoll", 10, 0, 1000.0, 5.0, 2.0, false);
        c.figures.steal_pct = Some(3.46);
        assert!(crate::report::table::row(&c).contains("steal 3.5%"));
        c.figures.steal_pct = Some(1.9);
        assert!(!crate::report::table::row(&c).contains("steal"));
        c.figures.server_cpu_us_per_req = None;
        c.figures.server_cpu_cores = None;
        let row = crate::report::table::row(&c);
        assert!(row.contains(" – ") && !row.contains(" 0.0 "), "{row}");
    }

    /// A paired run measures its first model twice per round; the twin is never ranked, and
    /// the largest difference between the two is the smallest this machine resolved.
    #[test]
    fn the_a_a_twin_is_not_ranked_and_its_spread_is_said() {
        let mut cells = Vec::new();
        for r in 0..3 {
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, 100_000.0, 5.0, 2.0, false));
                cells.push(cell("poll", n, r, 80_000.0, 6.5, 2.0, false));
                let twin = if r == 1 { 5.2 } else { 4.95 };
                cells.push(cell("epoll (A/A)", n, r, 200_000.0, twin, 2.0, false));
            }
        }
        let v = verdict(&experiment(), &cells, 3);
        let aa = v.aa.as_ref().unwrap();
        assert_eq!((aa.target.as_str(), aa.rounds), ("epoll", 6));
        assert!((aa.max_diff_pct - 4.0).abs() < 1e-9, "{aa:?}");
        assert!((aa.median_diff_pct - 1.0101).abs() < 0.001, "{aa:?}");
        assert!(
            v.text.contains(
                "A/A: epoll against itself in the same rounds was 1.0% apart in server CPU per request (median; up to 4.0%, 6 rounds)"
            ),
            "{}",
            v.text
        );
        assert!(
            v.text.contains("Throughput: epoll is best"),
            "the twin's 200k must not rank: {}",
            v.text
        );
        assert!(!v
            .findings
            .iter()
            .any(|f| f.best.contains("A/A") || f.runner_up.contains("A/A")));
    }

    /// A gap the rounds separate but smaller than what the first model differed from itself
    /// by is not resolved: no clear difference, and the sentence says why.
    #[test]
    fn a_gap_under_the_a_a_difference_is_no_clear_difference() {
        let mut cells = Vec::new();
        for r in 0..3 {
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, 100_000.0, 5.0, 2.0, false));
                cells.push(cell("poll", n, r, 80_000.0, 5.1, 2.0, false));
                cells.push(cell("epoll (A/A)", n, r, 100_000.0, 5.25, 2.0, false));
            }
        }
        let v = verdict(&experiment(), &cells, 3);
        let cpu = v
            .findings
            .iter()
            .find(|f| f.metric == "server CPU per request")
            .unwrap();
        assert!(!cpu.clear, "{}", v.text);
        assert!(
            v.text
                .contains("Server CPU per request: no clear difference between epoll and poll (1.02×, under the 5.0% the A/A pair differed by)"),
            "{}",
            v.text
        );
        assert!(v.text.contains("Throughput: epoll is best"), "{}", v.text);
    }

    #[test]
    fn a_gap_inside_the_spread_is_no_clear_difference_and_one_target_is_said() {
        let mut cells = Vec::new();
        for (r, (a, b)) in [(100_000.0, 99_000.0), (90_000.0, 101_000.0), (95_000.0, 94_000.0)]
            .into_iter()
            .enumerate()
        {
            for n in [10, 100] {
                cells.push(cell("epoll", n, r, a, 5.0, 2.0, false));
                cells.push(cell("poll", n, r, b, 5.0, 2.0, false));
            }
        }
        let v = verdict(&experiment(), &cells, 3);
        assert!(v.text.contains("Throughput: no clear difference between"), "{}", v.text);
        assert!(v.text.contains("inside the spread of 3 runs"), "{}", v.text);
        let only: Vec<Cell> = cells.into_iter().filter(|c| c.target == "epoll").collect();
        assert!(verdict(&experiment(), &only, 3).text.contains("only epoll finished"));
        assert!(verdict(&experiment(), &[], 3).text.contains("no cell finished"));
    }
}
