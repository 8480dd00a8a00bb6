//! The answer first: an experiment's headline (at most two short sentences a person reads in
//! five seconds) and its verdict table (a row per ranked metric), both built from the findings
//! and the cells, before the prose.

use serde::{Deserialize, Serialize};

use super::finding::Finding;
use super::metric::{Metric, P99, THROUGHPUT};
use crate::bench::record::Cell;
use crate::units::thousands;

/// One row of a verdict table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// The metric (and the request class, where the row is about one).
    pub metric: String,
    pub best: String,
    pub runner_up: String,
    /// How many times better the best is.
    pub ratio: f64,
    /// "one run", or how many repeats.
    pub confidence: String,
    /// Why the row says what it says: beyond the noise, or within it.
    pub reason: String,
    /// What bound the best's cell at the count compared (`None`: no explain card).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_by: Option<String>,
}

/// The verdict table of `findings` over `cells`.
pub fn rows(findings: &[Finding], cells: &[&Cell], repeats: usize) -> Vec<Row> {
    findings
        .iter()
        .map(|f| Row {
            metric: match &f.class {
                Some(c) => format!("{} of {c}{}", f.metric, f.placed_said()),
                None => format!("{}{}", f.metric, f.placed_said()),
            },
            best: f.best.clone(),
            runner_up: f.runner_up.clone(),
            ratio: f.ratio,
            confidence: match repeats {
                0 | 1 => "one run".into(),
                n => format!("{n} repeats"),
            },
            reason: match (f.why.is_empty(), f.clear) {
                (false, _) => f.why.clone(),
                (true, true) => "beyond the noise".into(),
                (true, false) => "within the noise".into(),
            },
            bound_by: cells
                .iter()
                .find(|c| c.label() == f.best && c.connections == f.connections)
                .and_then(|c| super::bound::of(c))
                .map(|b| b.bound.name().to_string()),
        })
        .collect()
}

/// A design this many times behind the best on a ranked metric is named in the headline with
/// its ratio, whether or not the best and the runner-up separated.
pub const BEHIND: f64 = 1.5;

/// Short sentences, the answer first: which design won what beyond the noise (or, where the
/// best tied, who fell clearly behind on what, with the ratio; "the client was the limit"
/// only of the metrics it confounds: throughput and latency), then which designs failed or
/// starved connections.
///
/// With metrics to choose by (`choose_by`), the headline opens with the choice instead: the
/// target to choose and why, or that none separated; then where the client was the limit (its
/// latency there is the client's too), then the designs that failed or starved.
pub fn headline(findings: &[Finding], cells: &[&Cell], all: &[&Cell], by: &[&Metric]) -> String {
    if let Some(chosen) = choice(findings, by) {
        let mut s = chosen + ".";
        let bound = cells.iter().filter(|c| super::bound::client_limit(c).is_some()).count();
        if bound > 0 {
            s.push_str(&format!(
                " The client was the limit in {bound} of {} cells: their latency is the client's too.",
                cells.len()
            ));
        }
        if let Some(trouble) = trouble(all) {
            s.push(' ');
            s.push_str(&trouble);
            s.push('.');
        }
        return s;
    }
    let won = winners(findings);
    let behind = behind(findings);
    let confounded = findings
        .iter()
        .filter(|f| f.class.is_none() && (f.metric == THROUGHPUT.name || f.metric == P99.name))
        .all(|f| !f.clear);
    let bound = cells.iter().filter(|c| super::bound::client_limit(c).is_some()).count();
    let mut said: Vec<String> = Vec::new();
    if !won.is_empty() {
        said.push(won);
    }
    if confounded && bound > 0 {
        said.push(format!(
            "On throughput and latency no design separated: the client was the limit in {bound} of {} cells",
            cells.len()
        ));
    }
    if !behind.is_empty() {
        // A design's name as it is written, even first in a sentence.
        said.push(behind);
    }
    if said.is_empty() {
        said.push("No design separated from the others beyond the noise".into());
    }
    let mut s = said.join(". ") + ".";
    if let Some(trouble) = trouble(all) {
        s.push(' ');
        s.push_str(&trouble);
        s.push('.');
    }
    s
}

