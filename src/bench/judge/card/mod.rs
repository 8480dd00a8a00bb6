//! A cell's card: where its requests' mean latency went, in named parts, per request (µs) —
//! the work asked for (CPU and waiting), the design's own CPU beyond the work (as the
//! prediction defines it: the server's CPU per request less the work's), waiting for a CPU
//! (run-queue), waiting inside the server before handling began, and the time outside the
//! server (the kernel and the client: the client's latency less the server's residence and
//! the run-queue wait, most of which a woken thread spends before its read returns; for a loop
//! busy with a long request it holds the time a request sat in its socket before the loop's
//! wait returned, which the server cannot see) —
//! with what is left over printed as it is ("unexplained"), and beside them what bound the
//! cell and, where a prediction exists, which parts the model covers. Worked out from the
//! cell's own figures, so `results.json` alone recomputes it.

use serde::Serialize;

use super::bound::{self, BoundBy};
use crate::bench::record::Cell;
use crate::units::fmt_us;

/// One named part of the mean, per request (µs; `None`: not measured).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    pub name: &'static str,
    pub us: Option<f64>,
    /// Whether the prediction's model covers it.
    pub modelled: bool,
}

/// A cell's card.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Card {
    pub experiment: String,
    pub target: String,
    pub connections: usize,
    pub repeat: usize,
    pub bound_by: Option<BoundBy>,
    /// The client's mean latency (µs).
    pub mean_us: Option<f64>,
    pub parts: Vec<Part>,
    /// The mean less every measured part (µs), as it is.
    pub unexplained_us: Option<f64>,
    /// The prediction's mean (µs), where there is one, and the gap to the measured mean (µs)
    /// with the share of it each part the model does not cover takes.
    pub predicted_mean_us: Option<f64>,
    pub gap_us: Option<f64>,
    pub not_modelled: Vec<(String, f64)>,
    /// Requests per worker, most ÷ fewest.
    pub imbalance: Option<f64>,
    /// What this machine cannot say (hardware counters).
    pub not_available: Vec<String>,
}

/// The part names, in the card's order.
pub const PARTS: [&str; 6] = [
    "work CPU",
    "work waiting",
    "design CPU",
    "run-queue wait",
    "waiting inside",
    "kernel and client",
];

/// The card of cell `c`; `None` without server figures.
pub fn of(c: &Cell) -> Option<Card> {
    let f = &c.figures;
    let w = f.why.as_ref()?;
    let per_req = |total_s: Option<f64>| {
        let n = f.requests;
        total_s.filter(|_| n > 0).map(|s| s * 1e6 / n as f64)
    };
    let served = w.server_requests.filter(|n| *n > 0);
    let per_served = |ns: Option<u64>| Some(ns? as f64 / served? as f64 / 1e3);
    let residence = per_served(w.residence_ns);
    let runq = per_req(w.runq_wait_s);
    let design = match (f.server_cpu_us_per_req, w.work_cpu_us) {
        (Some(cpu), Some(work)) => Some((cpu - work).max(0.0)),
        (Some(cpu), None) => Some(cpu),
        _ => None,
    };
    let modelled = f.predicted.is_some();
    let designed = f.predicted.as_ref().is_some_and(|p| p.design_cpu_us.is_some());
    let sliced = f.predicted.as_ref().is_some_and(|p| p.slice_us.is_some());
    let parts = vec![
        Part {
            name: PARTS[0],
            us: w.work_cpu_us,
            modelled,
        },
        Part {
            name: PARTS[1],
            us: w.work_sleep_us,
            modelled,
        },
        Part {
            name: PARTS[2],
            us: design,
            modelled: designed,
        },
        Part {
            name: PARTS[3],
            us: runq,
            modelled: sliced,
        },
        Part {
            name: PARTS[4],
            us: per_served(w.wait_inside_ns),
            modelled,
        },
        Part {
            name: PARTS[5],
            us: w
                .latency_mean_us
                .zip(residence)
                .map(|(m, r)| m - r - runq.unwrap_or(0.0)),
            modelled: false,
        },
    ];
    // What the measured parts leave of the mean (a part not measured is left in it).
    let measured: f64 = parts.iter().filter_map(|p| p.us).sum();
    let unexplained = w.latency_mean_us.map(|m| m - measured);
    let predicted_mean = f.predicted.as_ref().and_then(|p| p.mean_us);
    let gap = predicted_mean.zip(w.latency_mean_us).map(|(p, m)| m - p);
    // The parts the model leaves out, as shares of the gap between measured and predicted.
    let mut not_modelled: Vec<(String, f64)> = parts
        .iter()
        .filter(|p| !p.modelled)
        .filter_map(|p| Some((p.name.to_string(), p.us?)))
        .collect();
    not_modelled.extend(unexplained.map(|u| ("unexplained".to_string(), u)));
    // Shares of a measured mean longer than the prediction by more than one run's noise (a
    // shorter one is the model's overestimate: no part of the measurement carries it).
    let not_modelled = match gap.filter(|g| w.latency_mean_us.is_some_and(|m| *g > super::SINGLE_RUN_NOISE * m)) {
        Some(g) => not_modelled.into_iter().map(|(n, us)| (n, us / g)).collect(),
        None => Vec::new(),
    };
    Some(Card {
        experiment: c.experiment.clone(),
        target: c.target.clone(),
        connections: c.connections,
        repeat: c.repeat,
        bound_by: bound::of(c),
        mean_us: w.latency_mean_us,
        parts,
        unexplained_us: unexplained,
        predicted_mean_us: predicted_mean,
        gap_us: gap,
        not_modelled,
        imbalance: w.imbalance,
        not_available: not_available(),
    })
}

