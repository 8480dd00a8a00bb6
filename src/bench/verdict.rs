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

#[cfg(test)]
mod verdicts;
