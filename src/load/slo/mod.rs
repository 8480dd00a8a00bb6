//! `--slo`: the highest open-loop rate at which a latency target ([`Slo`]) holds. Probes at
//! rising rates (each a run of its own: its warm-up, its histogram, its not-completed requests
//! counted), then bisection until the bracket is within 2 %, then a re-check of both ends with
//! longer windows, within `--slo-time` ([`search`]). Each probe is judged on what it measured
//! ([`judge`]): errors and refusals fail it, a bound with too few samples says nothing, a miss
//! is the server's unless the client's lateness accounts for it ([`ClientLimit`]).
//! [`Search::drive`] is the one probe loop: `muxlab load --slo` drives it with runs from here,
//! bench with bursts against the server it started.

mod judge;
mod search;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use judge::judge;
pub use search::{Plan, Probed, Search, Searched, NARROW, RECHECK};

#[cfg(doc)]
use super::ClientLimit;
use super::{Document, Error, LoadArgs, Slo};
use crate::units::{fmt_us, thousands};

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

/// Why a probe says nothing of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Nothing {
    /// The client was the limit ([`ClientLimit`]).
    Client,
    /// A bound had fewer samples than it needs to be judged.
    TooFewSamples,
}

/// One probe: what was offered and measured, and whether the target held — with what a reader
/// needs to audit the judgement (samples, the client's CPU and lateness, waits, errors).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub offered_rps: f64,
    /// Completions per second (the server's throughput).
    pub achieved_rps: Option<f64>,
    /// Requests the client sent per second of the window (what it offered).
    #[serde(default)]
    pub sent_rps: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// `None`: the probe says nothing of the server (`nothing` says why).
    pub holds: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nothing: Option<Nothing>,
    /// Why it failed, or why it says nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Its measured window (s), and whether it re-checked an end of the bracket.
    #[serde(default)]
    pub window_s: Option<f64>,
    #[serde(default)]
    pub recheck: bool,
    /// Latency samples in the window (completed, and not completed at its close).
    #[serde(default)]
    pub samples: Option<u64>,
    /// The client's CPU use (a share of its CPUs), and its send lag p99.
    #[serde(default)]
    pub client_cpu: Option<f64>,
    #[serde(default)]
    pub send_lag_p99_us: Option<f64>,
    /// Requests that waited for a free connection, and errors.
    #[serde(default)]
    pub waited_for_connection: Option<u64>,
    #[serde(default)]
    pub errors: Option<u64>,
}

/// The answer: the bracket, and a capacity where both its ends survived a re-check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub slo: String,
    /// The highest offered rate at which the target held, once the bracket is narrow and both
    /// its ends survived a re-check (`None`: no answer; `low` says how far it got).
    pub rps: Option<f64>,
    /// The highest rate that held below `high` (its latest probe).
    #[serde(default)]
    pub low: Option<f64>,
    /// The lowest rate that failed (its latest probe).
    #[serde(default, alias = "failed_at")]
    pub high: Option<f64>,
    pub probes: Vec<Probe>,
    /// Why there is no capacity to give (the client's limit, the time, no rate held).
    pub inconclusive: Option<String>,
}

/// Why a probe that could not open one connection ends the search (a lower rate would not
/// either: nothing listens, or the server refuses everyone); `None` when it connected.
pub fn unreachable(doc: &Document) -> Option<String> {
    let r = &doc.results;
    (r.connections.established == 0).then(|| {
        let kinds: Vec<String> = r.errors.iter().map(|(k, n)| format!("{} {k}", thousands(*n))).collect();
        format!("no connection could be made ({})", kinds.join(", "))
    })
}

/// A class's share of a workload's requests, by its `--mix` weight, or a keyed target's
/// command by `--ratio` (`None`: a class the weights do not name, as from a `--mix-file`).
pub fn class_share(w: &super::Workload) -> impl Fn(&str) -> Option<f64> + '_ {
    let total: f64 = w.mix.iter().map(|m| m.weight).sum();
    move |c| {
        if w.mix.is_empty() {
            // Without a mix only a keyed target's classes can be named (`LoadArgs::resolve`).
            let r = w.ratio.unwrap_or_default();
            let weights = [r.set, r.get];
            let k = super::keyed::CLASSES.iter().position(|n| *n == c)?;
            return Some(weights[k] / (r.set + r.get));
        }
        let m = w.mix.iter().find(|m| m.name == c)?;
        (total > 0.0).then(|| m.weight / total)
    }
}

/// Runs the search `args` asks for (its workload's `slo`), each probe a run from here at one
/// rate; `each` sees every probe as it ends. The document is the latest probe at the bracket's
/// low end (or the last probe) with the capacity and every probe in `capacity`.
pub fn run(args: &LoadArgs, mut each: impl FnMut(&Probe)) -> Result<Document, Error> {
    let w = &args.workload;
    let slo = w
        .slo
        .clone()
        .ok_or_else(|| Error::Usage("no --slo to search for".into()))?;
    let window = w.duration.unwrap_or(PROBE);
    let warmup = probe_warmup(w.warmup);
    let search = Search::new(
        &slo,
        w.rate.map_or(1000.0, |r| r.per_s()),
        w.slo_time,
        window,
        warmup,
        class_share(w),
    );
    let mut failure = None;
    let found = search.drive(&slo, |plan| {
        let mut probe_args = args.clone();
        probe_args.workload.rate = Some(plan.rate.into());
        probe_args.workload.slo = None;
        probe_args.workload.duration = Some(plan.window);
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
        if let Some(why) = unreachable(&doc) {
            return Probed::Stopped(why, Some(doc));
        }
        let p = Probe {
            recheck: plan.recheck,
            ..judge(&slo, plan.rate, &doc)
        };
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
    let rps = |v: f64| thousands(v.round() as u64);
    let mut s = match (&c.inconclusive, c.rps) {
        (Some(why), _) => format!("capacity    inconclusive at {}: {why}\n", c.slo),
        (None, Some(r)) => format!(
            "capacity    {} req/s at {} (held, and held again over a longer window; {} failed, and failed again)\n",
            rps(r),
            c.slo,
            c.high.map_or("none".to_string(), |f| format!("{} req/s", rps(f)))
        ),
        (None, None) => format!("capacity    none: no probed rate held {}\n", c.slo),
    };
    s.push_str(&format!(
        "  {:>12} {:>12} {:>7} {:>10} {:>10} {:>8} {:>5}  {}\n",
        "offered", "sent", "window", "samples", "p99", "lag p99", "cpu", "holds"
    ));
    for p in &c.probes {
        s.push_str(&format!(
            "  {:>12} {:>12} {:>7} {:>10} {:>10} {:>8} {:>5}  {}{}{}\n",
            rps(p.offered_rps),
            p.sent_rps.map_or("–".into(), rps),
            p.window_s.map_or("–".into(), |w| format!("{w:.1}s")),
            p.samples.map_or("–".into(), thousands),
            us(p.p99_us),
            us(p.send_lag_p99_us),
            p.client_cpu.map_or("–".into(), |u| format!("{:.0}%", u * 100.0)),
            match p.holds {
                Some(true) => "yes",
                Some(false) => "no",
                None => "–",
            },
            if p.recheck { " (re-check)" } else { "" },
            p.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()
        ));
    }
    s
}

#[cfg(test)]
mod tests;
