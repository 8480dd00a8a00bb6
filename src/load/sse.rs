//! Event streams as a client measures them (`load --sse`, or any `text/event-stream`
//! response): the SSE parser that finds each event in the body bytes as they arrive, and the
//! arithmetic of one stream: time to first event from the request's intended start
//! (coordinated-omission-correct in an open loop), each gap between events, the duration,
//! events and bytes, and each event's `id:` checked for order and loss.
//!
//! The parser is fed body bytes (the chunked coding or HTTP/2's DATA already undone) and
//! yields one [`Event`] per dispatched event (an empty line ends one, as the WHATWG's
//! event-stream interpretation says; `\r\n`, `\n` and `\r` all end lines). The times come from
//! the caller (the read that brought the bytes), so the arithmetic is tested with any clock.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::hist::Hist;

/// One event as the parser found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Its `id:` as a number (`None`: none, or not a number).
    pub id: Option<u64>,
    /// Bytes of its `data:` lines (without the field names and line ends).
    pub data: usize,
}

/// The longest line kept: past it, a line's bytes are counted and dropped.
const MAX_LINE: usize = 4096;

/// An incremental event-stream parser.
#[derive(Debug, Default, Clone)]
pub struct Parser {
    line: Vec<u8>,
    /// The last byte was a `\r` (a `\n` right after it ends nothing more).
    after_cr: bool,
    /// The event being built: its id, its data bytes, whether any field came.
    id: Option<u64>,
    data: usize,
    fields: bool,
}

impl Parser {
    /// Feeds body bytes; every event they complete goes to `each`.
    pub fn feed(&mut self, bytes: &[u8], each: &mut impl FnMut(Event)) {
        for &b in bytes {
            match b {
                b'\n' if std::mem::take(&mut self.after_cr) => {}
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    self.end_line(each);
                }
                _ => {
                    self.after_cr = false;
                    if self.line.len() < MAX_LINE {
                        self.line.push(b);
                    } else if self.line.starts_with(b"data:") {
                        self.data += 1;
                    }
                }
            }
        }
    }

    fn end_line(&mut self, each: &mut impl FnMut(Event)) {
        if self.line.is_empty() {
            if self.fields {
                each(Event {
                    id: self.id,
                    data: self.data,
                });
            }
            (self.id, self.data, self.fields) = (None, 0, false);
            return;
        }
        let line = std::mem::take(&mut self.line);
        if !line.starts_with(b":") {
            let (name, value) = match line.iter().position(|&c| c == b':') {
                Some(i) => (&line[..i], line[i + 1..].strip_prefix(b" ").unwrap_or(&line[i + 1..])),
                None => (&line[..], &b""[..]),
            };
            self.fields = true;
            match name {
                b"id" => self.id = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()),
                b"data" => self.data += value.len(),
                _ => {}
            }
        }
        self.line = line;
        self.line.clear();
    }
}

/// The largest jump between a stream's ids counted as lost events; past it the ids are taken
/// for something other than a count, and the count goes on from the new id.
pub const MAX_ID_GAP: u64 = 1 << 20;

/// One stream being received: what it has delivered so far.
#[derive(Debug, Clone)]
pub struct Stream {
    /// When the request was meant to go (open loop: its scheduled time).
    intended: Instant,
    parser: Parser,
    /// When the last event arrived.
    last: Option<Instant>,
    next_id: Option<u64>,
    pub events: u64,
    pub bytes: u64,
    pub lost: u64,
    pub out_of_order: u64,
}

impl Stream {
    pub fn new(intended: Instant) -> Stream {
        Stream {
            intended,
            parser: Parser::default(),
            last: None,
            next_id: None,
            events: 0,
            bytes: 0,
            lost: 0,
            out_of_order: 0,
        }
    }

    /// Body bytes that arrived at `now`: their events are recorded in `t` (time to first
    /// event, gaps), their ids checked.
    pub fn feed(&mut self, bytes: &[u8], now: Instant, t: &mut SseTally) {
        self.bytes += bytes.len() as u64;
        t.bytes += bytes.len() as u64;
        let (lost, reordered) = (self.lost, self.out_of_order);
        let mut events = Vec::new();
        self.parser.feed(bytes, &mut |e| events.push(e));
        t.events += events.len() as u64;
        for e in events {
            match self.last {
                None => t
                    .ttfe
                    .record_ns(now.saturating_duration_since(self.intended).as_nanos() as u64),
                Some(last) => t.gap.record_ns(now.saturating_duration_since(last).as_nanos() as u64),
            }
            self.last = Some(now);
            self.events += 1;
            if let Some(id) = e.id {
                match self.next_id {
                    // A jump past MAX_ID_GAP is not lost events: the ids are not a count
                    // (timestamps, offsets); the count goes on from there.
                    Some(want) if id > want && id - want <= MAX_ID_GAP => self.lost += id - want,
                    Some(want) if id > want => {}
                    // One counted lost came after all, late.
                    Some(want) if id < want => {
                        self.out_of_order += 1;
                        self.lost = self.lost.saturating_sub(1);
                    }
                    // The first id a stream shows starts its count (a server's ids need not
                    // start at 1: timestamps, offsets).
                    _ => {}
                }
                let next = id.saturating_add(1);
                self.next_id = Some(self.next_id.map_or(next, |w| w.max(next)));
            }
        }
        // A read may bring back an event an earlier read counted lost: the stream's count falls,
        // and the tally with it.
        t.lost = (t.lost + self.lost).saturating_sub(lost);
        t.out_of_order += self.out_of_order - reordered;
    }

