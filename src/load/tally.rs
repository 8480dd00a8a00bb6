//! What one engine thread counted: requests, errors by class, latency histograms, a
//! per-second series and per-connection counts. Tallies add up losslessly.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error_class::{ErrorClass, CLASSES, ERROR_CLASSES};
use super::fairness::jain;
use crate::hist::Hist;

/// Counts of one thread (or, merged, of a whole run). Its serde form is lossless (histograms
/// as HdrHistogram V2): what a shard process or a host ships, and what `merge` reads.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Tally {
    /// Requests completed inside the measured window.
    pub requests: u64,
    #[serde(with = "errors_by_name")]
    pub errors: [u64; CLASSES],
    /// HTTP responses by status class: 1xx (101 only: others are interim), 2xx .. 5xx.
    pub status: [u64; 5],
    /// Latency from the intended send time (coordinated-omission corrected).
    pub latency: Hist,
    /// Latency from the actual send time.
    pub uncorrected: Hist,
    /// Time to establish a connection (TCP).
    pub connect: Hist,
    /// Time of the TLS handshake after the connect (https targets).
    pub tls_handshake: Hist,
    /// How late requests were sent after their intended time (rate mode).
    pub send_lag: Hist,
    /// Completions per second of the measured window.
    pub per_second: Vec<u64>,
    /// Completions per connection slot (fairness).
    pub per_conn: Vec<u64>,
    /// Event-stream events per connection slot, in its order (empty: none came to this
    /// thread's connections; see [`Tally::starved_streams`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_conn_events: Vec<u64>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Connections established inside the measured window.
    pub connects: u64,
    /// Slots that never got a connection established.
    pub never_connected: u64,
    /// `--active`: connections open at the end that sent, and those that held (sent nothing by
    /// design); `None` in a run where every connection sends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<u64>,
    /// `--active`: held connections the server closed (an idle timeout), opened again.
    #[serde(default)]
    pub held_closed: u64,
    /// Requests sent in the measured window.
    pub sent: u64,
    /// Open loop over a duration: requests the schedule called for inside the window, and
    /// those of them not completed when it closed (`requests + not_completed == scheduled`);
    /// `None` in other runs.
    pub scheduled: Option<u64>,
    pub not_completed: Option<u64>,
    /// Open loop: requests sent in the window that, when due, found every connection busy and
    /// waited for one (in their latency; not in the send lag, which is the client's own).
    #[serde(default)]
    pub waited_for_connection: u64,
    /// Slots whose first connect had not ended when the window was started anyway (the connect
    /// timeout passed first).
    #[serde(default)]
    pub unresolved_at_start: u64,
    /// Per request class (`--mix`), by the class's place in the run's classes; empty without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassTally>,
    /// HTTP/2 runs: what the streams did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h2: Option<super::H2Tally>,
    /// Event streams (`--sse`, or `text/event-stream` responses): what they delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse: Option<super::sse::SseTally>,
    /// Keyed targets: hits, misses, how values were checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyed: Option<super::keyed::KeyedTally>,
    /// `--timeseries`: the window in intervals of `series_every_us` (empty: not asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<super::series::Interval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series_every_us: Option<u64>,
    /// The series' clock, once the window is known (this thread's).
    #[serde(skip)]
    pub series_clock: Option<super::series::Clock>,
}

/// What one request class counted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClassTally {
    /// Requests completed in the window.
    pub requests: u64,
    /// Failures with a request of this class the oldest in flight.
    pub errors: u64,
    /// Its HTTP responses other than 2xx/3xx (counted in `requests` too).
    #[serde(default)]
    pub non_2xx_3xx: u64,
    /// Latency from the intended send time.
    pub latency: Hist,
}

impl ClassTally {
    pub fn merge(&mut self, other: &ClassTally) {
        self.requests += other.requests;
        self.errors += other.errors;
        self.non_2xx_3xx += other.non_2xx_3xx;
        self.latency.merge(&other.latency);
    }
}

/// Error counts travel as `{class name: count}`, the classes with none left out.
mod errors_by_name {
    use super::*;