/// "prefork is 2.43× the best (epoll) on CPU per request; thread 221× on memory per
/// connection": the designs at least [`BEHIND`] behind the best of a finding, where the
/// measurement resolves the difference (memory: a mebibyte over all the connections), and
/// not already said as a clear runner-up.
fn behind(findings: &[Finding]) -> String {
    let items: Vec<String> = findings
        .iter()
        .filter_map(|f| {
            let (t, r) = f.last.as_ref()?;
            let m = f.metric();
            let last_value = match m.higher_is_better {
                true => f.best_value / r,
                false => f.best_value * r,
            };
            let resolved = super::metric::resolved(m, f.best_value, last_value, f.connections);
            (*r >= BEHIND && resolved && !(f.clear && *t == f.runner_up)).then(|| {
                let what = match &f.class {
                    Some(c) => format!("{c} {}", f.metric),
                    None => f.metric.clone(),
                };
                format!(
                    "{t} is {} the best ({}) on {what}{}",
                    times(*r),
                    f.best,
                    f.placed_said()
                )
            })
        })
        .collect();
    at_most(items, "; ")
}

/// The target to choose on `by` (metrics in order), in a sentence: the best on the first
/// metric ranked, where it separated from the runner-up beyond the noise; where it did not,
/// the one of those two that is best beyond the noise on a later metric; else that none
/// separated. `None` where no metric of `by` was ranked.
pub fn choice(findings: &[Finding], by: &[&Metric]) -> Option<String> {
    // Targets placed differently are ranked apart: a choice for each placement, each saying
    // where (also where one placement had two targets or more and the others one).
    let mut placed: Vec<&Option<String>> = Vec::new();
    for f in findings {
        if !placed.contains(&&f.placed) {
            placed.push(&f.placed);
        }
    }
    if placed.len() > 1 || placed.iter().any(|p| p.is_some()) {
        let each: Vec<String> = placed
            .iter()
            .filter_map(|p| {
                let mine: Vec<Finding> = findings.iter().filter(|f| &&f.placed == p).cloned().collect();
                let said = choice_placed_alike(&mine, by)?;
                Some(match p {
                    Some(p) => {
                        let mut c = said.chars();
                        let said: String = c.next().map_or(String::new(), |f| f.to_lowercase().chain(c).collect());
                        format!("{p}: {said}")
                    }
                    None => said,
                })
            })
            .collect();
        return (!each.is_empty()).then(|| capital(&each.join("; ")));
    }
    choice_placed_alike(findings, by)
}

/// [`choice`] among findings of targets placed alike.
fn choice_placed_alike(findings: &[Finding], by: &[&Metric]) -> Option<String> {
    let of = |m: &Metric| findings.iter().find(|f| f.class.is_none() && f.metric == m.name);
    let at = by.iter().position(|m| of(m).is_some())?;
    let first = of(by[at]).expect("found");
    if first.clear {
        return Some(format!(
            "Choose {}: best on {} ({} better than {})",
            first.best,
            first.metric,
            times(first.ratio),
            first.runner_up
        ));
    }
    let (a, b) = (&first.best, &first.runner_up);
    let tie = format!(
        "{a} and {b} tie on {} ({}, within the noise)",
        first.metric,
        times(first.ratio)
    );
    for m in &by[at + 1..] {
        let Some(f) = of(m) else { continue };
        if f.clear && (&f.best == a || &f.best == b) {
            return Some(format!(
                "Choose {}: {tie}, and it is best on {} ({} better than {})",
                f.best,
                f.metric,
                times(f.ratio),
                f.runner_up
            ));
        }
    }
    let next: Vec<&str> = by[at + 1..].iter().map(|m| m.name).collect();
    Some(match next.is_empty() {
        true => format!("No choice beyond the noise: {tie}"),
        false => format!(
            "No choice beyond the noise: {tie}, and {} does not set one of them apart",
            next.join(" or ")
        ),
    })
}

fn times(r: f64) -> String {
    match r >= 10.0 {
        true => format!("{r:.0}×"),
        false => format!("{r:.2}×"),
    }
}

/// The headline of an experiment with fewer than two designs to compare: that sentence, then
/// the designs that failed or starved.
pub fn nothing_to_compare(text: &str, all: &[&Cell]) -> String {
    let said = text.split_once(": ").map_or(text, |(_, t)| t);
    match trouble(all) {
        Some(t) => format!("{} {t}.", capital(said)),
        None => capital(said),
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().collect::<String>() + c.as_str())
}

/// At most this many designs named in one list of a headline; the rest are counted.
const NAMED: usize = 3;

/// `items`, the first [`NAMED`] of them, then how many more.
fn at_most(items: Vec<String>, sep: &str) -> String {
    let n = items.len();
    let mut shown: Vec<String> = items.into_iter().take(NAMED).collect();
    if n > NAMED {
        shown.push(format!("{} more", n - NAMED));
    }
    shown.join(sep)
}

