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

use crate::proto::later::{EventStream, Later, Pace};
use crate::rng::Rng;
use crate::server::request::per_request::Unnamable;
use crate::server::work::Dist;
use crate::server::Worker;
use crate::server::{BadStreamSpec, StreamOver, StreamSpec};
use crate::server::{Counter, Counters};

/// Whether a request is a stream request (its path is `/stream`, or the server has `--stream`).
pub(super) fn is_stream(w: Worker<'_>, target: &[u8]) -> bool {
    let path = target.split(|&b| b == b'?').next().unwrap_or(b"");
    path == b"/stream" || w.ctx.cfg.stream.is_some()
}

/// The stream a request asks for: `None` when it is not a stream request (its path is not
/// `/stream` and the server has no `--stream`); `Err` (400) when its query does not parse or
/// is over `--max-stream`.
pub(super) fn requested(w: Worker<'_>, target: &[u8]) -> Option<Result<StreamSpec, RefusedStream>> {
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
        .map(crate::server::request::per_request::percent_decoded)
        .filter(|p| {
            ["events=", "every=", "size=", "first="]
                .iter()
                .any(|k| p.starts_with(k))
        })
        .collect();
    // What a client may name as work, it may name as gaps: no file of the server's.
    if let Some((part, fault)) = ours
        .iter()
        .find_map(|p| crate::server::request::per_request::unnamable(p).map(|f| (p, f)))
    {
        return Some(Err(RefusedStream::Unnamable {
            part: part.clone(),
            fault,
        }));
    }
    Some(
        StreamSpec::parse_over(&ours.join("&"), &defaults)
            .map_err(RefusedStream::Spec)
            .and_then(|s| {
                s.over(&cfg.max_stream)
                    .map_or(Ok(s), |over| Err(RefusedStream::Over(over)))
            }),
    )
}

/// Why a stream request is refused (400).
#[derive(Debug, thiserror::Error)]
pub(super) enum RefusedStream {
    /// A query's key names what a client may not (a file, a long or deep spec).
    #[error("'{part}': {fault}")]
    Unnamable { part: String, fault: Unnamable },
    /// The query's stream keys do not read.
    #[error(transparent)]
    Spec(BadStreamSpec),
    /// The stream is over `--max-stream`.
    #[error(transparent)]
    Over(StreamOver),
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
    use crate::server::request::events::*;

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
}
