//! `--slo`: the highest open-loop rate at which a latency target ([`Slo`]) holds. Probes at
//! rising rates (each a run of its own: its warm-up, its histogram, its not-completed requests
//! counted), then bisection until the bracket is within 2 %, within `--slo-time`. A probe whose
//! client was the limit ([`ClientLimit`]: its CPUs busy, behind its schedule, or short of it
//! while the target held) makes the answer inconclusive, never a capacity nobody saw.
//! [`Search::drive`] is the one probe loop: `muxlab load --slo` drives it with runs from here,
//! bench with bursts against the server it started.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{ClientLimit, Document, Error, LoadArgs, Slo};
use crate::units::{fmt_us, thousands};

/// The bracket is narrow enough when its ends are this close.
const NARROW: f64 = 0.02;

/// A probe's own length when the run gives no `-d`.
pub const PROBE: Duration = Duration::from_secs(2);

/// A probe's own warm-up when the run gives no `--warmup`: its connections' first requests
/// (and a server's first touches of their buffers) are not the steady state.
pub const PROBE_WARMUP: Duration = Duration::from_millis(300);

/// A probe's warm-up: `--warmup`, or [`PROBE_WARMUP`] where it is zero.
pub fn probe_warmup(given: Duration) -> Duration {
    if given.is_zero() {
        PROBE_WARMUP
    } else {
        given
    }
}

/// Fewer requests than this in a probe say nothing of a p99.
const FEWEST: f64 = 200.0;

/// One probe: what was offered and achieved, the latency, and whether the target held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub offered_rps: f64,
    pub achieved_rps: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// `None`: the probe says nothing of the server (the client was the limit).
    pub holds: Option<bool>,
    /// Why it failed, or why it says nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The answer: the highest rate that held, with every probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub slo: String,
    /// The highest offered rate at which the target held (`None`: none did, or inconclusive).
    pub rps: Option<f64>,
    /// The lowest rate that failed, when one did.
    pub failed_at: Option<f64>,
    pub probes: Vec<Probe>,
    /// Why there is no capacity to give (the client's limit, the time, no rate held).
    pub inconclusive: Option<String>,
}

/// Whether every bound of `slo` holds in `doc`, and the first that does not (with its figure).
fn holds(slo: &Slo, doc: &Document) -> (bool, Option<String>) {
    for b in &slo.0 {
        let latency = match &b.class {
            None => Some(&doc.results.latency_us),
            Some(c) => doc.results.classes.get(c).map(|k| &k.latency_us),
        };
        let v = latency.and_then(|l| b.quantile.of(l));
        let max = b.max.as_secs_f64() * 1e6;
        let class = b.class.as_ref().map(|c| format!("{c}:")).unwrap_or_default();
        match v {
            Some(v) if v <= max => {}
            Some(v) => return (false, Some(format!("{class}{} {}", b.quantile.name(), fmt_us(v)))),
            None => return (false, Some(format!("{class}{}: nothing completed", b.quantile.name()))),
        }
    }
    (true, None)
}

/// Judges one probe's document against `slo`, the saturation guard first.
pub fn judge(slo: &Slo, offered: f64, doc: &Document) -> Probe {
    let r = &doc.results;
    let achieved = r.open_loop.as_ref().map(|o| o.achieved_rps);
    let (mut held, mut why) = holds(slo, doc);
    // Connections that completed nothing while the schedule gave each of them requests (a
    // design that serves a few connections and leaves the rest waiting): their requests, sent
    // before the window, never count in its latency, so the target cannot be said to hold.
    let f = &r.fairness;
    let per_conn = offered * r.duration_s / doc.config.connections.max(1) as f64;
    if held && f.starved > 0 && per_conn >= 2.0 {
        held = false;
        why = Some(format!(
            "{} connections starved: their requests never completed",
            thousands(f.starved as u64)
        ));
    }
    let mut probe = Probe {
        offered_rps: offered,
        achieved_rps: achieved,
        p50_us: r.latency_us.p50,
        p99_us: r.latency_us.p99,
        holds: Some(held && r.error_total == 0),
        note: why.or_else(|| (r.error_total > 0).then(|| format!("{} errors", thousands(r.error_total)))),
    };
    // The client's limit, whether the target held or not: latency counts from the intended
    // time, so a late client only adds to it.
    if let Some(c) = ClientLimit::of(r, Some(slo.tightest_us()), held) {
        probe.holds = None;
        probe.note = Some(c.said());
    }
    probe
}

