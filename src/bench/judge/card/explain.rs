//! A cell's card: where its requests' mean latency went, as disjoint intervals on a request's
//! path, each measured on its own, per request (µs):
//!
//! - **waiting inside** the server before its handling began (behind other connections'
//!   requests of the same wake-up, or earlier requests of the same read);
//! - **handling**: the rest of its time in the server (its residence less that wait), the
//!   work's CPU and waiting included;
//! - **run-queue wait**: the server's threads runnable and waiting for a CPU;
//! - **outside the server**: the path a request takes to and from it, from its own
//!   measurements: the run's loopback round trip between the server's and the client's CPUs
//!   (measured at the run's start, idle as the run keeps them), plus the client's CPU per
//!   request beyond what that round trip's client used. Where the client was the limit its own
//!   queueing is not measured: the part is then inferred as the rest of the mean, and says so.
//!
//! The mean less these is "unexplained", a real residual: no part is computed as the mean less
//! other parts (but an inferred one, named so). Beside them, not added to them, what a request
//! cost in CPU: the work's, the design's beyond the work, and the server's whole. A server
//! nobody watched (a peer) has its time inside "not measured", never "unexplained 100 %".
//! Beside them too, what bound the cell and, where a prediction exists, the share of the gap
//! to it each part the model leaves out carries (only for a gap the parts cover, never above
//! 100 %). Worked out from the cell's own figures, so `results.json` alone recomputes it.

use serde::Serialize;

use crate::bench::judge::bound::{self, BoundBy};
use crate::bench::record::Cell;
use crate::units::fmt_us;

/// One named part of the mean (or of the cost), per request (µs; `None`: not measured).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    pub name: &'static str,
    pub us: Option<f64>,
    /// Whether the prediction's model covers it.
    pub modelled: bool,
    /// Worked out as the rest of the mean, not measured on its own (said so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
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
    /// The disjoint intervals of a request's path, in order ([`INTERVALS`]).
    pub parts: Vec<Part>,
    /// What a request cost in CPU and asked to wait ([`COSTS`]): beside the parts, never added.
    pub costs: Vec<Part>,
    /// The mean less every part (µs), as it is; `None` where a part was not measured.
    pub unexplained_us: Option<f64>,
    /// Why some parts were not measured, where they were not (the server was not watched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
    /// How the part outside the server was worked out, where it was inferred.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inferred: Option<String>,
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

/// The intervals of a request's path, in the card's order.
pub const INTERVALS: [&str; 4] = ["waiting inside", "handling", "run-queue wait", "outside the server"];

/// The costs beside them.
pub const COSTS: [&str; 4] = ["work CPU", "work waiting", "design CPU", "server CPU"];

