//! A run's time series (`load --timeseries FILE`): the measured window in intervals of
//! `--interval` (1 s by default), each with what was sent and completed in it, the latency of
//! its completions (an HDR histogram of its own, so quantiles are read, never averaged), its
//! errors by class, and the connections and streams open. Intervals travel in the lossless
//! [`Tally`](super::tally::Tally) and merge by index, so the pieces of one run (`--shard`,
//! `--hosts`) add up to one series. Written as NDJSON, a line per interval.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::error_class::{ErrorClass, CLASSES, ERROR_CLASSES};
use crate::hist::{Hist, Latency};

/// One interval of the window, as one thread (or, merged, the run) counted it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Interval {
    pub sent: u64,
    pub completed: u64,
    /// Errors by class, by the class's place in the error classes.
    pub errors: Vec<u64>,
    /// Latency of the requests completed in it, from their intended send time.
    pub latency: Hist,
    /// Connections and event streams open, as the interval's look found them (summed over the
    /// pieces: each thread looks once an interval).
    pub open: u64,
    pub streams: u64,
}

/// The clock of a thread's series: where the window starts and how long an interval lasts.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub from: Instant,
    /// The window's end, where it has one (past it nothing is counted).
    pub until: Option<Instant>,
    pub every: Duration,
}

impl Clock {
    /// The interval `t` falls in (`None` before the window).
    pub fn index(&self, t: Instant) -> Option<usize> {
        if self.until.is_some_and(|u| t >= u) {
            return None;
        }
        let d = t.checked_duration_since(self.from)?;
        Some((d.as_nanos() / self.every.as_nanos().max(1)) as usize)
    }
}

/// The interval `i` of `series`, made where it is not yet.
pub fn at(series: &mut Vec<Interval>, i: usize) -> &mut Interval {
    if series.len() <= i {
        series.resize_with(i + 1, Interval::default);
    }
    &mut series[i]
}

/// Counts an error of `class` in interval `i`.
pub fn error(series: &mut Vec<Interval>, i: usize, class: ErrorClass) {
    let iv = at(series, i);
    if iv.errors.len() < CLASSES {
        iv.errors.resize(CLASSES, 0);
    }
    iv.errors[class as usize] += 1;
}

/// Adds `other` into `into`, interval by interval, `other` starting `shift` intervals later.
pub fn merge(into: &mut Vec<Interval>, other: &[Interval], shift: usize) {
    for (k, b) in other.iter().enumerate() {
        let a = at(into, k + shift);
        a.sent += b.sent;
        a.completed += b.completed;
        if a.errors.len() < b.errors.len() {
            a.errors.resize(b.errors.len(), 0);
        }
        for (x, y) in a.errors.iter_mut().zip(&b.errors) {
            *x += y;
        }
        a.latency.merge(&b.latency);
        a.open += b.open;
        a.streams += b.streams;
    }
}

/// One NDJSON line of the series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// The interval's start, seconds from the window's start, and its length.
    pub t_s: f64,
    pub interval_s: f64,
    pub sent: u64,
    pub completed: u64,
    pub sent_rps: f64,
    pub completed_rps: f64,
    /// Its completions' latency (µs); null quantiles where none completed.
    pub latency_us: Latency,
    /// Its errors by class name (the classes with errors).
    pub errors: BTreeMap<String, u64>,
    pub open_connections: u64,
    pub streams: u64,
}

/// The series as lines, one per interval of `every` of a `window` that long: the last one's
/// rates over the part of it inside the window.
pub fn lines(series: &[Interval], every: Duration, window: Duration) -> Vec<Line> {
    let (s, w) = (every.as_secs_f64(), window.as_secs_f64());
    series
        .iter()
        .enumerate()
        .map(|(k, iv)| {
            let t = k as f64 * s;
            let len = if w > t { (w - t).min(s) } else { s };
            (k, iv, t, len)
        })
        .map(|(_, iv, t, len)| Line {
            t_s: t,
            interval_s: len,
            sent: iv.sent,
            completed: iv.completed,
            sent_rps: iv.sent as f64 / len,
            completed_rps: iv.completed as f64 / len,
            latency_us: iv.latency.latency(),
            errors: ERROR_CLASSES
                .iter()
                .filter_map(|(c, name)| {
                    let n = iv.errors.get(*c as usize).copied().unwrap_or(0);
                    (n > 0).then(|| (name.to_string(), n))
                })
                .collect(),
            open_connections: iv.open,
            streams: iv.streams,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two pieces' series add up interval by interval, the later one shifted; latency
    /// quantiles come from the merged histogram.
    #[test]
    fn pieces_merge_by_interval_and_their_latencies_by_histogram() {
        let piece = |lat_us: &[u64]| {
            let mut s = Vec::new();
            for (k, &l) in lat_us.iter().enumerate() {
                let iv = at(&mut s, k);
                iv.sent += 1;
                iv.completed += 1;
                iv.latency.record_ns(l * 1000);
            }
            error(&mut s, 0, ErrorClass::Timeout);
            s
        };
        let (a, b) = (piece(&[100, 200]), piece(&[300, 400]));
        let mut m = Vec::new();
        merge(&mut m, &a, 0);
        merge(&mut m, &b, 1);
        assert_eq!(m.len(), 3);
        assert_eq!((m[0].completed, m[1].completed, m[2].completed), (1, 2, 1));
        let l = lines(&m, Duration::from_millis(500), Duration::from_millis(1400));
        assert!(
            (l[2].interval_s - 0.4).abs() < 1e-9,
            "the last interval's part inside the window"
        );
        assert_eq!(l[1].t_s, 0.5);
        assert_eq!(l[1].completed_rps, 4.0);
        let max = l[1].latency_us.max.unwrap();
        assert!(
            (299.0..=301.0).contains(&max),
            "the merged interval's max is b's first: {max}"
        );
        assert_eq!(l[0].errors.values().sum::<u64>(), 1);
        assert_eq!(l[1].errors.values().sum::<u64>(), 1, "b's error, shifted");
    }
}
