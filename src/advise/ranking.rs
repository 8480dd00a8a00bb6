//! The designs ranked by what they carried ([`Row`]): each design's capacity at the target over
//! its runs, where the judge's one rule may rank it ([`rankable`]: a search narrowed and
//! re-checked; a search that ran out of time, or that the client limited, is shown by its
//! bracket's low end, "≥ N", and ranked on nothing), the designs tied with the best (their
//! rounds do not separate them: the judge's one rule, Welch's interval of their searches'
//! logs; with one search on a side the pair is not judged), and the contenders a second round
//! re-runs.

use serde::Serialize;

use crate::bench::judge::interval::{self, Judged};
use crate::bench::judge::metric::{self, rankable, Ranked, CAPACITY};
use crate::bench::record::{median, relative_spread, Cell};
use crate::bench::Results;

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
    /// Its capacity as the judge may rank it (`None`: no search of it may be ranked).
    #[serde(skip)]
    pub ranked: Option<Ranked>,
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

/// The capacity of `of` (one design's cells) as the judge may rank it: the median of its
/// searches where every one may be ranked.
fn ranked_capacity(of: &[&&Cell], cells: &[&Cell]) -> Option<Ranked> {
    let ranks: Vec<metric::Rank> = of.iter().map(|c| rankable(&CAPACITY, c, cells)).collect();
    metric::median(&ranks).ranked()
}

/// The ranked designs best first, by their ranked capacity; then those ranked on nothing, in
/// the order of what they were seen to carry at least (a listing, not a ranking).
pub(super) fn rank(rows: &mut Vec<Row>) {
    let (mut ranked, mut not): (Vec<Row>, Vec<Row>) = rows.drain(..).partition(|r| r.ranked.is_some());
    let mut values: Vec<Ranked> = ranked.iter().filter_map(|r| r.ranked).collect();
    Ranked::best_first(&CAPACITY, &mut values);
    ranked.sort_by_key(|r| values.iter().position(|v| Some(*v) == r.ranked));
    // Not a ranking: where the designs' searches stopped, highest first, to show them.
    not.sort_by(|a, b| b.at_least.unwrap_or(-1.0).total_cmp(&a.at_least.unwrap_or(-1.0)));
    rows.extend(ranked);
    rows.extend(not);
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
        ranked: ranked_capacity(&of, cells),
    }
}

/// How each ranked design stands against the best of `rows` (sorted best first): by the
/// interval of their searches' capacities ([`interval::judge_apart`]). `None` for a design
/// ranked on nothing.
fn against_best(rows: &[Row]) -> Vec<(String, Option<Judged>)> {
    let Some(best) = rows.first().filter(|r| r.ranked.is_some()) else {
        return Vec::new();
    };
    let logs = |r: &Row| -> Vec<f64> { r.values.iter().map(|v| v.ln()).filter(|l| l.is_finite()).collect() };
    rows.iter()
        .map(|r| {
            let judged = r.ranked.map(|_| interval::judge_apart(&logs(best), &logs(r)));
            (r.design.clone(), judged)
        })
        .collect()
}

/// The designs tied with the best of `rows` (sorted best first; the best first): ranked ones
/// whose rounds do not separate them from it beyond 5 %.
pub fn tied(rows: &[Row]) -> Vec<String> {
    against_best(rows)
        .into_iter()
        .enumerate()
        .filter(|(i, (_, j))| *i == 0 || j.is_some_and(|j| j.interval().is_some() && !j.clear()))
        .map(|(_, (d, _))| d)
        .collect()
}

/// The ranked designs not judged against the best: one search on a side (a gap of one round is
/// shown, never judged).
pub fn not_judged(rows: &[Row]) -> Vec<String> {
    against_best(rows)
        .into_iter()
        .skip(1)
        .filter(|(_, j)| j.is_some_and(|j| j.interval().is_none()))
        .map(|(d, _)| d)
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