    /// When its last event arrived.
    pub fn last(&self) -> Option<Instant> {
        self.last
    }

    /// The window closes at `now` with this stream still going: what it has not delivered yet
    /// counts as it would had it come now (coordinated-omission-correct, as an unfinished
    /// request's latency counts to the close): its first event, or the gap since its last.
    pub fn at_close(&self, now: Instant, t: &mut SseTally) {
        match self.last {
            None => t
                .ttfe
                .record_ns(now.saturating_duration_since(self.intended).as_nanos() as u64),
            Some(last) => t.gap.record_ns(now.saturating_duration_since(last).as_nanos() as u64),
        }
        t.open_at_close += 1;
    }

    /// The stream ended at `now` (whole, or `cut` by the server mid-way): counted in `t` (its
    /// events, bytes and ids were, as they came).
    pub fn end(self, now: Instant, cut: bool, t: &mut SseTally) {
        t.streams += 1;
        if cut {
            t.cut += 1;
            t.cut_events += self.events;
        } else {
            t.duration
                .record_ns(now.saturating_duration_since(self.intended).as_nanos() as u64);
        }
    }
}

/// What a run's event streams delivered; adds up losslessly across threads, shards and hosts
/// (its histograms are HdrHistograms).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SseTally {
    /// Streams ended (whole or cut).
    pub streams: u64,
    // Events, bytes, lost and out-of-order ids are counted as they arrive: a stream still going
    // at the window's end has its events in the window counted.
    /// Of them, cut by the server (or the connection) before their end, and the events those
    /// delivered.
    pub cut: u64,
    pub cut_events: u64,
    pub events: u64,
    /// Body bytes of the streams.
    pub bytes: u64,
    /// Events whose ids never came (a gap in the count), and events that came after a later one.
    pub lost: u64,
    pub out_of_order: u64,
    /// Streams still going when the window closed (their pending first event or open gap is
    /// in the histograms, as of the close).
    #[serde(default)]
    pub open_at_close: u64,
    /// Time to first event, from the request's intended start.
    pub ttfe: Hist,
    /// Each gap between two events of a stream.
    pub gap: Hist,
    /// A whole stream, from its intended start to its end.
    pub duration: Hist,
}

impl SseTally {
    pub fn merge(&mut self, o: &SseTally) {
        self.streams += o.streams;
        self.cut += o.cut;
        self.cut_events += o.cut_events;
        self.events += o.events;
        self.bytes += o.bytes;
        self.lost += o.lost;
        self.out_of_order += o.out_of_order;
        self.open_at_close += o.open_at_close;
        self.ttfe.merge(&o.ttfe);
        self.gap.merge(&o.gap);
        self.duration.merge(&o.duration);
    }
}

/// What a document says of a run's event streams (latencies in microseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SseFigures {
    pub streams: u64,
    /// Connections that received no event in the window.
    #[serde(default)]
    pub starved: u64,
    pub cut: u64,
    pub cut_events: u64,
    pub events: u64,
    /// Events per second of the window.
    pub events_per_s: f64,
    pub bytes: u64,
    pub lost: u64,
    pub out_of_order: u64,
    /// Time to first event, from the request's intended start.
    pub ttfe: crate::hist::Latency,
    /// Gaps between a stream's events.
    pub gap: crate::hist::Latency,
    /// Whole streams, from the intended start to the end.
    pub duration: crate::hist::Latency,
}

