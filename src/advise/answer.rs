//! advise's answer, as one typed document: each design's capacity at the target over its runs
//! (a search that ran out of time ranks by its bracket's low end, "≥ N"; one stopped by the
//! client keeps "≥ N (the client's limit)"), the designs tied with the best (within the noise:
//! 10 %, or their runs' spread where wider), predictions ("not modelled" where none), what the
//! answer depends on, and the time planned and spent. The text is rendered from the document.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::AdviseArgs;
use crate::bench::record::{median, relative_spread, Cell};
use crate::bench::Results;
use crate::units::thousands;

/// Designs this close to the best (a share), or within their runs' spread where wider, are tied.
pub const TIED: f64 = 0.10;

/// A probe whose waits for a free connection exceed this share of its requests: the client's
/// connections were a queue in front of the server, and the answer depends on `-c`.
pub const WAITS: f64 = 0.01;

/// Contenders re-run in the second round: those within this share of the best's capacity (the
/// best alone, where no other is this close).
pub const CONTENDING: f64 = 0.75;

/// At most this many contenders are re-run.
pub const MOST_CONTENDERS: usize = 3;

/// One design's line.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub design: String,
    /// Searches run (one per round it took part in).
    pub runs: usize,
    /// The median capacity of its searches that answered (both ends re-checked).
    pub capacity: Option<f64>,
    /// What it ranks by: its capacity, or where no search answered, the highest low end of a
    /// bracket ("≥").
    pub at_least: Option<f64>,
    /// Whether `at_least` is a capacity (narrowed and re-checked) or a bracket's low end.
    pub narrowed: bool,
    /// Its search ended at the client's limit.
    pub client_limited: bool,
    /// The values of its runs, and their spread (largest ÷ smallest − 1; `None`: one run).
    pub values: Vec<f64>,
    pub spread: Option<f64>,
    /// The capacity its queueing predicts (`None`: not modelled).
    pub predicted: Option<f64>,
    /// Its server CPU per request at the probe that held (µs).
    pub cpu_us: Option<f64>,
    pub note: Option<String>,
}

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
    /// The designs tied with the best (the best first); empty where nothing was measured.
    pub tied: Vec<String>,
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
}

/// A capacity as a person reads it.
fn rps(v: f64) -> String {
    thousands(v.round() as u64)
}

/// The rows of the designs measured in `runs`, best first.
pub fn rows(runs: &[&Results]) -> Vec<Row> {
    let cells: Vec<&Cell> = runs
        .iter()
        .flat_map(|r| r.cells.iter())
        .filter(|c| c.compared())
        .collect();
    let mut targets: Vec<&str> = Vec::new();
    for c in &cells {
        if !targets.contains(&c.target.as_str()) {
            targets.push(&c.target);
        }
    }
    let mut rows: Vec<Row> = targets.iter().map(|t| row(t, &cells)).collect();
    rank(&mut rows);
    rows
}

/// Best first, by what each design was measured to carry (a bracket's low end as it is).
fn rank(rows: &mut [Row]) {
    rows.sort_by(|a, b| b.at_least.unwrap_or(-1.0).total_cmp(&a.at_least.unwrap_or(-1.0)));
}

fn row(t: &str, cells: &[&Cell]) -> Row {
    let of: Vec<&&Cell> = cells.iter().filter(|c| c.target == t).collect();
    let caps: Vec<f64> = of.iter().filter_map(|c| c.figures.capacity_rps()).collect();
    let lows: Vec<f64> = of.iter().filter_map(|c| c.figures.capacity.as_ref()?.low).collect();
    let narrowed = !caps.is_empty();
    let values = if narrowed { caps.clone() } else { lows.clone() };
    let at_least = match narrowed {
        true => Some(median(caps.clone())),
        false => lows
            .iter()
            .copied()
            .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v)))),
    };
    let spread = relative_spread(&values);
    let client_limited = of.iter().any(|c| {
        c.figures
            .capacity
            .as_ref()
            .and_then(|k| k.inconclusive.as_deref())
            .is_some_and(|w| w.starts_with("the client could not offer"))
    });
    let predicted: Vec<f64> = of
        .iter()
        .filter_map(|c| Some(c.figures.predicted.as_ref()?.capacity_rps))
        .collect();
    let cpu: Vec<f64> = of.iter().filter_map(|c| c.figures.server_cpu_us_per_req).collect();
    // Why it has no answer, where none of its searches answered.
    let note = of.iter().find_map(|c| match (&c.status, &c.figures.capacity) {
        (s, _) if !c.ok() => Some(s.text().to_string()),
        (_, Some(k)) if !narrowed => k.inconclusive.clone(),
        _ => None,
    });
    Row {
        design: t.to_string(),
        runs: of.len(),
        capacity: narrowed.then(|| median(caps)),
        at_least,
        narrowed,
        client_limited,
        values,
        spread,
        predicted: (!predicted.is_empty()).then(|| median(predicted)),
        cpu_us: (!cpu.is_empty()).then(|| median(cpu)),
        note,
    }
}

/// The designs tied with the best of `rows` (sorted best first): within [`TIED`] of it, or
/// within the wider of the two designs' spreads.
pub fn tied(rows: &[Row]) -> Vec<String> {
    let Some(best) = rows.first().and_then(|r| r.at_least.map(|v| (r, v))) else {
        return Vec::new();
    };
    rows.iter()
        .filter(|r| {
            let Some(v) = r.at_least else { return false };
            let noise = TIED.max(best.0.spread.unwrap_or(0.0)).max(r.spread.unwrap_or(0.0));
            best.1 <= v * (1.0 + noise)
        })
        .map(|r| r.design.clone())
        .collect()
}

