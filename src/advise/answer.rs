//! advise's answer, as one typed document: each design's capacity at the target over its runs
//! (a search that ran out of time ranks by its bracket's low end, "≥ N"; one stopped by the
//! client is listed, not ranked), the designs tied with the best (the interval of their
//! searches' capacities not past 5 %; one search a side is not judged), predictions ("not modelled" where none), what the
//! answer depends on, and the time planned and spent. The text is rendered from the document.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::args::AdviseArgs;
use super::ranking::{not_judged, rows, tied, Row};
use crate::bench::judge::metric::CAPACITY;
use crate::bench::Results;
use crate::units::thousands;

/// A probe whose waits for a free connection exceed this share of its requests: the client's
/// connections were a queue in front of the server, and the answer depends on `-c`.
pub const WAITS: f64 = 0.01;

/// The answer.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub work: String,
    pub slo: String,
    pub connections: usize,
    pub rate: Option<f64>,
    pub server_cpus: String,
    /// Best first.
    pub ranking: Vec<Row>,
    /// The designs tied with the best (the best first): their rounds do not separate them beyond
    /// 5 %; empty where nothing was ranked.
    pub tied: Vec<String>,
    /// The ranked designs not judged against the best: one search on a side.
    pub not_judged: Vec<String>,
    /// The designs that meet the rate asked (a probe at it or above held).
    pub meeting: Option<Vec<String>>,
    /// Why, in sentences: capacity at the target first, then CPU per request.
    pub reasons: Vec<String>,
    /// What the answer depends on, in sentences.
    pub depends_on: Vec<String>,
    /// The most a probe's requests waited for a free connection (a share), and the `-c` that
    /// would have absorbed it.
    pub waited_share: Option<f64>,
    pub connections_needed: Option<usize>,
    /// How the time was used.
    pub time_planned_s: f64,
    pub time_spent_s: f64,
    pub rounds: Vec<String>,
    pub results: Vec<PathBuf>,
    /// Each round's bench headlines (the judge's: what separated the designs, who starved).
    #[serde(default)]
    pub headlines: Vec<String>,
    /// The commit this binary was built from, and whether its tree had changes not committed
    /// (`None`: built outside a checkout), so a kept answer names its binary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_dirty: Option<bool>,
}

/// A capacity as a person reads it.
fn rps(v: f64) -> String {
    thousands(v.round() as u64)
}

