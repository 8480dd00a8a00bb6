//! Fidelity: whether a model stands for the product it is built after. Wherever an experiment
//! runs a peer beside the model that stands for it (`record::peer::Peer::stands_for`: Go's
//! net/http beside green, Node's http beside reactor or offload, nginx beside procs-accept,
//! redis-server and memcached beside their stores), each connection count gives a row: both
//! targets' p99 and server CPU per request, and their ratios (model ÷ product). The model
//! stands for the product on a row where both ratios are within [`WITHIN`]; where one is not,
//! the row says so with the cause where the cells' own figures name one (what bound each, the
//! context switches and threads each used, the time each waited for a CPU), and says that the
//! card cannot split it where they do not. A figure that may not be ranked (a starved or lost
//! cell, a p99 the client set, too few samples) is shown and not compared, with why.

use serde::{Deserialize, Serialize};

use super::bound;
use super::finding::Verdict;
use super::metric::{rankable, Rank, CPU, P99};
use crate::bench::record::peer::Peer;
use crate::bench::record::scenario::model_name;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{summarize, Cell};
use crate::units::fmt_us;

/// The name of the fidelity verdict.
pub const NAME: &str = "fidelity";

/// A model stands for its product where its p99 and its server CPU per request are each within
/// this factor of the product's (either way).
pub const WITHIN: f64 = 1.5;

/// A ratio as the table says it: two decimals, more where it is under 0.1 (never "0.00×").
pub fn ratio_said(r: f64) -> String {
    let digits = match r {
        r if r > 0.0 && r < 0.1 => (-r.log10()).floor() as usize + 2,
        _ => 2,
    };
    format!("{r:.digits$}×")
}

/// A ratio within [`WITHIN`] either way.
fn within(r: f64) -> bool {
    (1.0 / WITHIN..=WITHIN).contains(&r)
}

/// Two figures this far apart (either way) are a difference a cause may be named from.
const APART: f64 = 1.5;

/// One server this many times busier than the other (its CPUs' utilization), and slower: the
/// queueing follows.
const BUSIER: f64 = 1.2;

/// A server busier than this share of its CPUs queues for them enough to name (M/M/1: a
/// wait of at least the service time itself).
const BUSY_ENOUGH: f64 = 0.5;

/// What is said where no figure of the cells names the cause.
pub const UNNAMED: &str = "no figure of the cells names the cause (what bound each, how busy, context switches per \
     request, waiting for a CPU): what differs is in each one's own code, which the card does not split";

/// One product beside its model at one connection count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub experiment: String,
    pub connections: usize,
    /// The peer entry and the model entry beside it.
    pub product: String,
    pub model: String,
    /// Each one's p99 and server CPU per request (µs; `None`: not measured), and model ÷
    /// product where both may be compared.
    pub p99_product_us: Option<f64>,
    pub p99_model_us: Option<f64>,
    pub p99_ratio: Option<f64>,
    pub cpu_product_us: Option<f64>,
    pub cpu_model_us: Option<f64>,
    pub cpu_ratio: Option<f64>,
    /// Both ratios within [`WITHIN`] (`None`: neither could be compared).
    pub stands: Option<bool>,
    /// Why not, or why not compared; empty where it stands.
    pub cause: String,
}

/// The fidelity table's columns ([`Row::cells`]).
pub const COLUMNS: [&str; 12] = [
    "experiment",
    "conns",
    "product",
    "model",
    "p99 product",
    "p99 model",
    "p99 ratio",
    "CPU/req product",
    "CPU/req model",
    "CPU ratio",
    "stands",
    "cause",
];

impl Row {
    /// The row as the table shows it ([`COLUMNS`]): "–" for what was not measured or compared.
    pub fn cells(&self) -> [String; 12] {
        let v = |x: Option<f64>| x.map_or("–".to_string(), fmt_us);
        let r = |x: Option<f64>| x.map_or("–".to_string(), ratio_said);
        [
            self.experiment.clone(),
            self.connections.to_string(),
            self.product.clone(),
            self.model.clone(),
            v(self.p99_product_us),
            v(self.p99_model_us),
            r(self.p99_ratio),
            v(self.cpu_product_us),
            v(self.cpu_model_us),
            r(self.cpu_ratio),
            match (self.stands, self.one_figure()) {
                (Some(true), Some(f)) => format!("yes, on {f} only"),
                (Some(true), None) => "yes".to_string(),
                (Some(false), _) => "no".to_string(),
                (None, _) => "–".to_string(),
            },
            match self.cause.is_empty() {
                true => "–".to_string(),
                false => self.cause.clone(),
            },
        ]
    }