/// Hardware counters (IPC, cache misses, top-down levels) need a PMU: said where there is none.
fn not_available() -> Vec<String> {
    let pmu = std::path::Path::new("/sys/bus/event_source/devices/cpu").exists();
    match pmu {
        true => Vec::new(),
        false => vec!["IPC, cache misses, top-down levels: not available on this machine (no PMU)".into()],
    }
}

impl Card {
    /// The card as a person reads it.
    pub fn text(&self) -> String {
        let us = |v: Option<f64>| v.map_or("–".to_string(), fmt_us);
        let mut s = format!(
            "{} · {} · {} connections{}\n",
            self.experiment,
            self.target,
            self.connections,
            if self.repeat > 0 {
                format!(" · repeat {}", self.repeat + 1)
            } else {
                String::new()
            }
        );
        if let Some(b) = &self.bound_by {
            s.push_str(&format!("  bound by   {} ({})\n", b.bound.name(), b.evidence));
        }
        s.push_str(&format!("  mean       {}\n", us(self.mean_us)));
        let share = |v: Option<f64>| match (v, self.mean_us) {
            (Some(v), Some(m)) if m > 0.0 => format!("{:>4.0}%", v / m * 100.0),
            _ => "    –".into(),
        };
        for p in &self.parts {
            s.push_str(&format!(
                "  {:<17} {:>10} {}{}\n",
                p.name,
                us(p.us),
                share(p.us),
                if p.modelled { "  (in the prediction)" } else { "" }
            ));
        }
        s.push_str(&format!(
            "  {:<17} {:>10} {}\n",
            "unexplained",
            self.unexplained_us.map_or("–".into(), |v| format!("{v:.1}µs")),
            share(self.unexplained_us)
        ));
        if let (Some(p), Some(g)) = (self.predicted_mean_us, self.gap_us) {
            let shares: Vec<String> = self
                .not_modelled
                .iter()
                .map(|(n, share)| format!("{n} {:.0}%", share * 100.0))
                .collect();
            s.push_str(&format!(
                "  predicted  mean {} (the measured mean is {} {}); of that gap, not in the model: {}\n",
                us(Some(p)),
                us(Some(g.abs())),
                if g >= 0.0 { "longer" } else { "shorter" },
                if shares.is_empty() {
                    "–".to_string()
                } else {
                    shares.join(", ")
                }
            ));
        }
        if let Some(i) = self.imbalance {
            s.push_str(&format!("  imbalance  {i:.2}× (requests per worker, most ÷ fewest)\n"));
        }
        for n in &self.not_available {
            s.push_str(&format!("  {n}\n"));
        }
        s
    }
}

#[cfg(test)]
mod tests;

/// A part carries a gap between two designs only where it covers at least this share of the
/// gap in mean latency (a smaller one is never the reason).
pub const CARRIES: f64 = 0.5;

/// The sentence naming the part of the card that carries the gap in mean latency between a
/// finding's best and runner-up at its connections (medians over their repeats); `None` where
/// they have no cards, the gap is within one run's noise, or no part covers half of it.
pub(super) fn why_gap(cells: &[&Cell], best: &str, runner_up: &str, n: usize) -> Option<String> {
    let cards = |t: &str| -> Vec<Card> {
        cells
            .iter()
            .filter(|c| c.target == t && c.connections == n)
            .filter_map(|c| of(c))
            .collect()
    };
    let (a, b) = (cards(best), cards(runner_up));
    let median = |v: Vec<f64>| (!v.is_empty()).then(|| crate::bench::record::median(v));
    let mean = |cs: &[Card]| median(cs.iter().filter_map(|c| c.mean_us).collect());
    let part = |cs: &[Card], name: &str| {
        median(
            cs.iter()
                .filter_map(|c| c.parts.iter().find(|p| p.name == name)?.us)
                .collect(),
        )
    };
    let (ma, mb) = (mean(&a)?, mean(&b)?);
    let gap = mb - ma;
    // Only a longer mean for the runner-up has parts to carry it (a p99 finding whose runner-up
    // has the shorter mean is not one the means explain).
    if gap <= super::SINGLE_RUN_NOISE * ma.max(mb) {
        return None;
    }
    let (name, pa, pb) = PARTS
        .iter()
        .filter_map(|&name| Some((name, part(&a, name)?, part(&b, name)?)))
        .max_by(|x, y| (x.2 - x.1).total_cmp(&(y.2 - y.1)))
        .filter(|(_, pa, pb)| (pb - pa) / gap >= CARRIES)?;
    Some(format!(
        "Where the time went: {runner_up}'s mean is {} longer than {best}'s, {:.0}% of it in {name} ({} against {} per request).",
        fmt_us(gap),
        (pb - pa) / gap * 100.0,
        fmt_us(pb),
        fmt_us(pa)
    ))
}
