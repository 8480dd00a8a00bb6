//! Each product paired with the model entries that stand for it, a row per connection count
//! from their cells (the shapes compared round by round, a gap priced where one differs), and
//! the fidelity verdict over the rows.

use super::answer::{self, ratio_said, Answer, Interval, MARGIN};
use super::cause::priced;
use super::row::Row;
use super::side::{median_of, Side};
use crate::bench::judge::metric::{Metric, P50, P99};
use crate::bench::record::peer::Peer;
use crate::bench::record::scenario::{model_name, rate_of, Experiment};
use crate::bench::record::Cell;
use crate::units::thousands;

/// The name of the fidelity verdict.
pub const NAME: &str = "fidelity";

/// A utilization this far from the one aimed at (either way) is said beside the row.
pub const AIM_OFF: f64 = 0.05;

/// The workers of a model entry (its `--workers`, else the experiment's).
fn workers_of(x: &Experiment, entry: &str) -> Option<usize> {
    let w: Vec<&str> = entry.split_whitespace().collect();
    w.windows(2)
        .find(|p| p[0] == "--workers")
        .and_then(|p| p[1].parse().ok())
        .or(x.workers)
}

/// How the pair was loaded alike, in words, and what to note of it: each at a share of its own
/// CPUs (`busy_of`); one rate (a pool's occupancy where the work is a blocking call; Go keeps
/// no pool); a closed loop.
fn load_said(x: &Experiment, peer: Peer, model: &str, call_us: f64) -> (String, Option<f64>, String) {
    if let Some((share, _)) = x.busy_of.as_deref().and_then(|b| rate_of(b).ok()) {
        return (
            format!("each {:.0}% busy by its own E[S]", share * 100.0),
            Some(share),
            String::new(),
        );
    }
    // A rate an earlier experiment set (`rate_of`): one rate for both, worked out at run time.
    if let (None, Some(spec)) = (x.load.rate, &x.rate_of) {
        return (format!("one rate, {spec}"), None, String::new());
    }
    let Some(rate) = x.load.rate.map(|r| r.per_s()) else {
        return (
            "a closed loop".to_string(),
            None,
            "a closed loop: each side's load is what its connections make of it (its latency is its connections over its \
             throughput), not an equal one"
                .into(),
        );
    };
    let said = format!("one rate, {} req/s", thousands(rate.round() as u64));
    if call_us <= 0.0 {
        return (said, None, String::new());
    }
    // A blocking call's queue is its pool: λ·E[call] / the pool's threads.
    let pool = match peer {
        Peer::Node { worker_threads } if worker_threads > 0 => Some(worker_threads),
        _ => None,
    };
    let model_pool = (model_name(model) == "offload").then(|| workers_of(x, model)).flatten();
    let occupancy = |n: usize| rate * call_us / 1e6 / n.max(1) as f64;
    match (pool, model_pool) {
        (Some(a), Some(b)) => (
            format!(
                "{said}: a pool of {a} at {:.0}%, of {b} at {:.0}%",
                occupancy(a) * 100.0,
                occupancy(b) * 100.0
            ),
            None,
            String::new(),
        ),
        _ if matches!(peer, Peer::Go { .. }) => (
            said,
            None,
            "Go keeps no pool for a blocking call (a thread per call in a system call, none in time.Sleep): compared at equal λ"
                .into(),
        ),
        _ => (said, None, String::new()),
    }
}

