//! The answer first: an experiment's headline (at most two short sentences a person reads in
//! five seconds: the pick where the rounds' interval supports one, then who failed or starved,
//! or a second best) and its verdict table (a row per ranked metric, with its rounds' interval
//! and who fell behind), both built from the findings and the cells, before the prose.

use serde::{Deserialize, Serialize};

use super::finding::Finding;
use super::interval::MARGIN;
use super::metric::Metric;
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
    /// How sure: the rounds and their interval ("3 rounds, 1.08–1.25×"), a share's counts, or
    /// "one round: not judged".
    pub confidence: String,
    /// Why the row says what it says: beyond the noise, or within it.
    pub reason: String,
    /// The last of the ranking and how far behind the best, over its rounds ("thread at least
    /// 35.00× behind (3 rounds, 14.2–90.1×)"; `None`: two targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<String>,
    /// What bound the best's cell at the count compared (`None`: no explain card).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_by: Option<String>,
}

/// The verdict table of `findings` over `cells`.
pub fn rows(findings: &[Finding], cells: &[&Cell]) -> Vec<Row> {
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
            confidence: f.confidence(),
            reason: match (f.why.is_empty(), f.clear) {
                (false, _) => f.why.clone(),
                (true, true) => "beyond the noise".into(),
                (true, false) => f.noise(),
            },
            behind: match (&f.behind, &f.last) {
                (Some(b), _) => Some(b.said(f.rounds)),
                (None, last) => last.as_ref().map(|(t, r)| format!("{t} {}", times(*r))),
            },
            bound_by: cells
                .iter()
                .find(|c| c.label() == f.best && c.connections == f.connections)
                .and_then(|c| super::bound::of(c))
                .map(|b| b.bound.name().to_string()),
        })
        .collect()
}

/// A design this many times behind the best on a ranked metric is what `muxlab docs` leads
/// a verdict's figures with where no finding is clear (the table names the last, however far).
pub const BEHIND: f64 = 1.5;

/// At most two short sentences, the answer first: the pick where the rounds' interval supports
/// one ("Choose uring: best on throughput, 1.16× epoll (3 rounds, 1.08–1.25×)"), or that there
/// is none ("No pick: ..."); then the designs that failed or starved connections, or else a
/// second design best beyond the noise on another metric. Who fell behind is in the table.
///
/// With metrics to choose by (`choose_by`), the pick is made on them, in their order; without,
/// on the first metric ranked beyond the noise. Targets placed differently get a pick each.
pub fn headline(findings: &[Finding], _cells: &[&Cell], all: &[&Cell], by: &[&Metric]) -> String {
    let picked = choice(findings, by).unwrap_or_else(|| "No pick: nothing was ranked".into());
    let mut s = picked + ".";
    let second = match trouble(all) {
        Some(t) => Some(t),
        None if by.is_empty() => also(findings),
        None => None,
    };
    if let Some(t) = second {
        // A design's name opens it, as the design is named (lower case: "prefork starved ...").
        s.push(' ');
        s.push_str(&t);
        s.push('.');
    }
    s
}

/// "Choose uring: best on throughput, 1.16× epoll (3 rounds, 1.08–1.25×)", a clear finding as
/// a pick; with another clear finding of the same best, ", and on ...".
fn chosen(f: &Finding, others: &[&Finding]) -> String {
    let mut s = format!("Choose {}: best on {}", f.best, about(f));
    let more: Vec<String> = others
        .iter()
        .filter(|o| o.clear && o.best == f.best && !std::ptr::eq(**o, f))
        .take(1)
        .map(|o| format!("{} ({}×, {})", about(o), ratio_said(o.ratio), o.confidence()))
        .collect();
    s.push_str(&format!(
        ", {}× {} ({})",
        ratio_said(f.ratio),
        f.runner_up,
        f.confidence()
    ));
    if let Some(m) = more.first() {
        s.push_str(&format!(", and on {m}"));
    }
    s
}

/// A finding's metric as a headline names it ("throughput", "short p99 latency").
fn about(f: &Finding) -> String {
    match &f.class {
        Some(c) => format!("{c} {}", f.metric),
        None => f.metric.clone(),
    }
}

fn ratio_said(r: f64) -> String {
    match r >= 10.0 {
        true => format!("{r:.0}"),
        false => format!("{r:.2}"),
    }
}