    /// The one figure compared, where only one was (`None`: both, or neither).
    pub fn one_figure(&self) -> Option<&'static str> {
        match (self.p99_ratio, self.cpu_ratio) {
            (Some(_), None) => Some("p99"),
            (None, Some(_)) => Some("CPU per request"),
            _ => None,
        }
    }

    /// The row in a sentence.
    pub fn sentence(&self) -> String {
        let v = |x: Option<f64>| x.map_or("–".to_string(), fmt_us);
        let r = |x: Option<f64>| x.map_or("not compared".to_string(), ratio_said);
        let said = match (self.stands, self.one_figure()) {
            (Some(true), Some(f)) => format!("stands for it on {f}, the one figure compared"),
            (Some(true), None) => "stands for it".to_string(),
            (Some(false), _) => format!("does not stand for it: {}", self.cause),
            (None, _) => format!("not compared: {}", self.cause),
        };
        let also = match (self.stands, self.cause.is_empty()) {
            (Some(true), false) => format!(" ({})", self.cause),
            _ => String::new(),
        };
        format!(
            "{}, {} connections: {} beside {}: p99 {} against {} ({}), server CPU per request {} against {} ({}): {said}{also}.",
            self.experiment,
            self.connections,
            self.model,
            self.product,
            v(self.p99_model_us),
            v(self.p99_product_us),
            r(self.p99_ratio),
            v(self.cpu_model_us),
            v(self.cpu_product_us),
            r(self.cpu_ratio),
        )
    }
}

/// One target at one connection count, as fidelity reads it: each figure the median over its
/// finished repeats (not compared where any repeat's may not be ranked, or none finished), and
/// the repeat of the median throughput for what names a cause.
struct Side<'a> {
    label: &'a str,
    cell: &'a Cell,
    p99: Rank,
    cpu: Rank,
}

/// The median of `m` over `repeats` (finished cells) that measured it: ranked where every one
/// is; else the first reason one is not, with the median of what was measured.
fn median_rank(m: &super::metric::Metric, repeats: &[&Cell], beside: &[&Cell]) -> Rank {
    let ranks: Vec<Rank> = repeats.iter().map(|c| rankable(m, c, beside)).collect();
    let mut values: Vec<f64> = ranks.iter().filter_map(|r| value(*r)).collect();
    if values.is_empty() {
        return Rank::NotMeasured;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = match n % 2 {
        1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    };
    // A repeat that measured nothing of it (a figure missing) is left out of the median.
    match ranks.iter().find_map(|r| r.why_not()) {
        Some(u) => Rank::Unranked(median, u),
        None => Rank::Ranked(median),
    }
}

impl<'a> Side<'a> {
    /// `cell` is the repeat of the median throughput (`summarize`); `repeats` every finished
    /// one.
    fn of(label: &'a str, cell: &'a Cell, repeats: &[&Cell], beside: &[&Cell]) -> Side<'a> {
        let finished: Vec<&Cell> = repeats.iter().copied().filter(|c| c.ok()).collect();
        let (p99, cpu) = match finished.is_empty() {
            true => (Rank::NotMeasured, Rank::NotMeasured),
            false => (
                median_rank(&P99, &finished, beside),
                median_rank(&CPU, &finished, beside),
            ),
        };
        Side { label, cell, p99, cpu }
    }

    fn switches_per_req(&self) -> Option<f64> {
        let f = &self.cell.figures;
        Some(f.context_switches? as f64 / f.requests.max(1) as f64).filter(|_| f.requests > 0)
    }

    /// The share of its CPUs it kept busy.
    fn busy(&self) -> Option<f64> {
        let f = &self.cell.figures;
        let n = f.why.as_ref()?.server_cpus?;
        Some(f.server_cpu_cores? / n.max(1) as f64).filter(|u| *u > 0.0)
    }

    /// Its threads' time waiting for a CPU, per request (µs).
    fn run_queue_us(&self) -> Option<f64> {
        let part = super::card::of(self.cell)?
            .parts
            .into_iter()
            .find(|p| p.name == "run-queue wait")?;
        part.us
    }
}