/// The search: the next rate to probe, from the probes so far.
pub struct Search {
    held: Option<f64>,
    failed: Option<f64>,
    next: f64,
    probes: Vec<Probe>,
    inconclusive: Option<String>,
    started: Instant,
    budget: Duration,
    /// A probe's length (warm-up and window, and what connecting and closing took), for the
    /// budget.
    pub probe_time: Duration,
}

impl Search {
    /// A search from `start` req/s within `budget`, each probe taking about `probe_time`.
    pub fn new(start: f64, budget: Duration, probe_time: Duration) -> Search {
        Search {
            held: None,
            failed: None,
            next: start,
            probes: Vec::new(),
            inconclusive: None,
            started: Instant::now(),
            budget,
            probe_time,
        }
    }

    /// The rate to probe next; `None` when the answer is known, inconclusive, or the time is
    /// spent.
    pub fn next_rate(&mut self) -> Option<f64> {
        if self.inconclusive.is_some() {
            return None;
        }
        if let (Some(lo), Some(hi)) = (self.held, self.failed) {
            if (hi - lo) / lo <= NARROW {
                return None;
            }
        }
        if self.started.elapsed() + self.probe_time > self.budget {
            let budget = crate::units::format_duration(self.budget);
            self.inconclusive = Some(match (self.held, self.failed) {
                (Some(lo), Some(hi)) => format!(
                    "--slo-time {budget} ran out with the capacity between {} and {} req/s (at least the first; \
                     not narrowed to 2 %)",
                    thousands(lo.round() as u64),
                    thousands(hi.round() as u64)
                ),
                (Some(lo), None) => format!(
                    "--slo-time {budget} ran out before a rate failed: the capacity is at least {} req/s",
                    thousands(lo.round() as u64)
                ),
                _ => format!("--slo-time {budget} ran out before a rate held"),
            });
            return None;
        }
        Some(self.next)
    }

    /// Records the probe at the rate [`next_rate`](Self::next_rate) gave.
    pub fn record(&mut self, p: Probe, window: Duration) {
        let rate = p.offered_rps;
        match p.holds {
            None => {
                self.inconclusive = Some(match p.achieved_rps.filter(|a| *a > 0.0) {
                    Some(a) => format!(
                        "the client could not offer more than {} req/s ({})",
                        thousands(a.round() as u64),
                        p.note.clone().unwrap_or_default()
                    ),
                    None => format!(
                        "the client could not offer {} req/s ({})",
                        thousands(rate.round() as u64),
                        p.note.clone().unwrap_or_default()
                    ),
                });
            }
            Some(true) => self.held = Some(self.held.map_or(rate, |h| h.max(rate))),
            Some(false) => self.failed = Some(self.failed.map_or(rate, |f| f.min(rate))),
        }
        self.probes.push(p);
        self.next = match (self.held, self.failed) {
            (Some(lo), Some(hi)) => (lo + hi) / 2.0,
            (Some(lo), None) => lo * 2.0,
            (None, Some(hi)) => hi / 2.0,
            (None, None) => self.next,
        };
        if self.inconclusive.is_none() && self.held.is_none() && self.next * window.as_secs_f64() < FEWEST {
            self.inconclusive = Some(format!(
                "no rate held down to {} req/s, under which a probe of {} has too few requests for its quantiles",
                thousands(self.failed.unwrap_or(rate).round() as u64),
                crate::units::format_duration(window)
            ));
        }
    }

    /// Ends the search for `reason` (interrupted, a probe that could not run): what was found
    /// so far is no answer.
    pub fn stop(&mut self, reason: String) {
        self.inconclusive = Some(reason);
    }

    /// The answer, with every probe.
    pub fn finish(self, slo: &Slo) -> Capacity {
        Capacity {
            slo: slo.to_string(),
            rps: self.held.filter(|_| self.inconclusive.is_none()),
            failed_at: self.failed,
            probes: self.probes,
            inconclusive: self.inconclusive,
        }
    }
}

/// What one probe gave the search.
pub enum Probed<T> {
    /// It ran and was judged: the probe, and what it measured (a document, a cell).
    Ran(Probe, T),
    /// It could not run or was interrupted: why (the search ends with no answer), and what it
    /// measured, if anything.
    Stopped(String, Option<T>),
}

/// A search's answer, and what its probes measured: the last probe that held, the last that
/// did not, and the one that stopped the search.
pub struct Searched<T> {
    pub capacity: Capacity,
    pub held: Option<T>,
    pub failed: Option<T>,
    pub stopped: Option<T>,
}