/// Where no pick is supported: "No pick: epoll, uring and reactor within 5 % on throughput (3
/// rounds, 0.98–1.04×)", "No pick: the rounds do not separate epoll and uring on p99 latency
/// (3 rounds, 0.90–1.40×)", or "No pick: one round, not judged (uring 1.16× epoll on
/// throughput)".
fn no_pick(f: &Finding) -> String {
    if !f.resolved() {
        return format!("No pick: {} and {} on {}, {}", f.best, f.runner_up, about(f), f.noise());
    }
    match f.interval {
        None if f.counts.is_none() => format!(
            "No pick: {} ({} {}× {} on {})",
            f.not_judged().replacen(": ", ", ", 1),
            f.best,
            ratio_said(f.ratio),
            f.runner_up,
            about(f)
        ),
        Some(i) if i.within_margin() => format!(
            "No pick: {} within {:.0} % on {} ({})",
            and_list(&[&f.best, &f.runner_up]),
            (MARGIN - 1.0) * 100.0,
            about(f),
            i.said()
        ),
        _ => format!(
            "No pick: the rounds do not separate {} and {} on {} ({})",
            f.best,
            f.runner_up,
            about(f),
            f.confidence()
        ),
    }
}

fn and_list(xs: &[&str]) -> String {
    match xs {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The pick, in a sentence: on `by` (metrics in order) where given, else on every request's
/// metrics in the findings' order (throughput, latency, CPU, memory). The best on the first
/// metric its rounds separate; where none is separated, why not (of the first metric ranked).
/// Targets placed differently get a pick each, saying where. `None` where nothing was ranked.
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
    let every: Vec<&Finding> = findings.iter().filter(|f| f.class.is_none()).collect();
    let order: Vec<&Finding> = match by.is_empty() {
        true => every.clone(),
        false => by
            .iter()
            .filter_map(|m| every.iter().copied().find(|f| f.metric == m.name))
            .collect(),
    };
    let first = order.first()?;
    if let Some(f) = order.iter().find(|f| f.clear) {
        // With metrics to choose by, a later one decides only between the first's two.
        let fits = by.is_empty() || std::ptr::eq(*f, *first) || f.best == first.best || f.best == first.runner_up;
        if fits {
            let mut s = chosen(f, &order);
            if !std::ptr::eq(*f, *first) && !by.is_empty() {
                s.push_str(&format!(
                    " ({} and {} not separated on {}, {})",
                    first.best,
                    first.runner_up,
                    first.metric,
                    first.confidence()
                ));
            }
            return Some(s);
        }
    }
    // No pick: why not, of the first metric that says something of the designs: judged over
    // rounds where one was (throughput an open loop offered alike says nothing, nor a gap
    // ranked in too few rounds while another was judged).
    let says = |f: &&&Finding| f.why != super::finding::OFFERED;
    let judged = |f: &&&Finding| f.interval.is_some() || f.counts.is_some();
    let said = order
        .iter()
        .find(|f| says(f) && judged(f))
        .or_else(|| order.iter().find(says))
        .unwrap_or(first);
    Some(no_pick(said))
}

/// A second design best beyond the noise on another metric than the pick's ("uring is best on
/// p99 latency, 1.13× epoll (3 rounds, 1.04–1.22×)"), where there is one.
fn also(findings: &[Finding]) -> Option<String> {
    let clear: Vec<&Finding> = findings.iter().filter(|f| f.clear).collect();
    let first = clear.first()?;
    let other = clear
        .iter()
        .find(|f| f.best != first.best && f.placed == first.placed)?;
    Some(format!(
        "{} is best on {}{}, {}× {} ({})",
        other.best,
        about(other),
        other.placed_said(),
        ratio_said(other.ratio),
        other.runner_up,
        other.confidence()
    ))
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
            behind: None,
            unranked: Vec::new(),
            class: None,
            placed: None,
            why: String::new(),
            counts: None,
            interval: None,
            rounds: 1,
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

    /// A finding over three rounds with interval `low`–`high` (clear where it lies past 5 %).
    fn rounds(metric: &str, best: &str, ratio: f64, low: f64, high: f64) -> Finding {
        let mut f = finding(metric, best, ratio, low > 1.05);
        f.interval = Some(crate::bench::judge::interval::Interval {
            rounds: 3,
            ratio,
            low,
            high,
        });
        f.rounds = 3;
        f
    }

    /// The pick first, with its rounds' interval, and the designs not to trust second: two
    /// sentences at most; each design once, its worst cell.
    #[test]
    fn the_headline_opens_with_the_pick_and_its_interval_then_the_designs_not_to_trust() {
        let f = [
            rounds("throughput", "epoll", 1.24, 1.12, 1.37),
            rounds("server CPU per request", "epoll", 1.31, 1.2, 1.43),
            rounds("p99 latency", "uring", 1.10, 1.06, 1.15),
            rounds("memory per connection", "reactor", 1.02, 0.97, 1.07),
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
            "Choose epoll: best on throughput, 1.24× poll (3 rounds, 1.12–1.37×), and on server CPU per request \
             (1.31×, 3 rounds, 1.20–1.43×). prefork starved 998 of 1,000 connections; thread failed 1 of 1 cells."
        );
        assert!(h.matches(". ").count() <= 1, "two sentences at most");
        // Without trouble, the second sentence is another design's clear best.
        let h = headline(&f, &all[..1], &all[..1], &[]);
        assert!(
            h.ends_with(". uring is best on p99 latency, 1.10× poll (3 rounds, 1.06–1.15×)."),
            "{h}"
        );
    }

    /// Where the rounds separate nothing, the headline says there is no pick, and why: within
    /// 5 %, rounds too spread to separate them, or one round, not judged.
    #[test]
    fn no_pick_says_why() {
        let all: [&Cell; 0] = [];
        let within = [rounds("throughput", "epoll", 1.02, 0.99, 1.04)];
        assert_eq!(
            headline(&within, &all, &all, &[]),
            "No pick: epoll and poll within 5 % on throughput (3 rounds, 0.99–1.04×)."
        );
        let wide = [rounds("throughput", "epoll", 1.2, 0.9, 1.6)];
        assert_eq!(
            headline(&wide, &all, &all, &[]),
            "No pick: the rounds do not separate epoll and poll on throughput (3 rounds, 0.90–1.60×)."
        );
        let one = [finding("throughput", "epoll", 1.5, false)];
        assert_eq!(
            headline(&one, &all, &all, &[]),
            "No pick: one round, not judged (epoll 1.50× poll on throughput)."
        );
        let rows = rows(&one, &all);
        assert_eq!(rows[0].confidence, "one round: not judged");
        let rows = super::rows(&wide, &all);
        assert_eq!(rows[0].confidence, "3 rounds, 0.90–1.60×");
    }

    /// `choose_by = ["cpu", "p99"]`: the best on CPU per request where its rounds separate it;
    /// where they do not, the one of the two that is best on p99; else no pick, and why.
    #[test]
    fn the_pick_is_the_first_metrics_clear_best_else_the_pair_decided_by_the_next() {
        use crate::bench::judge::metric::{CPU, P99};
        let by: [&Metric; 2] = [&CPU, &P99];
        let mut cpu = rounds("server CPU per request", "reactor", 1.36, 1.2, 1.5);
        cpu.runner_up = "redis-server".into();
        let mut p99 = rounds("p99 latency", "redis-server", 1.2, 1.1, 1.3);
        p99.runner_up = "dispatch".into();
        let failed = cell("queue-pool", 0, false);
        let (a, b) = (cell("reactor", 0, true), cell("redis-server", 0, true));
        let all = [&a, &b, &failed];
        assert_eq!(
            headline(&[cpu.clone(), p99.clone()], &all[..2], &all, &by),
            "Choose reactor: best on server CPU per request, 1.36× redis-server (3 rounds, 1.20–1.50×). \
             queue-pool failed 1 of 1 cells."
        );
        let mut tie = cpu.clone();
        tie.interval = Some(crate::bench::judge::interval::Interval {
            rounds: 3,
            ratio: 1.04,
            low: 0.98,
            high: 1.1,
        });
        (tie.clear, tie.ratio) = (false, 1.04);
        assert_eq!(
            choice(&[tie.clone(), p99.clone()], &by).unwrap(),
            "Choose redis-server: best on p99 latency, 1.20× dispatch (3 rounds, 1.10–1.30×) \
             (reactor and redis-server not separated on server CPU per request, 3 rounds, 0.98–1.10×)"
        );
        p99.best = "dispatch".into();
        assert_eq!(
            choice(&[tie.clone(), p99], &by).unwrap(),
            "No pick: the rounds do not separate reactor and redis-server on server CPU per request (3 rounds, 0.98–1.10×)"
        );
        assert_eq!(choice(&[], &by), None, "nothing ranked: nothing to pick from");
    }
}