/// The model's shape over the product's round by round on `m`, and why a round was not
/// compared.
fn ratios(
    m: &'static Metric,
    ms: &Side,
    ps: &Side,
    beside: &[&Cell],
    why: &mut Vec<String>,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut ratio, mut sm, mut sp) = (Vec::new(), Vec::new(), Vec::new());
    for mc in &ms.rounds {
        let Some(pc) = ps.round(mc.repeat) else { continue };
        match (ms.shape(m, mc, beside), ps.shape(m, pc, beside)) {
            // Placed differently (the rule's `alike`): not compared.
            (Ok((_, ra)), Ok((_, rb))) if !ra.alike(rb) => {
                let at = |c: &Cell| c.placed.as_ref().map_or("where not recorded".into(), |p| p.said());
                let said = format!(
                    "not compared: placements differ ({}: {}; {}: {})",
                    ms.label,
                    at(mc),
                    ps.label,
                    at(pc)
                );
                if !why.contains(&said) {
                    why.push(said);
                }
            }
            (Ok((a, _)), Ok((b, _))) => {
                ratio.push(a / b);
                sm.push(a);
                sp.push(b);
            }
            (a, b) => {
                let said = [(ms.label, a.err()), (ps.label, b.err())];
                for e in said.into_iter().filter_map(|(l, e)| Some(format!("{l}'s {}", e?))) {
                    if !why.contains(&e) {
                        why.push(e);
                    }
                }
            }
        }
    }
    (ratio, sm, sp)
}

/// What to note of the load a pair ran at: one rate for a pair limited by its CPUs is not
/// equal load where their busy shares differ; under `busy_of`, a side off its aim by more than
/// [`AIM_OFF`], or whose busy share was not measured.
fn load_notes(x: &Experiment, aimed: Option<f64>, call: f64, ms: &Side, ps: &Side) -> Vec<String> {
    let mut notes = Vec::new();
    let one_rate = x.load.rate.is_some() || x.rate_of.is_some();
    let one_rate_cpu = aimed.is_none() && call <= 0.0 && one_rate;
    if let (true, Some((a, b))) = (one_rate_cpu, ms.busy().zip(ps.busy())) {
        if (a - b).abs() > AIM_OFF {
            notes.push(format!(
                "one rate is not equal load: {} kept its CPUs {:.0}% busy, {} {:.0}% (busy_of compares at one utilization)",
                ms.label,
                a * 100.0,
                ps.label,
                b * 100.0
            ));
        }
    }
    let Some(aim) = aimed else { return notes };
    for s in [ms, ps] {
        match s.busy() {
            Some(b) if (b - aim).abs() > AIM_OFF => notes.push(format!(
                "{} kept its CPUs {:.0}% busy, not the {:.0}% aimed at",
                s.label,
                b * 100.0,
                aim * 100.0
            )),
            Some(_) => {}
            None if s.rounds.is_empty() => {}
            None => notes.push(format!(
                "how busy {} kept its CPUs was not measured: the aim of {:.0}% is not checked",
                s.label,
                aim * 100.0
            )),
        }
    }
    notes
}

/// Why a pair is unresolved, from its figures' intervals.
fn unresolved(i50: Option<Interval>, i99: Option<Interval>) -> String {
    let rounds = [i50, i99].iter().flatten().map(|i| i.rounds).min().unwrap_or(0);
    let crosses = [i50, i99].iter().flatten().any(|i| i.answer() == Answer::Unresolved);
    match (rounds < answer::LEAST_ROUNDS, crosses) {
        (true, _) => format!("{rounds} round: no interval (more rounds: bench --repeats)"),
        (false, true) => format!(
            "the rounds' interval crosses the {MARGIN}× margin over {rounds} rounds (more rounds narrow it: bench --repeats)"
        ),
        // Within the margin on one figure, the other not compared.
        (false, false) => format!(
            "within {MARGIN}× on {} only, the other figure not compared",
            if i50.is_some() { "p50" } else { "p99" }
        ),
    }
}

