//! Why a model does not stand for its product, from the cells' own figures ([`cause`]) or
//! from a sibling entry of the same product the model does stand for ([`sibling`]); what is
//! said where neither names it ([`UNNAMED`]).

use super::super::bound;
use super::row::{ratio_said, within, Row};
use super::side::{value, Side};
use crate::bench::record::peer::Peer;
use crate::units::fmt_us;

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

/// `a` and `b` at least [`APART`] apart.
fn apart(a: f64, b: f64) -> bool {
    a > 0.0 && b > 0.0 && (a / b >= APART || b / a >= APART)
}

/// What the cells' own figures name as the cause of a gap. For p99: what bound each, where it
/// differs; how busy each kept its CPUs (a queue's wait grows with its utilization); the time
/// its threads waited for a CPU. For CPU: the context switches each made per request. Empty
/// where none of them differs.
pub(super) fn cause(m: &Side, p: &Side, cpu_out: bool, p99_out: bool) -> Vec<String> {
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
pub(super) fn sibling(r: &Row, rows: &[Row]) -> Option<(String, bool)> {
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