/// The value of a rank, where it was measured.
fn value(r: Rank) -> Option<f64> {
    match r {
        Rank::Ranked(v) | Rank::Unranked(v, _) => Some(v),
        Rank::NotMeasured => None,
    }
}

/// `a` and `b` at least [`APART`] apart.
fn apart(a: f64, b: f64) -> bool {
    a > 0.0 && b > 0.0 && (a / b >= APART || b / a >= APART)
}

/// What the cells' own figures name as the cause of a gap. For p99: what bound each, where it
/// differs; how busy each kept its CPUs (a queue's wait grows with its utilization); the time
/// its threads waited for a CPU. For CPU: the context switches each made per request. Empty
/// where none of them differs.
fn cause(m: &Side, p: &Side, cpu_out: bool, p99_out: bool) -> Vec<String> {
    let mut said: Vec<String> = Vec::new();
    if p99_out {
        if let (Some(bm), Some(bp)) = (bound::of(m.cell), bound::of(p.cell)) {
            if bm.bound != bp.bound {
                said.push(format!(
                    "{} was bound by {} ({}), {} by {} ({})",
                    m.label,
                    bm.bound.name(),
                    bm.evidence,
                    p.label,
                    bp.bound.name(),
                    bp.evidence
                ));
            }
        }
        if let (Some(a), Some(b), Some(pa), Some(pb)) = (m.busy(), p.busy(), value(m.p99), value(p.p99)) {
            // Busier and slower, or idler and faster: the queueing follows the utilization.
            let queued = a.max(b) >= BUSY_ENOUGH;
            if queued && ((a / b >= BUSIER && pa > pb) || (b / a >= BUSIER && pb > pa)) {
                said.push(format!(
                    "{} kept its CPUs {:.0}% busy, {} {:.0}%: a queue waits longer the busier its server",
                    m.label,
                    a * 100.0,
                    p.label,
                    b * 100.0
                ));
            }
        }
        if let (Some(a), Some(b)) = (m.run_queue_us(), p.run_queue_us()) {
            let least_p99 = value(m.p99).unwrap_or(f64::MAX).min(value(p.p99).unwrap_or(f64::MAX));
            if apart(a, b) && a.max(b) >= 0.1 * least_p99 {
                said.push(format!(
                    "{}'s threads waited {} per request for a CPU, {}'s {}",
                    m.label,
                    fmt_us(a),
                    p.label,
                    fmt_us(b)
                ));
            }
        }
    }
    if cpu_out {
        if let (Some(a), Some(b)) = (m.switches_per_req(), p.switches_per_req()) {
            if apart(a, b) && a.max(b) >= 0.1 {
                said.push(format!(
                    "{} made {a:.2} context switches per request, {} {b:.2}",
                    m.label, p.label
                ));
            }
        }
    }
    said
}

/// Where another entry of the same product differs from `r`'s in one way the product
/// documents, and on a figure `r` is out on the model is within [`WITHIN`] of that other entry
/// in the same cells: that way, as the cause of the figure's gap. Returns the cause and whether
/// it covers every figure `r` is out on.
fn sibling(r: &Row, rows: &[Row]) -> Option<(String, bool)> {
    let this = Peer::parse(&r.product).ok()?;
    let out = |x: Option<f64>| x.is_some_and(|x| !within(x));
    let gaps = [("p99", r.p99_ratio), ("server CPU per request", r.cpu_ratio)];
    rows.iter().find_map(|o| {
        let how = this.differs_from(Peer::parse(&o.product).ok()?)?;
        let same = o.experiment == r.experiment && o.connections == r.connections && o.model == r.model;
        if !same {
            return None;
        }
        let theirs = [o.p99_ratio, o.cpu_ratio];
        let named: Vec<String> = gaps
            .iter()
            .zip(theirs)
            .filter(|((_, mine), _)| out(*mine))
            .filter_map(|((what, _), their)| {
                let t = their.filter(|t| within(*t))?;
                Some(format!(
                    "on {what} {} stands for {} ({})",
                    r.model,
                    o.product,
                    ratio_said(t)
                ))
            })
            .collect();
        if named.is_empty() {
            return None;
        }
        let all = named.len() == gaps.iter().filter(|(_, m)| out(*m)).count();
        Some((
            format!("{}, and the two differ only in this: {how}", named.join(" and ")),
            all,
        ))
    })
}