/// The row of `product` beside `model` in `x` at `conns`.
fn row(x: &Experiment, peer: Peer, product: &str, model: &str, conns: usize, beside: &[&Cell]) -> Row {
    // The work's mean blocking call, as the models' cells record it (a product's do not): the
    // same work for both.
    let call = beside
        .iter()
        .filter(|c| c.connections == conns)
        .filter_map(|c| c.figures.why.as_ref()?.work_sleep_us)
        .fold(0.0, f64::max);
    let (ms, ps) = (
        Side::of(model, conns, beside, call),
        Side::of(product, conns, beside, call),
    );
    let (load, aimed, mut note) = load_said(x, peer, model, call);
    let mut why: Vec<String> = Vec::new();
    for (s, label) in [(&ms, model), (&ps, product)] {
        if s.rounds.is_empty() {
            let status = beside
                .iter()
                .find(|c| c.target == label && c.connections == conns)
                .map_or("no cell ran".to_string(), |c| c.status.text().to_string());
            why.push(format!("{label}'s cells did not finish ({status})"));
        }
    }
    let (r50, m50, p50) = ratios(&P50, &ms, &ps, beside, &mut why);
    let (r99, m99, p99) = ratios(&P99, &ms, &ps, beside, &mut why);
    let (i50, i99) = (Interval::of(&r50), Interval::of(&r99));
    let answer = answer::of(&[i50, i99]);
    for off in load_notes(x, aimed, call, &ms, &ps) {
        note = match note.is_empty() {
            true => off,
            false => format!("{note}; {off}"),
        };
    }
    let blocking = call > 0.0;
    let cause = match answer {
        Some(Answer::Differs) => {
            // The gap priced: p99's where it differs (the tail is the question), else p50's.
            let out = [("p99", 0.99, i99, &m99, &p99), ("p50", 0.5, i50, &m50, &p50)]
                .into_iter()
                .find(|(.., i, _, _)| i.is_some_and(|i| i.answer() == Answer::Differs));
            let mut said = match out {
                Some((what, q, _, sm, sp)) => match median_of(sm.clone()).zip(median_of(sp.clone())) {
                    Some((a, b)) => priced(&ms, &ps, what, q, a, b, blocking).said(),
                    None => String::new(),
                },
                None => String::new(),
            };
            // What was left out of the comparison is said with it.
            for w in &why {
                said.push_str("; ");
                said.push_str(w);
            }
            said
        }
        Some(Answer::Unresolved) => {
            let mut said = unresolved(i50, i99);
            if !why.is_empty() {
                said.push_str("; ");
                said.push_str(&why.join("; "));
            }
            said
        }
        Some(Answer::Stands) => why.join("; "),
        None => why.join("; "),
    };
    let (cm, cp) = (ms.cpu(beside), ps.cpu(beside));
    let cpu_ratio = cm
        .ranked()
        .zip(cp.ranked())
        .filter(|(a, b)| a.alike(*b))
        .map(|(a, b)| a.get() / b.get())
        .filter(|r| r.is_finite() && *r > 0.0);
    Row {
        experiment: x.name.clone(),
        connections: conns,
        product: product.to_string(),
        model: model.to_string(),
        load,
        aimed,
        service_product_us: ps.service_us,
        service_model_us: ms.service_us,
        service_from: format!("{}'s {}; {}'s {}", ms.label, ms.service_from, ps.label, ps.service_from),
        busy_product: ps.busy(),
        busy_model: ms.busy(),
        p50_product_es: median_of(p50),
        p50_model_es: median_of(m50),
        p99_product_es: median_of(p99),
        p99_model_es: median_of(m99),
        p50_ratio: i50,
        p99_ratio: i99,
        cpu_product_us: cp.measured(),
        cpu_model_us: cm.measured(),
        cpu_ratio,
        answer,
        cause,
        note,
    }
}

/// The model entries of `x` that stand for `peer`: of each model the product is built on, the
/// entry with as many workers as the product has threads serving, else its first.
pub(super) fn models_for(x: &Experiment, peer: Peer) -> Vec<&String> {
    let threads = peer.serving_threads(x.workers);
    peer.stands_for()
        .iter()
        .filter_map(|name| {
            let of: Vec<&String> = x.models.iter().filter(|m| model_name(m) == *name).collect();
            of.iter()
                .copied()
                .find(|m| threads.is_some() && workers_of(x, m) == threads)
                .or(of.first().copied())
        })
        .collect()
}