    pub fn serialize<S: serde::Serializer>(errors: &[u64; CLASSES], s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            ERROR_CLASSES
                .iter()
                .filter(|(c, _)| errors[*c as usize] > 0)
                .map(|(c, n)| (*n, errors[*c as usize])),
        )
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[u64; CLASSES], D::Error> {
        let named = BTreeMap::<String, u64>::deserialize(d)?;
        let mut errors = [0u64; CLASSES];
        for (k, n) in named {
            let (class, _) = ERROR_CLASSES
                .iter()
                .find(|(_, name)| *name == k)
                .ok_or_else(|| serde::de::Error::custom(format!("unknown error class '{k}'")))?;
            errors[*class as usize] = n;
        }
        Ok(errors)
    }
}

impl Tally {
    #[inline]
    pub fn error(&mut self, class: ErrorClass) {
        self.error_at(class, std::time::Instant::now());
    }

    /// An error of `class` counted as of `t` (in the series' interval of `t`).
    pub fn error_at(&mut self, class: ErrorClass, t: std::time::Instant) {
        self.errors[class as usize] += 1;
        if let Some(i) = self.series_clock.and_then(|c| c.index(t)) {
            super::series::error(&mut self.series, i, class);
        }
    }

    /// The series' interval of `t`, where a series is kept and `t` is in the window.
    #[inline]
    pub fn interval(&mut self, t: std::time::Instant) -> Option<&mut super::series::Interval> {
        let i = self.series_clock?.index(t)?;
        Some(super::series::at(&mut self.series, i))
    }

    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// `{"2xx": n, "3xx": n, "4xx": n, "5xx": n}` (and `1xx` when a 101 was counted).
    pub fn status_classes(&self) -> BTreeMap<String, u64> {
        self.status
            .iter()
            .enumerate()
            .filter(|(i, n)| *i > 0 || **n > 0)
            .map(|(i, n)| (format!("{}xx", i + 1), *n))
            .collect()
    }

    /// Responses that were neither 2xx nor 3xx (wrk's "Non-2xx or 3xx responses").
    pub fn non_2xx_3xx(&self) -> u64 {
        self.status[0] + self.status[3] + self.status[4]
    }

    /// `{class name: count}` of the classes with errors.
    pub fn errors_by_name(&self) -> BTreeMap<String, u64> {
        ERROR_CLASSES
            .iter()
            .filter(|(c, _)| self.errors[*c as usize] > 0)
            .map(|(c, n)| (n.to_string(), self.errors[*c as usize]))
            .collect()
    }