/// The row of `product` beside `model` in `x` at `conns`, from their cells.
fn row(x: &Experiment, product: &str, model: &str, conns: usize, beside: &[&Cell], p: &Cell, m: &Cell) -> Row {
    let repeats = |t: &str| -> Vec<&Cell> {
        beside
            .iter()
            .copied()
            .filter(|c| c.target == t && c.connections == conns)
            .collect()
    };
    let (ps, ms) = (
        Side::of(product, p, &repeats(product), beside),
        Side::of(model, m, &repeats(model), beside),
    );
    let ratio = |a: Rank, b: Rank| Some(a.ranked()? / b.ranked()?).filter(|r| r.is_finite() && *r > 0.0);
    let (p99_ratio, cpu_ratio) = (ratio(ms.p99, ps.p99), ratio(ms.cpu, ps.cpu));
    let out = |r: Option<f64>| r.is_some_and(|r| !within(r));
    let (p99_out, cpu_out) = (out(p99_ratio), out(cpu_ratio));
    let stands = match (p99_ratio, cpu_ratio) {
        (None, None) => None,
        _ => Some(!p99_out && !cpu_out),
    };
    // Why a figure was not compared, where one was not.
    let mut why_not: Vec<String> = Vec::new();
    for (what, s) in [
        ("p99", &ms),
        ("p99", &ps),
        ("CPU per request", &ms),
        ("CPU per request", &ps),
    ] {
        let r = if what == "p99" { s.p99 } else { s.cpu };
        let said = match (r, &s.cell.status) {
            (_, st) if !s.cell.ok() => format!("{}'s cell did not finish ({})", s.label, st.text()),
            (Rank::NotMeasured, _) => format!("{}'s {what} was not measured", s.label),
            (Rank::Unranked(_, u), _) => format!("{}'s {what} is not compared: {}", s.label, u.said()),
            (Rank::Ranked(_), _) => continue,
        };
        if !why_not.contains(&said) {
            why_not.push(said);
        }
    }
    let cause = match stands {
        Some(false) => {
            let mut c = cause(&ms, &ps, cpu_out, p99_out);
            if c.is_empty() {
                c.push(UNNAMED.to_string());
            }
            c.extend(why_not);
            c.join("; ")
        }
        _ => why_not.join("; "),
    };
    Row {
        experiment: x.name.clone(),
        connections: conns,
        product: product.to_string(),
        model: model.to_string(),
        p99_product_us: value(ps.p99),
        p99_model_us: value(ms.p99),
        p99_ratio,
        cpu_product_us: value(ps.cpu),
        cpu_model_us: value(ms.cpu),
        cpu_ratio,
        stands,
        cause,
    }
}

/// The model entry of `x` that stands for `peer`: of the entries of its model, the one with as
/// many workers as the product has threads serving, else the first.
fn model_for(x: &Experiment, peer: Peer) -> Option<&String> {
    let of: Vec<&String> = x.models.iter().filter(|m| model_name(m) == peer.stands_for()).collect();
    let workers = |m: &str| -> Option<usize> {
        let w: Vec<&str> = m.split_whitespace().collect();
        let given = w
            .windows(2)
            .find(|p| p[0] == "--workers")
            .and_then(|p| p[1].parse().ok());
        given.or(x.workers)
    };
    let threads = peer.serving_threads(x.workers);
    of.iter()
        .copied()
        .find(|m| threads.is_some() && workers(m) == threads)
        .or(of.first().copied())
}