/// The designs worth a second round: within [`CONTENDING`] of the best, at most
/// [`MOST_CONTENDERS`].
pub fn contenders(runs: &[&Results]) -> Vec<String> {
    let rows = rows(runs);
    let Some(best) = rows.first().and_then(|r| r.at_least) else {
        return Vec::new();
    };
    rows.iter()
        .filter(|r| r.at_least.is_some_and(|v| v >= best * CONTENDING))
        .take(MOST_CONTENDERS)
        .map(|r| r.design.clone())
        .collect()
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
            [one] => format!("Best: {one} (beyond the noise of the others).\n"),
            many => format!(
                "Tied for best, within the noise ({:.0}% or their runs' spread): {}.\n",
                TIED * 100.0,
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
                (Some(v), false, true) => format!("≥ {} (client)", rps(v)),
                (Some(v), false, false) => format!("≥ {}", rps(v)),
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
/// not tied with it, then CPU per request.
fn reasons(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(best), Some(next)) = (rows.first(), rows.get(1)) else {
        return out;
    };
    if let (Some(a), Some(b)) = (best.at_least, next.at_least) {
        out.push(format!(
            "capacity at the target: {} {}{} against {} {}{} ({:.2}×).",
            best.design,
            if best.narrowed { "" } else { "≥ " },
            rps(a),
            next.design,
            if next.narrowed { "" } else { "≥ " },
            rps(b),
            a / b.max(1e-9)
        ));
    }
    if let (Some(a), Some(b)) = (best.cpu_us, next.cpu_us) {
        out.push(format!(
            "server CPU per request: {} {a:.1} µs, {} {b:.1} µs.",
            best.design, next.design
        ));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(design: &str, values: &[f64], narrowed: bool) -> Row {
        let spread = relative_spread(values);
        Row {
            design: design.into(),
            runs: values.len(),
            capacity: narrowed.then(|| median(values.to_vec())),
            at_least: Some(median(values.to_vec())),
            narrowed,
            client_limited: false,
            values: values.to_vec(),
            spread,
            predicted: None,
            cpu_us: None,
            note: None,
        }
    }

    /// Two designs within the noise are tied; a clear gap is not; a wide spread of repeats
    /// widens the noise; a bracket's low end ranks as what it is, never below a smaller answer.
    #[test]
    fn designs_within_the_noise_are_tied_and_a_clear_gap_is_not() {
        // uring 18,000 and epoll 17,500 (the committed capacity results): 1.03×, tied.
        let rows = [
            row("uring", &[18_000.0], true),
            row("epoll", &[17_500.0], true),
            row("fork", &[12_000.0], true),
        ];
        assert_eq!(tied(&rows), vec!["uring", "epoll"]);
        // 1.20× apart with one run each: not tied.
        let rows = [row("thread", &[12_000.0], true), row("fork", &[10_000.0], true)];
        assert_eq!(tied(&rows), vec!["thread"]);
        // The same gap with repeats spread 25 %: within their noise.
        let rows = [
            row("thread", &[12_000.0, 15_000.0], true),
            row("fork", &[11_000.0], true),
        ];
        assert_eq!(tied(&rows), vec!["thread", "fork"]);
        assert!(tied(&[]).is_empty());
    }

    /// A search that ran out of time with thread held at 28,000 ranks above a narrowed 3,500
    /// (before: the narrowed answer first, thread "–"); nothing measured ranks last.
    #[test]
    fn a_brackets_low_end_ranks_above_a_smaller_narrowed_answer() {
        let mut none = row("reactor", &[1.0], false);
        none.at_least = None;
        let mut rows = vec![
            none,
            row("queue-pool", &[3_500.0], true),
            row("thread", &[28_000.0], false),
        ];
        rank(&mut rows);
        let order: Vec<&str> = rows.iter().map(|r| r.design.as_str()).collect();
        assert_eq!(order, ["thread", "queue-pool", "reactor"]);
    }

    #[test]
    fn the_answer_renders_a_bracket_as_at_least_and_a_missing_prediction_as_not_modelled() {
        let mut thread = row("thread", &[28_000.0], false);
        thread.predicted = None;
        let a = Answer {
            work: "sleep:exp(1ms)".into(),
            slo: "p99<=10ms".into(),
            connections: 500,
            rate: Some(2800.0),
            server_cpus: "0".into(),
            ranking: vec![thread, row("queue-pool --workers 4", &[3_500.0], true)],
            tied: vec!["thread".into()],
            meeting: Some(vec!["thread".into(), "queue-pool --workers 4".into()]),
            reasons: vec![
                "capacity at the target: thread ≥ 28,000 against queue-pool --workers 4 3,500 (8.00×).".into(),
            ],
            depends_on: vec!["-c: raise it".into()],
            waited_share: Some(0.2),
            connections_needed: Some(1000),
            time_planned_s: 300.0,
            time_spent_s: 290.0,
            rounds: vec!["every design once".into()],
            results: vec![PathBuf::from("/tmp/r")],
            headlines: vec!["epoll is best on capacity at the target (1.30×).".into()],
        };
        let t = a.text();
        assert!(
            t.contains("Best: thread") && t.contains("≥ 28,000") && t.contains("not modelled"),
            "{t}"
        );
        assert!(
            t.contains("The bench: epoll is best on capacity"),
            "the judge's headline: {t}"
        );
        assert!(
            t.contains("At 2,800 req/s, 2 of 2 designs meet p99<=10ms") && t.contains("-c: raise it"),
            "{t}"
        );
        let j = serde_json::to_value(&a).unwrap();
        assert_eq!(j["ranking"][0]["narrowed"], false);
        assert_eq!(j["tied"][0], "thread");
        assert_eq!(j["time_planned_s"], 300.0);
    }
}