/// The largest share of a probe's requests that waited for a free connection, among the probes
/// that held (those the answer rests on: past capacity every connection is busy, whatever -c),
/// and the connections that probe needed (its rate × its p99, Little's law at the tail).
fn waits(runs: &[&Results]) -> Option<(f64, usize)> {
    runs.iter()
        .flat_map(|r| r.cells.iter())
        .filter_map(|c| c.figures.capacity.as_ref())
        .flat_map(|k| &k.probes)
        .filter(|p| p.holds == Some(true))
        .filter_map(|p| {
            let share = p.waited_for_connection? as f64 / p.samples?.max(1) as f64;
            let needed = (p.offered_rps * p.p99_us? / 1e6).ceil() as usize;
            Some((share, needed))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

impl Answer {
    /// The answer to `a` from the rounds' results (`dirs` beside them), `spent_s` taken.
    pub fn of(a: &AdviseArgs, runs: &[(&Results, &Path)], rounds: Vec<String>, spent_s: f64) -> Answer {
        let results: Vec<&Results> = runs.iter().map(|(r, _)| *r).collect();
        let ranking = rows(&results);
        let tied = tied(&ranking);
        let not_judged = not_judged(&ranking);
        let server_cpus = results
            .first()
            .map_or(String::new(), |r| r.environment.server_cpus.clone());
        let meeting = a.rate.map(|rate| {
            let held = |design: &str| {
                results
                    .iter()
                    .flat_map(|r| r.cells.iter())
                    .filter(|c| c.target == design)
                    .filter_map(|c| c.figures.capacity.as_ref())
                    .flat_map(|k| &k.probes)
                    .any(|p| p.holds == Some(true) && p.offered_rps >= rate)
            };
            ranking
                .iter()
                .filter(|r| held(&r.design))
                .map(|r| r.design.clone())
                .collect()
        });
        let (waited_share, connections_needed) = match waits(&results) {
            Some((share, needed)) => (Some(share), Some(needed)),
            None => (None, None),
        };
        let mut depends_on = vec![format!(
            "the server on {} (designs with workers are compared on these; more CPUs change the pools' answer)",
            cpus_said(&server_cpus)
        )];
        if let (Some(share), Some(needed)) = (waited_share.filter(|s| *s > WAITS), connections_needed) {
            depends_on.push(format!(
                "-c: up to {:.0}% of a probe's requests waited for a free connection (the client's {} connections \
                 queued in front of the server); raise -c to at least {}",
                share * 100.0,
                a.connections,
                thousands(needed.max(a.connections * 2) as u64)
            ));
        }
        let limited: Vec<&str> = ranking
            .iter()
            .filter(|r| r.client_limited)
            .map(|r| r.design.as_str())
            .collect();
        depends_on.push(match limited.is_empty() {
            true => "the client was not the limit of any search".to_string(),
            false => format!(
                "the client: it was the limit of {} ({}: at least what they held)",
                limited.len(),
                limited.join(", ")
            ),
        });
        Answer {
            work: a.work.clone(),
            slo: a.slo.clone(),
            connections: a.connections,
            rate: a.rate,
            server_cpus,
            reasons: reasons(&ranking),
            ranking,
            tied,
            not_judged,
            meeting,
            depends_on,
            waited_share,
            connections_needed,
            time_planned_s: a.time.as_secs_f64(),
            time_spent_s: spent_s,
            rounds,
            results: runs.iter().map(|(_, d)| d.to_path_buf()).collect(),
            headlines: results
                .iter()
                .flat_map(|r| &r.verdicts)
                .filter(|v| !v.headline.is_empty())
                .map(|v| v.headline.clone())
                .collect(),
            build_commit: crate::origin::commit().map(String::from),
            build_dirty: crate::origin::dirty(),
        }
    }

    /// The answer as a person reads it.
    pub fn text(&self) -> String {
        let mut s = format!(
            "\nAdvice for {} per request at {}, {} connections, the server on {}:\n",
            self.work,
            self.slo,
            self.connections,
            cpus_said(&self.server_cpus)
        );
        s.push_str(&match self.tied.as_slice() {
            [] => format!("No design was measured meeting {}.\n", self.slo),
            [one] if self.not_judged.is_empty() => {
                format!("Best: {one} (its searches' interval past 5 % of every other's).\n")
            }
            [one] => format!(
                "Best: {one}; not judged against it (one search on a side): {}.\n",
                self.not_judged.join(", ")
            ),
            many => format!(
                "Tied for best (their rounds do not separate them beyond 5 %): {}.\n",
                many.join(", ")
            ),
        });
        for h in &self.headlines {
            s.push_str(&format!("  The bench: {h}\n"));
        }
        s.push_str(&format!(
            "  {:<28} {:>16} {:>5} {:>12} {:>10}  {}\n",
            "design", "capacity", "runs", "predicted", "CPU/req", "notes"
        ));
        for r in &self.ranking {
            let capacity = match (r.at_least, r.narrowed, r.client_limited) {
                (None, _, _) => "–".to_string(),
                (Some(v), true, _) => rps(v),
                (Some(v), false, true) => format!("≥ {} (client; not ranked)", rps(v)),
                (Some(v), false, false) => format!("≥ {} (not ranked)", rps(v)),
            };
            s.push_str(&format!(
                "  {:<28} {:>16} {:>5} {:>12} {:>10}  {}\n",
                r.design,
                capacity,
                r.runs,
                r.predicted.map_or("not modelled".into(), rps),
                r.cpu_us.map_or("–".into(), |c| format!("{c:.1}µs")),
                r.note.clone().unwrap_or_default()
            ));
        }
        if let (Some(rate), Some(m)) = (self.rate, &self.meeting) {
            s.push_str(&format!(
                "At {} req/s, {} of {} designs meet {}: {}.\n",
                rps(rate),
                m.len(),
                self.ranking.len(),
                self.slo,
                if m.is_empty() { "none".to_string() } else { m.join(", ") }
            ));
        }
        for r in &self.reasons {
            s.push_str(&format!("Why: {r}\n"));
        }
        s.push_str(&format!("It depends on: {}.\n", self.depends_on.join("; ")));
        s.push_str(&format!(
            "Time: {:.0} s of the {:.0} s planned ({}).\n",
            self.time_spent_s,
            self.time_planned_s,
            self.rounds.join("; ")
        ));
        for d in &self.results {
            s.push_str(&format!("Full results: {}\n", d.join("report.html").display()));
        }
        s
    }
}

/// Why, for the question asked: capacity at the target between the best and the next design
/// the judge may rank, then CPU per request; and any design ranked on nothing whose search,
/// stopped short, had already carried more than the best ranked.
fn reasons(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    let ranked: Vec<&Row> = rows.iter().filter(|r| r.ranked.is_some()).collect();
    let (Some(best), Some(next)) = (ranked.first(), ranked.get(1)) else {
        return out;
    };
    let (a, b) = (best.ranked.expect("ranked"), next.ranked.expect("ranked"));
    if let Some(x) = a.ratio(b, &CAPACITY) {
        out.push(format!(
            "capacity at the target: {} {} against {} {} ({x:.2}×).",
            best.design,
            rps(a.get()),
            next.design,
            rps(b.get()),
        ));
    }
    if let (Some(a), Some(b)) = (best.cpu_us, next.cpu_us) {
        out.push(format!(
            "server CPU per request: {} {a:.1} µs, {} {b:.1} µs.",
            best.design, next.design
        ));
    }
    for r in rows.iter().filter(|r| r.ranked.is_none()) {
        if let Some(low) = r.at_least.filter(|low| *low > a.get()) {
            out.push(format!(
                "{} is not ranked: its search stopped short{} at ≥ {}, already above {}'s {}; give it more time to rank it.",
                r.design,
                if r.client_limited { ", the client's limit" } else { "" },
                rps(low),
                best.design,
                rps(a.get())
            ));
        }
    }
    out
}

/// A CPU list as a person reads it: "1 CPU (CPU 0)", "2 CPUs (0-1)".
pub fn cpus_said(list: &str) -> String {
    match crate::units::parse_cpus(list) {
        Ok(c) if c.len() == 1 => format!("1 CPU (CPU {list})"),
        Ok(c) => format!("{} CPUs ({list})", c.len()),
        Err(_) => format!("CPUs {list}"),
    }
}
