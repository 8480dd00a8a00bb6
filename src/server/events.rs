//! Event streams a server serves: `GET /stream?events=N&every=D&size=B[&first=D0]` (and every
//! GET with `--stream`), answered as a response that finishes later ([`crate::proto::later`]):
//! N events of B bytes of data, the first after D0 (default D), then one every D, where D is a
//! fixed time or a `--work`-style distribution (`exp(20ms)`). Bounded by `--max-stream`
//! (events, their total time on average, an event's size): past it, 400.
//!
//! The pacing is the server's: a [`Pacing`] draws the gaps and counts every event sent, late
//! ones (past `--stream-slack`) and the lateness histogram; dropped, it counts its stream as
//! finished or cut.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::ctx::Worker;
use super::stats::{Counter, Counters};
use super::work::{parse_dist, Dist};
use crate::proto::later::{EventStream, Later, Pace};
use crate::rng::Rng;
use crate::units::{format_duration, parse_duration, parse_size, BadValue};

/// What an event stream is asked to be: `events=N&every=D&size=B&first=D0`.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamSpec {
    pub events: u32,
    pub every: Dist,
    /// Before the first event (`None`: a gap like the others).
    pub first: Option<Dist>,
    pub size: usize,
}

impl Default for StreamSpec {
    /// Ten events of 32 bytes, one every 100 ms: what a bare `/stream` gets.
    fn default() -> Self {
        StreamSpec {
            events: 10,
            every: Dist::Fixed(Duration::from_millis(100)),
            first: None,
            size: 32,
        }
    }
}

/// The bounds of `--max-stream events=N,time=D,size=B`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamBounds {
    pub events: u32,
    /// The stream's time on average (its first gap and the others' means).
    pub time: Duration,
    pub size: usize,
}

impl Default for StreamBounds {
    fn default() -> Self {
        StreamBounds {
            events: 100_000,
            time: Duration::from_secs(3600),
            size: 64 * 1024,
        }
    }
}

/// `key=value` pairs split at `&`, or at `,` outside parentheses (`mix(50%:1ms,50%:2ms)` is one
/// value).
fn pairs(spec: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in spec.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '&' => {}
            ',' if depth == 0 => {}
            _ => continue,
        }
        if c == '&' || (c == ',' && depth == 0) {
            out.push(&spec[start..i]);
            start = i + 1;
        }
    }
    out.push(&spec[start..]);
    out.into_iter().filter(|p| !p.is_empty()).collect()
}

impl StreamSpec {
    /// `defaults` with what `spec` (`events=N&every=D&size=B&first=D0`, or `,`-separated) says
    /// over them; a key it does not know is an error (a query's other keys are the caller's to
    /// drop).
    pub fn parse_over(spec: &str, defaults: &StreamSpec) -> Result<StreamSpec, BadValue> {
        let mut s = defaults.clone();
        for pair in pairs(spec) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| BadValue(format!("'{pair}': give key=value (events, every, size, first)")))?;
            match key {
                "events" => {
                    s.events = value
                        .parse()
                        .map_err(|_| BadValue(format!("events={value}: give a whole number of events")))?
                }
                "every" => s.every = parse_dist(value)?,
                "first" => s.first = Some(parse_dist(value)?),
                "size" => s.size = parse_size(value)?,
                _ => {
                    return Err(BadValue(format!(
                        "'{key}' is not a stream key: events=N, every=D, size=B, first=D"
                    )))
                }
            }
        }
        if s.events == 0 {
            return Err(BadValue("events=0: a stream has at least one event".into()));
        }
        Ok(s)
    }

    /// The stream's time on average: its first gap and the other gaps' means.
    pub fn mean_time(&self) -> Duration {
        let first = self.first.as_ref().unwrap_or(&self.every).mean();
        first + self.every.mean() * self.events.saturating_sub(1)
    }

    /// Why the stream is over `bounds`, if it is.
    pub fn over(&self, bounds: &StreamBounds) -> Option<String> {
        if self.events > bounds.events {
            return Some(format!(
                "events={} is over --max-stream events={}",
                self.events, bounds.events
            ));
        }
        if self.size > bounds.size {
            return Some(format!("size={} is over --max-stream size={}", self.size, bounds.size));
        }
        let t = self.mean_time();
        (t > bounds.time).then(|| {
            format!(
                "the stream takes {} on average, over --max-stream time={}",
                format_duration(t),
                format_duration(bounds.time)
            )
        })
    }
}

impl std::str::FromStr for StreamSpec {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<StreamSpec, BadValue> {
        StreamSpec::parse_over(s, &StreamSpec::default())
    }
}

