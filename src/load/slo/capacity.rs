//! A capacity search's answer ([`Capacity`]): the bracket, the capacity where both its ends
//! survived a re-check, every probe, and the answer as a person reads it.

use serde::{Deserialize, Serialize};

use super::Probe;
use crate::units::{fmt_us, thousands};

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