    /// Adds `other` into `self` (connection slots are appended).
    pub fn merge(&mut self, other: &Tally) {
        self.requests += other.requests;
        for (a, b) in self.errors.iter_mut().zip(other.errors.iter()) {
            *a += b;
        }
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        self.latency.merge(&other.latency);
        self.uncorrected.merge(&other.uncorrected);
        self.connect.merge(&other.connect);
        self.tls_handshake.merge(&other.tls_handshake);
        self.send_lag.merge(&other.send_lag);
        self.waited_for_connection += other.waited_for_connection;
        super::series::merge(&mut self.series, &other.series, 0);
        self.series_every_us = self.series_every_us.or(other.series_every_us);
        if self.per_second.len() < other.per_second.len() {
            self.per_second.resize(other.per_second.len(), 0);
        }
        for (a, b) in self.per_second.iter_mut().zip(other.per_second.iter()) {
            *a += b;
        }
        if !self.per_conn_events.is_empty() || !other.per_conn_events.is_empty() {
            // A piece with no events has its connections' zeros.
            self.per_conn_events.resize(self.per_conn.len(), 0);
            match other.per_conn_events.is_empty() {
                true => self
                    .per_conn_events
                    .extend(std::iter::repeat_n(0, other.per_conn.len())),
                false => self.per_conn_events.extend_from_slice(&other.per_conn_events),
            }
        }
        self.per_conn.extend_from_slice(&other.per_conn);
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.connects += other.connects;
        self.never_connected += other.never_connected;
        self.unresolved_at_start += other.unresolved_at_start;
        self.sent += other.sent;
        let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.scheduled = add(self.scheduled, other.scheduled);
        self.not_completed = add(self.not_completed, other.not_completed);
        self.active = add(self.active, other.active);
        self.held = add(self.held, other.held);
        self.held_closed += other.held_closed;
        if self.classes.len() < other.classes.len() {
            self.classes.resize_with(other.classes.len(), ClassTally::default);
        }
        for (a, b) in self.classes.iter_mut().zip(&other.classes) {
            a.merge(b);
        }
        match (&mut self.h2, &other.h2) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.h2 = Some(b.clone()),
            _ => {}
        }
        match (&mut self.sse, &other.sse) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.sse = Some(b.clone()),
            _ => {}
        }
        match (&mut self.keyed, &other.keyed) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.keyed = Some(b.clone()),
            _ => {}
        }
    }

    /// Connections that received no event of an event stream (`None`: no event came at all).
    pub fn starved_streams(&self) -> Option<usize> {
        (!self.per_conn_events.is_empty()).then(|| {
            let zero = self.per_conn_events.iter().filter(|&&e| e == 0).count();
            zero + self.per_conn.len().saturating_sub(self.per_conn_events.len())
        })
    }

    /// Jain's fairness index over connection slots: 1 = perfectly even, 1/n = one took all.
    pub fn jain(&self) -> Option<f64> {
        jain(&self.per_conn)
    }

    /// Connection slots that completed no request.
    pub fn starved(&self) -> usize {
        self.per_conn.iter().filter(|&&c| c == 0).count()
    }
}

#[cfg(test)]
mod load_tally {
    use crate::load::tally::*;

    #[test]
    fn connections_without_events_are_starved_streams_whichever_piece_they_were_in() {
        let (mut a, mut b, mut c) = (Tally::default(), Tally::default(), Tally::default());
        a.per_conn = vec![0, 0];
        a.per_conn_events = vec![5, 0];
        b.per_conn = vec![1, 0, 0];
        c.per_conn = vec![0];
        c.per_conn_events = vec![7];
        assert_eq!((a.starved_streams(), b.starved_streams()), (Some(1), None));
        let mut m = Tally::default();
        for t in [&b, &a, &c] {
            m.merge(t);
        }
        assert_eq!(m.per_conn_events, vec![0, 0, 0, 5, 0, 7]);
        assert_eq!(m.starved_streams(), Some(4));
        let wire: Tally = serde_json::from_value(serde_json::to_value(&m).unwrap()).unwrap();
        assert_eq!(wire.per_conn_events, m.per_conn_events);
    }

    #[test]
    fn tallies_round_trip_and_merge_losslessly() {
        let mut a = Tally::default();
        for v in [1_000u64, 2_000, 3_000, 1_000_000] {
            a.latency.record_ns(v);
        }
        a.requests = 4;
        a.error(ErrorClass::Reset);
        a.per_conn = vec![3, 1];
        a.per_second = vec![4];
        a.keyed = Some(crate::load::keyed::KeyedTally {
            hits: 3,
            misses: 1,
            exact: 3,
            prefilled: 10,
            checks: "exact".into(),
            ..Default::default()
        });
        let wire = serde_json::to_value(&a).expect("a tally serialises");
        let b: Tally = serde_json::from_value(wire).expect("own wire form reads back");
        assert_eq!(b.latency.0, a.latency.0);
        assert_eq!((b.requests, b.errors, b.per_conn.clone()), (4, a.errors, vec![3, 1]));
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.latency.count(), 8);
        assert_eq!(m.per_conn, vec![3, 1, 3, 1]);
        assert_eq!(m.per_second, vec![8]);
        assert_eq!(m.error_total(), 2);
        let k = m.keyed.as_ref().expect("keyed counts travel and merge");
        assert_eq!(
            (k.hits, k.misses, k.exact, k.prefilled, k.checks.as_str()),
            (6, 2, 6, 20, "exact")
        );
    }
}