/// Every product beside the models that stand for it in `experiments`, a row per connection
/// count.
pub fn rows(experiments: &[Experiment], cells: &[Cell]) -> Vec<Row> {
    let mut out = Vec::new();
    // A capacity search measures each target at its own rate: no cells to set side by side.
    // An experiment a later one's `busy_of` names, with no `busy_of` of its own, measures the
    // costs that set their rates: not a load the pair is compared at. A rung of a ladder
    // (`busy_of` itself, named by the next rung) is.
    let sources: Vec<&str> = experiments
        .iter()
        .filter_map(|x| Some(rate_of(x.busy_of.as_deref()?).ok()?.1))
        .collect();
    let compared = |x: &Experiment| x.busy_of.is_some() || !sources.contains(&x.name.as_str());
    for x in experiments.iter().filter(|x| x.load.slo.is_none() && compared(x)) {
        let beside: Vec<&Cell> = cells
            .iter()
            .filter(|c| c.experiment == x.name && c.compared())
            .collect();
        for product in &x.peers {
            let Ok(peer) = Peer::parse(product) else { continue };
            // A product that does none of the experiment's work serves another load.
            if peer.idle_in(x) {
                continue;
            }
            for model in models_for(x, peer) {
                for &conns in &x.connections {
                    let ran = |t: &str| beside.iter().any(|c| c.target == t && c.connections == conns);
                    if ran(product) && ran(model) {
                        out.push(row(x, peer, product, model, conns, &beside));
                    }
                }
            }
        }
    }
    out
}

/// The fidelity verdict's parts: the answer first, the text a person reads, and the rows.
#[derive(Debug, Clone)]
pub struct Said {
    pub headline: String,
    pub text: String,
    pub rows: Vec<Row>,
}

/// The fidelity verdict of `experiments` (`None` where no product ran beside its model).
pub fn verdict(experiments: &[Experiment], cells: &[Cell]) -> Option<Said> {
    let rows = rows(experiments, cells);
    if rows.is_empty() {
        return None;
    }
    let count = |a: Answer| rows.iter().filter(|r| r.answer == Some(a)).count();
    let compared = rows.iter().filter(|r| r.answer.is_some()).count();
    let mut headline = format!(
        "Each in its own service time E[S] (at equal load where busy_of set it; each row says its load), {} of \
         {compared} pairs stand for their product \
         (p50 and p99 within {MARGIN}× in the rounds' interval), {} differ and {} are unresolved",
        count(Answer::Stands),
        count(Answer::Differs),
        count(Answer::Unresolved)
    );
    if rows.len() > compared {
        headline.push_str(&format!(", {} not compared", rows.len() - compared));
    }
    let differ: Vec<String> = rows
        .iter()
        .filter(|r| r.answer == Some(Answer::Differs))
        .map(|r| {
            let gaps: Vec<String> = [("p50", r.p50_ratio), ("p99", r.p99_ratio)]
                .iter()
                .filter_map(|(w, i)| {
                    i.filter(|i| i.answer() == Answer::Differs)
                        .map(|i| format!("{w} {}", ratio_said(i.median)))
                })
                .collect();
            format!(
                "{} for {} in {} ({})",
                r.model,
                r.product,
                r.experiment,
                gaps.join(", ")
            )
        })
        .collect();
    match differ.is_empty() {
        true => headline.push('.'),
        false => headline.push_str(&format!("; differ: {}.", differ.join("; "))),
    }
    let mut text = format!(
        "{NAME}: each product beside the model that stands for it, at equal load, p50 and p99 past the round trip in \
         each one's own E[S] (ratios are the model's over the product's, the median and the median's interval over the \
         rounds); \
         server CPU per request is the implementations' cost, shown beside."
    );
    for r in &rows {
        text.push('\n');
        text.push_str(&r.sentence());
    }
    Some(Said { headline, text, rows })
}
