//! The search: rates rising by doubling until one fails, then bisection until the bracket is
//! within [`NARROW`]; then both ends are probed again with windows [`RECHECK`] times as long,
//! and the answer is given only where both survived. A re-check that turns an end over moves
//! the bracket (a low end that fails is a failure, a high end that holds a hold) and the search
//! goes on, so one spurious hold or failure cannot put the answer outside the bracket it
//! reports. A probe whose client was the limit is run once more at the same rate; twice is the
//! client's limit, and the search ends. Each rate's latest judgement counts; a rate held above the lowest failure is not
//! an end. A probe too short for its target's samples is lengthened, within the time left.

use std::time::{Duration, Instant};

use super::{Capacity, Nothing, Probe};
use crate::load::Slo;
use crate::units::{format_duration, thousands};

/// The bracket is narrow enough when its ends are this close.
pub const NARROW: f64 = 0.02;

/// A re-check's window, in probe windows.
pub const RECHECK: u32 = 3;

/// A probe's window, at least, in the target's loosest bounds: a latency can only fail a bound
/// in a window longer than it (a request not completed is counted at its age at the close), and
/// three quarters of the window's requests are due before the close less the bound.
pub const BOUNDS_PER_WINDOW: u32 = 4;

/// One probe to run: its rate, its measured window, and whether it re-checks an end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub rate: f64,
    pub window: Duration,
    pub recheck: bool,
}

/// A rate probed, with its latest judgement.
#[derive(Debug, Clone, Copy)]
struct Tried {
    rate: f64,
    held: bool,
    /// The judgement came from a re-check (a window [`RECHECK`] times as long).
    checked: bool,
}

/// The search: the next probe, from the probes so far.
pub struct Search {
    start: f64,
    tried: Vec<Tried>,
    probes: Vec<Probe>,
    inconclusive: Option<String>,
    started: Instant,
    /// What the probes recorded so far took at least (their windows and overheads): the time
    /// spent is the larger of this and the clock's.
    planned: Duration,
    budget: Duration,
    /// A probe's measured window.
    window: Duration,
    /// What a probe takes besides its window (its warm-up, connecting and closing), for the
    /// budget: the most any probe took so far.
    pub overhead: Duration,
    /// The requests a probe must carry for every bound's samples.
    fewest: f64,
    /// A probe whose client was the limit, to run once more (a moment's lateness is not the
    /// client's limit: twice at the same rate is).
    again: Option<Plan>,
    /// Rates whose client was the limit once already.
    client_once: Vec<f64>,
}

impl Search {
    /// A search for `slo` from `start` req/s within `budget`, each probe measuring `window`
    /// after `overhead` (its warm-up); `share` gives a class's share of the requests.
    pub fn new(
        slo: &Slo,
        start: f64,
        budget: Duration,
        window: Duration,
        overhead: Duration,
        share: impl Fn(&str) -> Option<f64>,
    ) -> Search {
        Search {
            start,
            tried: Vec::new(),
            probes: Vec::new(),
            inconclusive: None,
            started: Instant::now(),
            planned: Duration::ZERO,
            budget,
            window: slo
                .0
                .iter()
                .map(|b| b.max * BOUNDS_PER_WINDOW)
                .fold(window, Duration::max),
            overhead,
            fewest: slo.fewest_requests(share),
            again: None,
            client_once: Vec::new(),
        }
    }

    /// The highest rate that held below the lowest that failed, and that failure.
    fn bracket(&self) -> (Option<Tried>, Option<Tried>) {
        let high = self
            .tried
            .iter()
            .filter(|t| !t.held)
            .min_by(|a, b| a.rate.total_cmp(&b.rate))
            .copied();
        let low = self
            .tried
            .iter()
            .filter(|t| t.held && high.is_none_or(|h| t.rate < h.rate))
            .max_by(|a, b| a.rate.total_cmp(&b.rate))
            .copied();
        (low, high)
    }

    /// The probe to run next; `None` when the answer is known, inconclusive, or the time is
    /// spent.
    pub fn next_probe(&mut self) -> Option<Plan> {
        if self.inconclusive.is_some() {
            return None;
        }
        let long = self.window * RECHECK;
        let (low, high) = self.bracket();
        let plan = match (low, high) {
            _ if self.again.is_some() => self.again.take()?,
            (Some(l), Some(h)) if (h.rate - l.rate) / l.rate <= NARROW => match (l.checked, h.checked) {
                (false, _) => Plan {
                    rate: l.rate,
                    window: long,
                    recheck: true,
                },
                (true, false) => Plan {
                    rate: h.rate,
                    window: long,
                    recheck: true,
                },
                (true, true) => return None,
            },
            (Some(l), Some(h)) => self.plan((l.rate + h.rate) / 2.0),
            (Some(l), None) => self.plan(l.rate * 2.0),
            (None, Some(h)) => self.plan(h.rate / 2.0),
            (None, None) => self.plan(self.start),
        };
        let spent = self.started.elapsed().max(self.planned);
        let left = self.budget.saturating_sub(spent + self.overhead);
        // Lengthened for its samples, within the time left.
        let need = Duration::from_secs_f64((self.fewest * 1.1 / plan.rate).min(1e6));
        let window = plan.window.max(need.min(left));
        if window > left {
            self.inconclusive = Some(self.out_of_time(low, high));
            return None;
        }
        if low.is_none() && need > left {
            self.inconclusive = Some(format!(
                "no rate held down to {} req/s, under which a probe in the time left has too few samples",
                thousands(high.map_or(plan.rate, |h| h.rate).round() as u64)
            ));
            return None;
        }
        Some(Plan { window, ..plan })
    }