impl std::str::FromStr for StreamBounds {
    type Err = BadValue;
    fn from_str(spec: &str) -> Result<StreamBounds, BadValue> {
        let mut b = StreamBounds::default();
        for pair in pairs(spec) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| BadValue(format!("'{pair}': give events=N, time=D or size=B")))?;
            match key {
                "events" => {
                    b.events = value
                        .parse()
                        .map_err(|_| BadValue(format!("events={value}: give a whole number")))?
                }
                "time" => b.time = parse_duration(value)?,
                "size" => b.size = parse_size(value)?,
                _ => return Err(BadValue(format!("'{key}': --max-stream takes events, time and size"))),
            }
        }
        Ok(b)
    }
}

/// Whether a request is a stream request (its path is `/stream`, or the server has `--stream`).
pub(super) fn is_stream(w: Worker<'_>, target: &[u8]) -> bool {
    let path = target.split(|&b| b == b'?').next().unwrap_or(b"");
    path == b"/stream" || w.ctx.cfg.stream.is_some()
}

/// The stream a request asks for: `None` when it is not a stream request (its path is not
/// `/stream` and the server has no `--stream`); `Err` (400) when its query does not parse or
/// is over `--max-stream`.
pub(super) fn requested(w: Worker<'_>, target: &[u8]) -> Option<Result<StreamSpec, BadValue>> {
    let (path, query) = match target.iter().position(|&b| b == b'?') {
        Some(i) => (&target[..i], &target[i + 1..]),
        None => (target, &b""[..]),
    };
    let cfg = &w.ctx.cfg;
    if path != b"/stream" && cfg.stream.is_none() {
        return None;
    }
    let defaults = cfg.stream.clone().unwrap_or_default();
    // The query's stream keys; the others (the work of --work-from-request) are not ours.
    let ours: Vec<String> = query
        .split(|&b| b == b'&')
        .map(super::per_request::percent_decoded)
        .filter(|p| {
            ["events=", "every=", "size=", "first="]
                .iter()
                .any(|k| p.starts_with(k))
        })
        .collect();
    // What a client may name as work, it may name as gaps: no file of the server's.
    if let Some(bad) = ours.iter().find(|p| !super::per_request::a_client_may_name(p)) {
        return Some(Err(BadValue(format!(
            "'{bad}': a query may not name hist:, more than 128 bytes or two levels of parentheses"
        ))));
    }
    Some(
        StreamSpec::parse_over(&ours.join("&"), &defaults)
            .and_then(|s| s.over(&cfg.max_stream).map_or(Ok(s), |why| Err(BadValue(why)))),
    )
}

/// What the server's hook answers a stream request with: the stream, begun now, or a refusal.
pub(super) fn answer(w: Worker<'_>, target: &[u8]) -> Option<crate::proto::Answer> {
    let spec = match requested(w, target)? {
        Ok(s) => s,
        Err(_) => return Some(crate::proto::Answer::Refuse),
    };
    let now = Instant::now();
    let mut pacing = Pacing::new(w, &spec);
    let first = match &spec.first {
        Some(d) => pacing.draw(d),
        None => pacing.gap(),
    };
    let stream = EventStream::new(spec.events, spec.size, now + first, Box::new(pacing));
    Some(crate::proto::Answer::Later(Later::Stream(Box::new(stream))))
}

/// Streams begun by this process, for their generators' seeds.
static STREAMS: AtomicU64 = AtomicU64::new(0);

/// One stream's pacing and counting.
pub struct Pacing {
    every: Dist,
    rng: Rng,
    /// The most one gap may be (the bound on a stream's time: a heavy tail is cut there).
    cap: Duration,
    counters: Counters,
    slack: Duration,
    events: u32,
    sent: u32,
    /// Its response began (a HEAD's, or a request the session serves otherwise, does not).
    opened: bool,
}

impl std::fmt::Debug for Pacing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pacing")
            .field("every", &self.every)
            .field("sent", &self.sent)
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

impl Pacing {
    fn new(w: Worker<'_>, spec: &StreamSpec) -> Pacing {
        let n = STREAMS.fetch_add(1, Ordering::Relaxed);
        let pid = crate::sys::process::pid() as u64;
        Pacing {
            every: spec.every.clone(),
            rng: Rng::new(&[w.ctx.cfg.seed, w.index as u64, pid, n]),
            cap: w.ctx.cfg.max_stream.time,
            counters: w.counters,
            slack: w.ctx.cfg.stream_slack,
            events: spec.events,
            sent: 0,
            opened: false,
        }
    }