impl SseFigures {
    pub fn of(t: &SseTally, secs: f64, starved: usize) -> SseFigures {
        SseFigures {
            streams: t.streams,
            starved: starved as u64,
            cut: t.cut,
            cut_events: t.cut_events,
            events: t.events,
            events_per_s: if secs > 0.0 { t.events as f64 / secs } else { 0.0 },
            bytes: t.bytes,
            lost: t.lost,
            out_of_order: t.out_of_order,
            ttfe: t.ttfe.latency(),
            gap: t.gap.latency(),
            duration: t.duration.latency(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn events(input: &[&[u8]]) -> Vec<Event> {
        let mut p = Parser::default();
        let mut got = Vec::new();
        for piece in input {
            p.feed(piece, &mut |e| got.push(e));
        }
        got
    }

    #[test]
    fn the_parser_finds_events_across_any_split_and_any_line_end() {
        let whole =
            b": a comment\nid: 1\ndata: abc\ndata: de\n\nid: 2\r\ndata:xyz\r\n\r\nretry: 5\n\nid: 3\rdata: q\r\r";
        let want = vec![
            Event { id: Some(1), data: 5 },
            Event { id: Some(2), data: 3 },
            Event { id: None, data: 0 },
            Event { id: Some(3), data: 1 },
        ];
        assert_eq!(events(&[whole]), want);
        for cut in 0..whole.len() {
            assert_eq!(events(&[&whole[..cut], &whole[cut..]]), want, "split at {cut}");
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(events(&bytes), want, "byte by byte");
        // A comment alone, or empty lines alone, dispatch nothing.
        assert!(events(&[b": ping\n\n\n\n"]).is_empty());
    }

    #[test]
    fn time_to_first_event_counts_from_the_intended_start_and_gaps_between_arrivals() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut t = SseTally::default();
        // Meant to go at t0 (it went late: the open loop's schedule counts).
        let mut s = Stream::new(t0);
        s.feed(b"id: 1\ndata: a\n\n", ms(30), &mut t);
        // Two events in one read arrive together: a gap of 0 between them.
        s.feed(b"id: 2\ndata: a\n\nid: 3\ndata: a\n\n", ms(50), &mut t);
        s.feed(b"id: 4\ndata: a", ms(60), &mut t);
        s.feed(b"\n\n", ms(75), &mut t);
        assert_eq!(t.events, 4, "events count as they come, before the stream ends");
        assert_eq!(t.streams, 0);
        s.end(ms(80), false, &mut t);
        assert_eq!(t.ttfe.count(), 1);
        assert_eq!(t.ttfe.0.max() / 1_000_000, 30);
        assert_eq!(t.gap.count(), 3);
        assert!(t.gap.0.min() < 1000, "two events of one read: no gap");
        // 20 ms (1 to 2), 0 (2 to 3), 25 ms (3 to 4: the event ends when its empty line comes).
        assert_eq!(t.gap.0.max() / 1_000_000, 25);
        assert_eq!((t.streams, t.events, t.lost, t.out_of_order, t.cut), (1, 4, 0, 0, 0));
        assert_eq!(t.duration.0.max() / 1_000_000, 80);
    }

    #[test]
    fn missing_and_reordered_ids_are_counted_and_a_cut_stream_keeps_its_events() {
        let t0 = Instant::now();
        let mut t = SseTally::default();
        let mut s = Stream::new(t0);
        s.feed(b"id: 2\n\nid: 3\n\nid: 6\n\nid: 5\n\nid: 7\n\n", t0, &mut t);
        // The count starts at 2; 4 never came; 5 came after 6 (late, not lost).
        assert_eq!((s.lost, s.out_of_order), (1, 1));
        s.end(t0, true, &mut t);
        assert_eq!((t.cut, t.cut_events, t.duration.count()), (1, 5, 0));
        // Ids that jump to the top of their range and back neither wrap nor count the jump as
        // events lost: 1, 2^64 − 1, 2 is one id late.
        let mut s = Stream::new(t0);
        s.feed(
            b"id: 1\n\nid: 18446744073709551615\n\nid: 2\n\n",
            t0,
            &mut SseTally::default(),
        );
        assert_eq!((s.lost, s.out_of_order), (0, 1));
        let mut s = Stream::new(t0);
        s.feed(b"id: 1\n\nid: 1048578\n\n", t0, &mut SseTally::default());
        assert_eq!(s.lost, MAX_ID_GAP, "a gap up to the bound is lost events");
        let mut other = SseTally::default();
        other.merge(&t);
        other.merge(&t);
        assert_eq!(
            (other.streams, other.events, other.lost, other.gap.count()),
            (2, 10, 2, 8)
        );
    }

    /// An event counted lost in one read that comes in the next takes its count back from the
    /// tally as well as from the stream (it used to underflow there: a panic in a debug build).
    #[test]
    fn an_event_counted_lost_in_one_read_and_arriving_in_the_next_is_not_lost() {
        let t0 = Instant::now();
        let mut t = SseTally::default();
        let mut s = Stream::new(t0);
        s.feed(b"id: 1\n\nid: 3\n\n", t0, &mut t);
        assert_eq!(t.lost, 1);
        s.feed(b"id: 2\n\n", t0, &mut t);
        assert_eq!((s.lost, t.lost, t.out_of_order), (0, 0, 1));
    }

    #[test]
    fn a_stream_going_at_the_close_counts_its_pending_first_event_or_open_gap_as_of_then() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut t = SseTally::default();
        // Nothing came in 500 ms: its first event counts as 500 ms, not as nothing.
        Stream::new(t0).at_close(ms(500), &mut t);
        assert_eq!((t.ttfe.count(), t.ttfe.0.max() / 1_000_000), (1, 500));
        let mut s = Stream::new(t0);
        s.feed(b"id: 1\n\n", ms(10), &mut t);
        s.at_close(ms(310), &mut t);
        assert_eq!(
            (t.gap.count(), t.gap.0.max() / 1_000_000),
            (1, 300),
            "the gap open at the close"
        );
        assert_eq!(t.open_at_close, 2);
    }
}