    fn plan(&self, rate: f64) -> Plan {
        Plan {
            rate,
            window: self.window,
            recheck: false,
        }
    }

    /// Why there is no answer when the time ran out, with what was found.
    fn out_of_time(&self, low: Option<Tried>, high: Option<Tried>) -> String {
        let budget = format_duration(self.budget);
        let rps = |r: f64| thousands(r.round() as u64);
        match (low, high) {
            (Some(l), Some(h)) => {
                let state = match (h.rate - l.rate) / l.rate <= NARROW {
                    true => "narrowed, not re-checked",
                    false => "not narrowed",
                };
                format!(
                    "the time ({budget}) ran out: ≥ {} req/s, failed at {} ({state})",
                    rps(l.rate),
                    rps(h.rate)
                )
            }
            (Some(l), None) => format!(
                "the time ({budget}) ran out before a rate failed: ≥ {} req/s (not narrowed)",
                rps(l.rate)
            ),
            _ => format!("the time ({budget}) ran out before a rate held"),
        }
    }

    /// Records the probe run for `plan`.
    pub fn record(&mut self, p: Probe, plan: Plan) {
        self.planned += plan.window + self.overhead;
        match (p.holds, p.nothing) {
            (Some(held), _) => {
                // A judged result: a later client-limited probe here gets its retry again.
                self.client_once.retain(|r| *r != plan.rate);
                self.tried.retain(|t| t.rate != plan.rate);
                self.tried.push(Tried {
                    rate: plan.rate,
                    held,
                    checked: plan.recheck,
                });
            }
            (None, Some(Nothing::TooFewSamples)) => {
                self.inconclusive = Some(format!(
                    "at {} req/s: {}",
                    thousands(plan.rate.round() as u64),
                    p.note.clone().unwrap_or_default()
                ));
            }
            (None, _) if !self.client_once.contains(&plan.rate) => {
                self.client_once.push(plan.rate);
                self.again = Some(plan);
            }
            (None, _) => {
                let sent = p.sent_rps.filter(|s| *s > 0.0).unwrap_or(plan.rate);
                let low = self.bracket().0.map(|l| l.rate);
                self.inconclusive = Some(format!(
                    "the client could not offer more than {} req/s ({}){}",
                    thousands(sent.round() as u64),
                    p.note.clone().unwrap_or_default(),
                    low.map(|l| format!(": ≥ {} req/s (the client's limit)", thousands(l.round() as u64)))
                        .unwrap_or_default()
                ));
            }
        }
        self.probes.push(Probe {
            recheck: plan.recheck,
            ..p
        });
    }

    /// Ends the search for `reason` (interrupted, a probe that could not run): what was found
    /// so far is no answer.
    pub fn stop(&mut self, reason: String) {
        self.inconclusive = Some(reason);
    }

    /// The answer, with every probe: a capacity only where the bracket is narrow and both its
    /// ends survived a re-check.
    pub fn finish(self, slo: &Slo) -> Capacity {
        let (low, high) = self.bracket();
        let answered =
            self.inconclusive.is_none() && matches!((low, high), (Some(l), Some(h)) if l.checked && h.checked);
        Capacity {
            slo: slo.to_string(),
            rps: low.filter(|_| answered).map(|l| l.rate),
            low: low.map(|l| l.rate),
            high: high.map(|h| h.rate),
            probes: self.probes,
            inconclusive: self.inconclusive,
        }
    }

    /// The current ends of the bracket (for [`drive`](Self::drive)'s keeping).
    fn ends(&self) -> (Option<f64>, Option<f64>) {
        let (l, h) = self.bracket();
        (l.map(|t| t.rate), h.map(|t| t.rate))
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

/// A search's answer, and what its probes measured: the latest probe at the bracket's low end,
/// the latest at its high end, and the one that stopped the search.
pub struct Searched<T> {
    pub capacity: Capacity,
    pub held: Option<T>,
    pub failed: Option<T>,
    pub stopped: Option<T>,
}

impl Search {
    /// Runs the search to its end, `probe` running the probe it is given; the time each takes
    /// counts against the budget.
    pub fn drive<T>(mut self, slo: &Slo, mut probe: impl FnMut(Plan) -> Probed<T>) -> Searched<T> {
        // What each rate's latest probe measured.
        let mut kept: Vec<(f64, T)> = Vec::new();
        let mut stopped = None;
        while let Some(plan) = self.next_probe() {
            let began = Instant::now();
            let got = probe(plan);
            // A probe takes its warm-up, connecting and closing too: the budget counts them.
            self.overhead = self.overhead.max(began.elapsed().saturating_sub(plan.window));
            match got {
                Probed::Ran(p, t) => {
                    self.record(p, plan);
                    kept.retain(|(r, _)| *r != plan.rate);
                    kept.push((plan.rate, t));
                }
                Probed::Stopped(why, t) => {
                    self.stop(why);
                    stopped = t;
                    break;
                }
            }
        }
        let (low, high) = self.ends();
        let mut take = |rate: Option<f64>| {
            let i = kept.iter().position(|(r, _)| Some(*r) == rate)?;
            Some(kept.swap_remove(i).1)
        };
        let (held, failed) = (take(low), take(high));
        Searched {
            capacity: self.finish(slo),
            held,
            failed,
            stopped,
        }
    }
}