/// "epoll is best on throughput (1.24×) and CPU per request (1.31×); uring on p99 latency
/// (1.10×)": the clear findings, grouped by their best (a class's as "short p99 latency").
fn winners(findings: &[Finding]) -> String {
    let mut by: Vec<(String, Vec<String>)> = Vec::new();
    for f in findings.iter().filter(|f| f.clear) {
        let what = match &f.class {
            Some(c) => format!(
                "{c} {} ({:.2}×{})",
                short(&f.metric),
                f.ratio,
                f.placed.as_ref().map_or(String::new(), |p| format!(", {p}"))
            ),
            None => format!(
                "{} ({:.2}×{})",
                short(&f.metric),
                f.ratio,
                f.placed.as_ref().map_or(String::new(), |p| format!(", {p}"))
            ),
        };
        match by.iter_mut().find(|(b, _)| *b == f.best) {
            Some((_, w)) => w.push(what),
            None => by.push((f.best.clone(), vec![what])),
        }
    }
    let groups: Vec<String> = by
        .iter()
        .enumerate()
        .map(|(i, (best, what))| {
            let list = match what.len() {
                1 => what[0].clone(),
                n => format!("{} and {}", what[..n - 1].join(", "), what[n - 1]),
            };
            match i {
                0 => format!("{best} is best on {list}"),
                _ => format!("{best} on {list}"),
            }
        })
        .collect();
    at_most(groups, "; ")
}

/// A metric's name as a headline says it.
fn short(metric: &str) -> String {
    Metric::named(metric).map_or(metric.to_string(), |m| m.name.to_string())
}