/// Every product beside its model in `experiments`, a row per connection count.
pub fn rows(experiments: &[Experiment], cells: &[Cell]) -> Vec<Row> {
    let measured: Vec<Cell> = cells
        .iter()
        .filter(|c| c.calibration.is_none() && !c.twin)
        .cloned()
        .collect();
    let summaries = summarize(&measured);
    let mut out = Vec::new();
    // A capacity search measures each target at its own rate: no cells to set side by side.
    for x in experiments.iter().filter(|x| x.load.slo.is_none()) {
        let beside: Vec<&Cell> = measured.iter().filter(|c| c.experiment == x.name).collect();
        for product in &x.peers {
            let Ok(peer) = Peer::parse(product) else { continue };
            // A product that does none of the experiment's work serves another load.
            if (x.work.is_some() || x.work_from_request) && !peer.does_work() {
                continue;
            }
            let Some(model) = model_for(x, peer) else { continue };
            for &conns in &x.connections {
                let find = |t: &str| {
                    summaries
                        .iter()
                        .find(|s| s.cell.experiment == x.name && s.cell.target == t && s.cell.connections == conns)
                        .map(|s| &s.cell)
                };
                if let (Some(p), Some(m)) = (find(product), find(model)) {
                    out.push(row(x, product, model, conns, &beside, p, m));
                }
            }
        }
    }
    // A measured cause from a sibling entry comes first: it is the experiment's own control.
    let named: Vec<Option<(String, bool)>> = out
        .iter()
        .map(|r| (r.stands == Some(false)).then(|| sibling(r, &out)).flatten())
        .collect();
    for (r, n) in out.iter_mut().zip(named) {
        if let Some((n, all)) = n {
            r.cause = match (all, r.cause.strip_prefix(UNNAMED)) {
                // Every gap named: the card's "nothing names it" is no longer true.
                (true, Some(rest)) => format!("{n}{rest}"),
                _ => format!("{n}; {}", r.cause),
            };
        }
    }
    out
}

/// The fidelity verdict of `experiments` (`None` where no product ran beside its model).
pub fn verdict(experiments: &[Experiment], cells: &[Cell]) -> Option<Verdict> {
    let rows = rows(experiments, cells);
    if rows.is_empty() {
        return None;
    }
    let compared: Vec<&Row> = rows.iter().filter(|r| r.stands.is_some()).collect();
    let stand = compared.iter().filter(|r| r.stands == Some(true)).count();
    let not: Vec<String> = compared
        .iter()
        .filter(|r| r.stands == Some(false))
        .map(|r| {
            let mut gaps = Vec::new();
            for (what, ratio) in [("p99", r.p99_ratio), ("CPU", r.cpu_ratio)] {
                if let Some(x) = ratio.filter(|x| !within(*x)) {
                    gaps.push(format!("{what} {}", ratio_said(x)));
                }
            }
            format!(
                "{} for {} in {} ({})",
                r.model,
                r.product,
                r.experiment,
                gaps.join(", ")
            )
        })
        .collect();
    let mut headline = format!(
        "Each model stands for its product (p99 and server CPU per request within {WITHIN}×) in {stand} of {} pairs compared",
        compared.len()
    );
    let partly = compared
        .iter()
        .filter(|r| r.stands == Some(true) && r.one_figure().is_some())
        .count();
    if partly > 0 {
        headline.push_str(&format!(" ({partly} of them on one figure, the other not compared)"));
    }
    if rows.len() > compared.len() {
        headline.push_str(&format!(", {} not compared", rows.len() - compared.len()));
    }
    match not.is_empty() {
        true => headline.push('.'),
        false => headline.push_str(&format!("; not: {}.", not.join("; "))),
    }
    let mut text = format!(
        "{NAME}: each product beside the model that stands for it, on the same cells (ratios are the model's figure over the product's)."
    );
    for r in &rows {
        text.push('\n');
        text.push_str(&r.sentence());
    }
    Some(Verdict {
        experiment: NAME.to_string(),
        text,
        findings: Vec::new(),
        reasons: Vec::new(),
        aa: None,
        expected: Vec::new(),
        headline,
        table: Vec::new(),
        fidelity: rows,
    })
}

#[cfg(test)]
mod tests;
