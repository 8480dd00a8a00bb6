//! Each product paired with the model entry that stands for it, a row per connection count
//! from their cells (a cause named where a ratio is out), and the fidelity verdict over the
//! rows.

use super::cause::{cause, sibling, UNNAMED};
use super::row::{ratio_said, within, Row, WITHIN};
use super::side::{value, Side};
use crate::bench::judge::metric::Rank;
use crate::bench::record::peer::Peer;
use crate::bench::record::scenario::model_name;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{summarize, Cell};

/// The name of the fidelity verdict.
pub const NAME: &str = "fidelity";

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
    // The model's figure over the product's, where both may be ranked and ran placed alike.
    let ratio = |a: Rank, b: Rank| {
        let (a, b) = (a.ranked()?, b.ranked()?);
        a.alike(b)
            .then(|| a.get() / b.get())
            .filter(|r| r.is_finite() && *r > 0.0)
    };
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
    let apart = |a: Rank, b: Rank| a.ranked().zip(b.ranked()).is_some_and(|(a, b)| !a.alike(b));
    if apart(ms.p99, ps.p99) || apart(ms.cpu, ps.cpu) {
        let at = |s: &Side| s.cell.placed.as_ref().map_or("where not recorded".into(), |p| p.said());
        why_not.push(format!(
            "not compared: placements differ ({}: {}; {}: {})",
            ms.label,
            at(&ms),
            ps.label,
            at(&ps)
        ));
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
pub(super) fn model_for(x: &Experiment, peer: Peer) -> Option<&String> {
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
            if peer.idle_in(x) {
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
    Some(Said { headline, text, rows })
}