/// "prefork starved 998 of 1,000 connections; thread failed 2 cells": the designs a person must
/// not read as fine, the worst of each.
fn trouble(all: &[&Cell]) -> Option<String> {
    let mut said: Vec<String> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for c in all {
        if !labels.contains(&c.label()) {
            labels.push(c.label());
        }
    }
    for label in labels {
        let mine: Vec<&&Cell> = all.iter().filter(|c| c.label() == label).collect();
        // Failed, not skipped (a peer missing) nor interrupted.
        let failed = mine
            .iter()
            .filter(|c| matches!(c.status, crate::bench::record::CellStatus::Failed(_)))
            .count();
        let starved = mine
            .iter()
            .filter(|c| c.ok())
            .max_by_key(|c| c.figures.starved_conns)
            .filter(|c| c.figures.starved_conns > 0);
        if failed > 0 {
            said.push(format!("{label} failed {failed} of {} cells", mine.len()));
        } else if let Some(c) = starved {
            said.push(format!(
                "{label} starved {} of {} connections",
                thousands(c.figures.starved_conns),
                thousands(c.connections as u64)
            ));
        }
    }
    (!said.is_empty()).then(|| at_most(said, "; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::CellStatus;

    fn finding(metric: &str, best: &str, ratio: f64, clear: bool) -> Finding {
        Finding {
            metric: metric.into(),
            best: best.into(),
            runner_up: "poll".into(),
            ratio,
            clear,
            best_value: 1.0,
            runner_up_value: ratio,
            connections: 100,
            client_bound_cells: 0,
            last: None,
            unranked: Vec::new(),
            class: None,
            placed: None,
            why: String::new(),
            counts: None,
        }
    }

    fn cell(model: &str, starved: u64, ok: bool) -> Cell {
        let mut c = Cell::new("e", model, 1000, 0);
        c.status = if ok {
            CellStatus::Ok
        } else {
            CellStatus::Failed("it died".into())
        };
        c.figures.starved_conns = starved;
        c
    }

    #[test]
    fn the_headline_names_the_clear_winners_then_the_designs_not_to_trust() {
        let f = [
            finding("throughput", "epoll", 1.24, true),
            finding("server CPU per request", "epoll", 1.31, true),
            finding("p99 latency", "uring", 1.10, true),
            finding("memory per connection", "reactor", 1.02, false),
        ];
        let (a, b, c) = (
            cell("epoll", 0, true),
            cell("prefork", 998, true),
            cell("thread", 0, false),
        );
        let again = cell("prefork", 3, true);
        let all = [&a, &b, &c, &again];
        let h = headline(&f, &all[..2], &all, &[]);
        assert_eq!(
            h,
            "epoll is best on throughput (1.24×) and server CPU per request (1.31×); uring on p99 latency (1.10×). \
             prefork starved 998 of 1,000 connections; thread failed 1 of 1 cells."
        );
        // Each design once, its worst cell.
        assert!(h.matches(". ").count() <= 1, "two sentences at most");
    }

    /// Where the best tied, the headline still names who fell clearly behind, with the ratio
    /// (prefork 2.43× the best CPU per request, thread 221× the best memory), and says the
    /// client was the limit only of throughput and latency; a memory gap the measurement does
    /// not resolve is not named.
    #[test]
    fn a_tie_at_the_top_still_names_who_fell_clearly_behind() {
        let mut cpu = finding("server CPU per request", "epoll", 1.05, false);
        (cpu.best_value, cpu.last) = (6.0, Some(("prefork".into(), 2.43)));
        let mut mem = finding("memory per connection", "epoll", 1.02, false);
        (mem.best_value, mem.connections, mem.last) = (0.5, 1000, Some(("thread".into(), 221.0)));
        let mut small = finding("memory per connection", "reactor", 1.0, false);
        (small.best_value, small.connections, small.last) = (0.04, 100, Some(("uring".into(), 20.0)));
        let f = [finding("throughput", "epoll", 1.03, false), cpu, mem, small];
        let mut a = cell("epoll", 0, true);
        a.figures.client_bound = true;
        let b = cell("poll", 0, true);
        let all = [&a, &b];
        assert_eq!(
            headline(&f, &all, &all, &[]),
            "On throughput and latency no design separated: the client was the limit in 1 of 2 cells. \
             prefork is 2.43× the best (epoll) on server CPU per request; thread is 221× the best (epoll) on memory per connection."
        );
    }

    /// `choose_by = ["cpu", "p99"]`: the best on CPU per request where it separated; where it
    /// tied, the one of the two tied that is best on p99; else no choice, and why.
    #[test]
    fn the_choice_is_the_first_metrics_clear_best_else_the_tied_pair_decided_by_the_next() {
        use crate::bench::judge::metric::{CPU, P99};
        let by: [&Metric; 2] = [&CPU, &P99];
        let mut cpu = finding("server CPU per request", "reactor", 1.36, true);
        cpu.runner_up = "redis-server".into();
        let mut p99 = finding("p99 latency", "redis-server", 1.2, true);
        p99.runner_up = "dispatch".into();
        let failed = cell("queue-pool", 0, false);
        let (mut a, b) = (cell("reactor", 0, true), cell("redis-server", 0, true));
        let all = [&a, &b, &failed];
        assert_eq!(
            headline(&[cpu.clone(), p99.clone()], &all[..2], &all, &by),
            "Choose reactor: best on server CPU per request (1.36× better than redis-server). queue-pool failed 1 of 1 cells."
        );
        a.figures.client_bound = true;
        let all = [&a, &b, &failed];
        assert_eq!(
            headline(&[cpu.clone(), p99.clone()], &all[..2], &all, &by),
            "Choose reactor: best on server CPU per request (1.36× better than redis-server). \
             The client was the limit in 1 of 2 cells: their latency is the client's too. queue-pool failed 1 of 1 cells."
        );
        cpu.clear = false;
        assert_eq!(
            choice(&[cpu.clone(), p99.clone()], &by).unwrap(),
            "Choose redis-server: reactor and redis-server tie on server CPU per request (1.36×, within the noise), \
             and it is best on p99 latency (1.20× better than dispatch)"
        );
        p99.best = "dispatch".into();
        assert_eq!(
            choice(&[cpu.clone(), p99], &by).unwrap(),
            "No choice beyond the noise: reactor and redis-server tie on server CPU per request (1.36×, within the noise), \
             and p99 latency does not set one of them apart"
        );
        assert_eq!(choice(&[cpu], &[]), None, "nothing to choose by: the usual headline");
    }

    #[test]
    fn a_headline_with_nothing_clear_says_so_and_why() {
        let f = [finding("throughput", "epoll", 1.03, false)];
        let mut a = cell("epoll", 0, true);
        a.figures.client_bound = true;
        let b = cell("poll", 0, true);
        let all = [&a, &b];
        assert_eq!(
            headline(&f, &all, &all, &[]),
            "On throughput and latency no design separated: the client was the limit in 1 of 2 cells."
        );
        let rows = rows(&f, &all, 1);
        assert_eq!(
            (rows[0].confidence.as_str(), rows[0].reason.as_str()),
            ("one run", "within the noise")
        );
    }
}
