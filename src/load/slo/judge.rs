//! One probe judged on what it measured: errors and refusals fail it (the server's), a bound
//! with too few samples says nothing, a latency miss is the server's unless the client's own
//! lateness accounts for it or its CPUs were saturated (it cannot then tell its own delay in
//! reading from the server's), and a target that held is the client's limit only where the
//! client did not offer the rate ([`ClientLimit`], the one definition).

use super::{Nothing, Probe};
use crate::load::{ClientLimit, Document, Slo};
use crate::units::{fmt_us, thousands};

/// Judges one probe's document against `slo`.
pub fn judge(slo: &Slo, offered: f64, doc: &Document) -> Probe {
    let r = &doc.results;
    let open = r.open_loop.as_ref();
    let secs = r.duration_s;
    let mut p = Probe {
        offered_rps: offered,
        achieved_rps: open.map(|o| o.achieved_rps),
        sent_rps: (secs > 0.0).then(|| r.sent as f64 / secs),
        p50_us: r.latency_us.p50,
        p99_us: r.latency_us.p99,
        window_s: Some(secs),
        samples: Some(r.latency_us.count),
        client_cpu: Some(r.client_cpu_utilization),
        send_lag_p99_us: open.and_then(|o| o.send_lag_us.p99),
        waited_for_connection: open.map(|o| o.waited_for_connection),
        errors: Some(r.error_total),
        ..Probe::default()
    };
    let (holds, nothing, note) = verdict(slo, offered, doc);
    p.holds = holds;
    p.nothing = nothing;
    p.note = note;
    p
}

/// The probe's verdict: holds, and if not, why (or why it says nothing).
fn verdict(slo: &Slo, offered: f64, doc: &Document) -> (Option<bool>, Option<Nothing>, Option<String>) {
    let r = &doc.results;
    let fail = |why: String| (Some(false), None, Some(why));
    // Errors and refusals are the server's failure whatever the latency: a request it reset
    // or refused is not one it served within the target.
    if r.error_total > 0 {
        let kinds: Vec<String> = r.errors.iter().map(|(k, n)| format!("{} {k}", thousands(*n))).collect();
        return fail(format!("{} errors ({})", thousands(r.error_total), kinds.join(", ")));
    }
    if r.non_2xx_3xx > 0 {
        return fail(format!("{} responses not 2xx/3xx", thousands(r.non_2xx_3xx)));
    }
    // Each bound judged only on enough samples: ten beyond its quantile.
    for b in &slo.0 {
        let n = latency_of(doc, b.class.as_deref()).map_or(0, |l| l.count);
        let need = b.quantile.fewest_samples();
        if n < need {
            let class = b.class.as_ref().map(|c| format!("{c}:")).unwrap_or_default();
            return (
                None,
                Some(Nothing::TooFewSamples),
                Some(format!(
                    "too few samples for {class}{}: {} of the {} it needs",
                    b.quantile.name(),
                    thousands(n),
                    thousands(need)
                )),
            );
        }
    }
    let lag = r.open_loop.as_ref().map(|o| &o.send_lag_us);
    let mut client = None;
    for b in &slo.0 {
        let class = b.class.as_ref().map(|c| format!("{c}:")).unwrap_or_default();
        let max = b.max.as_secs_f64() * 1e6;
        let Some(v) = latency_of(doc, b.class.as_deref()).and_then(|l| b.quantile.of(l)) else {
            return fail(format!("{class}{}: nothing completed", b.quantile.name()));
        };
        if v <= max {
            continue;
        }
        let figure = format!("{class}{} {}", b.quantile.name(), fmt_us(v));
        let busy = ClientLimit::busy(r.client_cpu_utilization);
        match ClientLimit::of_miss(v, lag.and_then(|l| b.quantile.of(l)), max).or(busy) {
            // A miss neither the client's lateness nor its busy CPUs account for: the server's.
            None => return fail(figure),
            Some(c) => client = client.or(Some((c, figure))),
        }
    }
    if let Some((c, figure)) = client {
        return (None, Some(Nothing::Client), Some(format!("{figure}: {}", c.said())));
    }
    // Connections that completed nothing while the schedule gave each of them requests (a
    // design that serves a few connections and leaves the rest waiting): their requests, sent
    // before the window, never count in its latency, so the target cannot be said to hold.
    // Over the connections that send (`--active` holds the rest, which complete nothing by design).
    let per_conn = offered * r.duration_s / r.fairness.connections.max(1) as f64;
    if r.fairness.starved > 0 && per_conn >= 2.0 {
        return fail(format!(
            "{} connections starved: their requests never completed",
            thousands(r.fairness.starved as u64)
        ));
    }
    match crate::load::limit::of_hold(r, slo.tightest_us()) {
        Some(c) => (None, Some(Nothing::Client), Some(c.said())),
        None => (Some(true), None, None),
    }
}

/// The latency a bound reads: every request's, or its class's.
fn latency_of<'a>(doc: &'a Document, class: Option<&str>) -> Option<&'a crate::load::Latency> {
    match class {
        None => Some(&doc.results.latency_us),
        Some(c) => doc.results.classes.get(c).map(|k| &k.latency_us),
    }
}

/// Why a probe that could not open one connection ends the search (a lower rate would not
/// either: nothing listens, or the server refuses everyone); `None` when it connected.
pub fn unreachable(doc: &Document) -> Option<String> {
    let r = &doc.results;
    (r.connections.established == 0).then(|| {
        let kinds: Vec<String> = r.errors.iter().map(|(k, n)| format!("{} {k}", thousands(*n))).collect();
        format!("no connection could be made ({})", kinds.join(", "))
    })
}