impl Search {
    /// Runs the search for `slo` to its end, `probe` running one probe at the rate it is given
    /// (each measured over `window`); the time each takes counts against the budget.
    pub fn drive<T>(mut self, slo: &Slo, window: Duration, mut probe: impl FnMut(f64) -> Probed<T>) -> Searched<T> {
        let (mut held, mut failed, mut stopped) = (None, None, None);
        while let Some(rate) = self.next_rate() {
            let began = Instant::now();
            let got = probe(rate);
            // A probe takes its connecting and closing too: the budget counts what it took.
            self.probe_time = self.probe_time.max(began.elapsed());
            match got {
                Probed::Ran(p, t) => {
                    let ok = p.holds == Some(true);
                    self.record(p, window);
                    match ok {
                        true => held = Some(t),
                        false => failed = Some(t),
                    }
                }
                Probed::Stopped(why, t) => {
                    self.stop(why);
                    stopped = t;
                    break;
                }
            }
        }
        Searched {
            capacity: self.finish(slo),
            held,
            failed,
            stopped,
        }
    }
}

/// Runs the search `args` asks for (its workload's `slo`), each probe a run from here at one
/// rate; `each` sees every probe as it ends. The document is the last probe that held (or the
/// last probe) with the capacity and every probe in `capacity`.
pub fn run(args: &LoadArgs, mut each: impl FnMut(&Probe)) -> Result<Document, Error> {
    let w = &args.workload;
    let slo = w
        .slo
        .clone()
        .ok_or_else(|| Error::Usage("no --slo to search for".into()))?;
    let window = w.duration.unwrap_or(PROBE);
    let warmup = probe_warmup(w.warmup);
    let search = Search::new(w.rate.unwrap_or(1000.0), w.slo_time, warmup + window);
    let mut failure = None;
    let found = search.drive(&slo, window, |rate| {
        let mut probe_args = args.clone();
        probe_args.workload.rate = Some(rate);
        probe_args.workload.slo = None;
        probe_args.workload.duration = Some(window);
        probe_args.workload.warmup = warmup;
        let ran = probe_args
            .resolve()
            .and_then(|spec| Ok((super::run_here(&spec, super::Show::Nothing, false)?, spec)));
        let (outcome, spec) = match ran {
            Ok(r) => r,
            Err(e) => {
                let why = e.to_string();
                failure = Some(e);
                return Probed::Stopped(why, None);
            }
        };
        let doc = Document::new(&spec, &outcome);
        if outcome.interrupted {
            return Probed::Stopped("interrupted".into(), Some(doc));
        }
        let p = judge(&slo, rate, &doc);
        each(&p);
        Probed::Ran(p, doc)
    });
    if let Some(e) = failure {
        return Err(e);
    }
    let mut doc = found.held.or(found.stopped).or(found.failed).ok_or_else(|| {
        Error::Usage(format!(
            "--slo-time {}: too short for one probe",
            crate::units::format_duration(w.slo_time)
        ))
    })?;
    doc.capacity = Some(found.capacity);
    Ok(doc)
}

/// The answer and its probes as a person reads them.
pub fn describe(c: &Capacity) -> String {
    let us = |v: Option<f64>| v.map_or("–".to_string(), fmt_us);
    let mut s = match (&c.inconclusive, c.rps) {
        (Some(why), _) => format!("capacity    inconclusive at {}: {why}\n", c.slo),
        (None, Some(r)) => format!(
            "capacity    {} req/s at {} (the highest offered rate that held; {} failed)\n",
            thousands(r.round() as u64),
            c.slo,
            c.failed_at
                .map_or("none".to_string(), |f| format!("{} req/s", thousands(f.round() as u64)))
        ),
        (None, None) => format!("capacity    none: no probed rate held {}\n", c.slo),
    };
    s.push_str(&format!(
        "  {:>12} {:>12} {:>10} {:>10}  {}\n",
        "offered", "achieved", "p50", "p99", "holds"
    ));
    for p in &c.probes {
        s.push_str(&format!(
            "  {:>12} {:>12} {:>10} {:>10}  {}{}\n",
            thousands(p.offered_rps.round() as u64),
            p.achieved_rps.map_or("–".into(), |a| thousands(a.round() as u64)),
            us(p.p50_us),
            us(p.p99_us),
            match p.holds {
                Some(true) => "yes",
                Some(false) => "no",
                None => "–",
            },
            p.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()
        ));
    }
    s
}

#[cfg(test)]
mod tests;
