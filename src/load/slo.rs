//! `--slo`: the highest open-loop rate at which a latency target holds. Probes at rising
//! rates (each a run of its own: its warm-up, its histogram, its not-completed requests
//! counted), then bisection until the bracket is within 2 %, within `--slo-time`. A probe the
//! client could not drive (its CPUs ≥ 90 % busy, or a probe that held while the client fell
//! behind its schedule or sent under 98 % of the offered rate) makes the answer inconclusive,
//! never a capacity nobody saw.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Document, Error, LoadArgs};
use crate::units::{fmt_us, parse_duration, thousands, BadValue};

/// The bracket is narrow enough when its ends are this close.
const NARROW: f64 = 0.02;

/// A probe that held while completing under this share of what its schedule called for: the
/// client's limit.
const ACHIEVED: f64 = 0.98;

/// The client's CPUs at least this busy: it may be the limit.
const SATURATED: f64 = 0.90;

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

/// A latency quantile a target bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantile {
    P50,
    P90,
    P99,
    P999,
}

impl Quantile {
    fn name(self) -> &'static str {
        match self {
            Quantile::P50 => "p50",
            Quantile::P90 => "p90",
            Quantile::P99 => "p99",
            Quantile::P999 => "p999",
        }
    }

    /// The quantile as a fraction (0.99 for p99).
    pub fn fraction(self) -> f64 {
        match self {
            Quantile::P50 => 0.50,
            Quantile::P90 => 0.90,
            Quantile::P99 => 0.99,
            Quantile::P999 => 0.999,
        }
    }

    fn of(self, l: &super::Latency) -> Option<f64> {
        match self {
            Quantile::P50 => l.p50,
            Quantile::P90 => l.p90,
            Quantile::P99 => l.p99,
            Quantile::P999 => l.p999,
        }
    }
}

/// One bound: a quantile of every request's latency, or of a class's, at most `max`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    pub class: Option<String>,
    pub quantile: Quantile,
    pub max: Duration,
}

/// A latency target: bounds that must all hold (`p99<=5ms,short:p50<=1ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct Slo(pub Vec<Bound>);

impl FromStr for Slo {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Slo, BadValue> {
        let form = "write QUANTILE<=DURATION (p50, p90, p99 or p999), e.g. p99<=5ms, several joined by ',', a class's as NAME:p99<=1ms";
        let bounds = s
            .split(',')
            .map(|part| {
                let bad = |why: &str| BadValue(format!("--slo '{s}': '{part}': {why} ({form})"));
                let (left, max) = part.trim().split_once("<=").ok_or_else(|| bad("no '<='"))?;
                let (class, q) = match left.rsplit_once(':') {
                    Some((c, q)) if !c.is_empty() => (Some(c.to_string()), q),
                    Some(_) => return Err(bad("an empty class name")),
                    None => (None, left),
                };
                let quantile = match q.trim() {
                    "p50" => Quantile::P50,
                    "p90" => Quantile::P90,
                    "p99" => Quantile::P99,
                    "p999" | "p99.9" => Quantile::P999,
                    other => return Err(bad(&format!("'{other}' is not a quantile"))),
                };
                let max = parse_duration(max.trim()).map_err(|e| bad(&e.0))?;
                if max.is_zero() {
                    return Err(bad("the bound must be more than zero"));
                }
                Ok(Bound { class, quantile, max })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Slo(bounds))
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|b| {
                let class = b.class.as_ref().map(|c| format!("{c}:")).unwrap_or_default();
                format!("{class}{}<={}", b.quantile.name(), crate::units::exact_duration(b.max))
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

impl Slo {
    /// The request classes its bounds name.
    pub fn classes(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|b| b.class.as_deref())
    }

    /// The tightest bound, in µs.
    fn tightest_us(&self) -> f64 {
        self.0
            .iter()
            .map(|b| b.max.as_secs_f64() * 1e6)
            .fold(f64::INFINITY, f64::min)
    }

    /// Whether every bound holds in `doc`, and the first that does not (with its figure).
    fn holds(&self, doc: &Document) -> (bool, Option<String>) {
        for b in &self.0 {
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
}

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

/// Judges one probe's document against `slo`, the saturation guard first.
pub fn judge(slo: &Slo, offered: f64, doc: &Document) -> Probe {
    let r = &doc.results;
    let achieved = r.open_loop.as_ref().map(|o| o.achieved_rps);
    let lag = r.open_loop.as_ref().and_then(|o| o.send_lag_us.p99);
    let (mut held, mut why) = slo.holds(doc);
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
    // Latency counts from the intended time, so a late client only adds to it; late by a
    // quarter of the target, its pacing (not the rate's) shaped the arrivals.
    let behind = lag.is_some_and(|l| l > slo.tightest_us() / 4.0);
    // Against what the schedule called for in the window (Poisson gaps vary that count), else
    // the offered rate.
    let scheduled = r.open_loop.as_ref().and_then(|o| o.scheduled).filter(|n| *n > 0);
    let short = match scheduled {
        Some(n) => (r.requests as f64) < n as f64 * ACHIEVED,
        None => achieved.is_some_and(|a| a < offered * ACHIEVED),
    };
    // The client's limit, whether the target held or not: its CPUs busy, or so late that its
    // lateness (in the latency) may be what failed the target.
    let client = if r.client_cpu_utilization >= SATURATED {
        Some(format!(
            "the client's CPUs were {:.0}% busy",
            r.client_cpu_utilization * 100.0
        ))
    } else if behind {
        Some(format!(
            "the client fell behind its schedule (send lag p99 {})",
            fmt_us(lag.unwrap_or(0.0))
        ))
    } else if held && short {
        Some("the client completed under 98% of what its schedule called for".to_string())
    } else {
        None
    };
    if let Some(c) = client {
        probe.holds = None;
        probe.note = Some(c);
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
    let mut search = Search::new(w.rate.unwrap_or(1000.0), w.slo_time, warmup + window);
    let (mut best, mut last): (Option<Document>, Option<Document>) = (None, None);
    while let Some(rate) = search.next_rate() {
        let mut probe_args = args.clone();
        probe_args.workload.rate = Some(rate);
        probe_args.workload.slo = None;
        probe_args.workload.duration = Some(window);
        probe_args.workload.warmup = warmup;
        let spec = probe_args.resolve()?;
        let started = Instant::now();
        let outcome = super::run_here(&spec, super::Show::Nothing, false)?;
        // A probe takes its connecting and closing too: the budget counts what it took.
        search.probe_time = search.probe_time.max(started.elapsed());
        let doc = Document::new(&spec, &outcome);
        if outcome.interrupted {
            search.stop("interrupted".into());
            last = Some(doc);
            break;
        }
        let p = judge(&slo, rate, &doc);
        each(&p);
        let held = p.holds == Some(true);
        search.record(p, window);
        match held {
            true => best = Some(doc),
            false => last = Some(doc),
        }
    }
    let capacity = search.finish(&slo);
    let mut doc = best.or(last).ok_or_else(|| {
        Error::Usage(format!(
            "--slo-time {}: too short for one probe",
            crate::units::format_duration(w.slo_time)
        ))
    })?;
    doc.capacity = Some(capacity);
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