fn part(name: &'static str, us: Option<f64>, modelled: bool) -> Part {
    Part {
        name,
        us,
        modelled,
        inferred: false,
    }
}

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
    let waiting = per_served(w.wait_inside_ns);
    let handling = per_served(w.residence_ns).zip(waiting).map(|(r, i)| (r - i).max(0.0));
    let runq = per_req(w.runq_wait_s);
    let client_limited = bound::client_limit(c).is_some();
    // Outside: the round trip and the client's own CPU beyond it; where the client set the
    // pace, the rest of the mean (its queueing is not measured).
    let measured_outside = w
        .round_trip_us
        .zip(w.client_cpu_us)
        .map(|(rt, cpu)| rt + (cpu - w.round_trip_client_cpu_us.unwrap_or(0.0)).max(0.0));
    let inside = [waiting, handling, runq];
    let inferred_outside = (client_limited && inside.iter().all(Option::is_some))
        .then(|| w.latency_mean_us.map(|m| m - inside.iter().flatten().sum::<f64>()))
        .flatten();
    let modelled = f.predicted.is_some();
    let sliced = f.predicted.as_ref().is_some_and(|p| p.slice_us.is_some());
    let mut outside = part(INTERVALS[3], inferred_outside.or(measured_outside), false);
    outside.inferred = inferred_outside.is_some();
    let parts = vec![
        part(INTERVALS[0], waiting, modelled),
        part(INTERVALS[1], handling, modelled),
        part(INTERVALS[2], runq, sliced),
        outside,
    ];
    let design = match (f.server_cpu_us_per_req, w.work_cpu_us) {
        (Some(cpu), Some(work)) => Some((cpu - work).max(0.0)),
        (Some(cpu), None) => Some(cpu),
        _ => None,
    };
    let designed = f.predicted.as_ref().is_some_and(|p| p.design_cpu_us.is_some());
    let costs = vec![
        part(COSTS[0], w.work_cpu_us, modelled),
        part(COSTS[1], w.work_sleep_us, modelled),
        part(COSTS[2], design, designed),
        part(COSTS[3], f.server_cpu_us_per_req, designed),
    ];
    // The residual: only where every part was measured (a part not measured is no zero, and
    // an inferred one is the mean less the others: its residual would be 0 by construction).
    let all = parts
        .iter()
        .map(|p| p.us.filter(|_| !p.inferred))
        .collect::<Option<Vec<f64>>>();
    let unexplained = all.zip(w.latency_mean_us).map(|(ps, m)| m - ps.iter().sum::<f64>());
    let not_measured = served.is_none().then(|| {
        "the server's own time (waiting inside, handling): not measured — the server was not watched, or \
         served several cells at once"
            .to_string()
    });
    let inferred = outside_said(&parts[3], w.round_trip_us);
    let predicted_mean = f.predicted.as_ref().and_then(|p| p.mean_us);
    let gap = predicted_mean.zip(w.latency_mean_us).map(|(p, m)| m - p);
    let not_modelled = not_modelled(&parts, unexplained, gap, w.latency_mean_us);
    Some(Card {
        experiment: c.experiment.clone(),
        target: c.target.clone(),
        connections: c.connections,
        repeat: c.repeat,
        bound_by: bound::of(c),
        mean_us: w.latency_mean_us,
        parts,
        costs,
        unexplained_us: unexplained,
        not_measured,
        inferred,
        predicted_mean_us: predicted_mean,
        gap_us: gap,
        not_modelled,
        imbalance: w.imbalance,
        not_available: not_available(),
    })
}

/// How the part outside the server was worked out, where it was not measured on its own.
fn outside_said(outside: &Part, round_trip: Option<f64>) -> Option<String> {
    match (outside.inferred, outside.us, round_trip) {
        (true, _, _) => Some(
            "outside the server: inferred as the mean less the parts inside it (the client was the limit: its \
             own queueing is not measured)"
                .into(),
        ),
        (false, None, None) => {
            Some("outside the server: not measured (no loopback round trip was measured for this run)".into())
        }
        _ => None,
    }
}

/// The parts the model leaves out, as shares of a gap between measured and predicted that the
/// parts cover: a measured mean longer than the prediction by more than 5 % (the least gap the
/// judge calls, `interval::MARGIN`; a card describes one cell and judges nothing, and a shorter
/// mean is the model's overestimate: no part carries it), each share within (0, 100 %].
fn not_modelled(parts: &[Part], unexplained: Option<f64>, gap: Option<f64>, mean: Option<f64>) -> Vec<(String, f64)> {
    let Some(g) = gap.filter(|g| mean.is_some_and(|m| *g > (crate::bench::judge::MARGIN - 1.0) * m)) else {
        return Vec::new();
    };
    parts
        .iter()
        .filter(|p| !p.modelled)
        .filter_map(|p| Some((p.name.to_string(), p.us?)))
        .chain(unexplained.map(|u| ("unexplained".to_string(), u)))
        .map(|(n, us)| (n, us / g))
        .filter(|(_, share)| *share > 0.0 && *share <= 1.0)
        .collect()
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
                "  {:<19} {:>10} {}{}{}\n",
                p.name,
                us(p.us),
                share(p.us),
                if p.modelled { "  (in the prediction)" } else { "" },
                if p.inferred { "  (inferred)" } else { "" }
            ));
        }
        s.push_str(&format!(
            "  {:<19} {:>10} {}\n",
            "unexplained",
            self.unexplained_us.map_or("–".into(), |v| format!("{v:.1}µs")),
            share(self.unexplained_us)
        ));
        for why in self.not_measured.iter().chain(&self.inferred) {
            s.push_str(&format!("  {why}\n"));
        }
        let costs: Vec<String> = self
            .costs
            .iter()
            .filter_map(|p| Some(format!("{} {}", p.name, fmt_us(p.us?))))
            .collect();
        if !costs.is_empty() {
            s.push_str(&format!(
                "  cost       {} (per request, beside the parts, not in them)\n",
                costs.join(", ")
            ));
        }
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