    fn draw(&mut self, d: &Dist) -> Duration {
        d.sample(&mut self.rng).min(self.cap)
    }
}

impl Pace for Pacing {
    fn opened(&mut self) {
        self.opened = true;
        self.counters.add(Counter::SseStarted, 1);
    }

    fn gap(&mut self) -> Duration {
        let every = self.every.clone();
        self.draw(&every)
    }

    fn sent(&mut self, _id: u32, late: Duration) {
        self.sent += 1;
        self.counters.add(Counter::SseEvents, 1);
        if late > self.slack {
            self.counters.add(Counter::SseLate, 1);
        }
        let bucket = Counter::SSE_LATENESS
            .iter()
            .find(|(_, le)| le.is_none_or(|le| late <= le))
            .map(|(c, _)| *c)
            .expect("the last bucket has no bound");
        self.counters.add(bucket, 1);
    }
}

impl Drop for Pacing {
    fn drop(&mut self) {
        if !self.opened {
            return;
        }
        self.counters.add(
            if self.sent >= self.events {
                Counter::SseFinished
            } else {
                Counter::SseCut
            },
            1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the stats line says of one stream: started when opened, each event in its
    /// lateness bucket, those past the slack late, and the stream finished or cut.
    #[test]
    fn pacing_counts_events_late_ones_and_how_streams_ended() {
        let stats = crate::server::Stats::new(1).unwrap();
        let pacing = |events| Pacing {
            every: Dist::Fixed(Duration::from_millis(10)),
            rng: Rng::new(&[1]),
            cap: Duration::from_secs(1),
            counters: stats.worker(0),
            slack: Duration::from_millis(5),
            events,
            sent: 0,
            opened: false,
        };
        let get = |c| stats.total(c);
        let mut p = pacing(2);
        p.opened();
        p.sent(1, Duration::from_micros(300));
        p.sent(2, Duration::from_millis(7));
        drop(p);
        assert_eq!(
            (
                get(Counter::SseStarted),
                get(Counter::SseFinished),
                get(Counter::SseCut)
            ),
            (1, 1, 0)
        );
        assert_eq!(
            (get(Counter::SseEvents), get(Counter::SseLate)),
            (2, 1),
            "7 ms is past the 5 ms slack"
        );
        assert_eq!((get(Counter::SseLateLe1ms), get(Counter::SseLateLe10ms)), (1, 1));
        let mut p = pacing(5);
        p.opened();
        p.sent(1, Duration::from_secs(2));
        drop(p);
        assert_eq!(
            (get(Counter::SseCut), get(Counter::SseLateOver1s)),
            (1, 1),
            "one of five sent: cut"
        );
        // A HEAD's stream never opens: counted nowhere.
        drop(pacing(3));
        assert_eq!((get(Counter::SseStarted), get(Counter::SseCut)), (2, 1));
    }

    #[test]
    fn a_spec_reads_from_a_query_or_a_flag_and_is_held_to_its_bounds() {
        let s: StreamSpec = "events=50&every=10ms&size=32".parse().unwrap();
        assert_eq!((s.events, s.size), (50, 32));
        assert_eq!(s.every, Dist::Fixed(Duration::from_millis(10)));
        assert_eq!(s.mean_time(), Duration::from_millis(500));
        // Commas outside parentheses separate too; a mix's commas do not.
        let s: StreamSpec = "events=3,every=mix(50%:1ms,50%:3ms),first=0ms".parse().unwrap();
        assert_eq!(s.every.mean(), Duration::from_millis(2));
        assert_eq!(s.mean_time(), Duration::from_millis(4));
        // Over the defaults of a flag, a query's keys win.
        let d: StreamSpec = "events=7,size=5".parse().unwrap();
        let s = StreamSpec::parse_over("size=9", &d).unwrap();
        assert_eq!((s.events, s.size), (7, 9));
        for bad in ["events=0", "events=x", "every=soon", "colour=red", "size"] {
            assert!(bad.parse::<StreamSpec>().is_err(), "{bad}");
        }
        let b: StreamBounds = "events=100,time=1s,size=1KiB".parse().unwrap();
        let over = |spec: &str| spec.parse::<StreamSpec>().unwrap().over(&b);
        assert!(over("events=100&every=10ms&size=1KiB").is_none());
        assert!(over("events=101&every=1ms").unwrap().contains("events"));
        assert!(over("events=10&every=1ms&size=2KiB").unwrap().contains("size"));
        assert!(over("events=100&every=exp(20ms)").unwrap().contains("time"));
        assert!("colour=red".parse::<StreamBounds>().is_err());
    }
}
