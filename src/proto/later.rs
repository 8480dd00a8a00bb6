//! Responses that finish later: the one contract for a response whose body is not ready in the
//! call that read its request (an event stream, SSE; next, work done on another thread).
//!
//! A server's hook answers a request with [`Answer::Later`](super::Answer::Later) instead of
//! [`Answer::Serve`](super::Answer::Serve). The session writes the response head at once and
//! holds the response open:
//!
//! - HTTP/1.1: chunked (close-delimited for HTTP/1.0); requests pipelined after it wait, in the
//!   session's input, until it has ended, then are answered in order.
//! - HTTP/2: HEADERS now, DATA as it comes, beside the connection's other streams, under flow
//!   control; END_STREAM with the last piece. A reset stream drops what it held (cancelled).
//!
//! The model supplies the wakes:
//!
//! - "at time T": [`Session::due`](super::Session::due) says when the next piece falls due; at or
//!   after it the model calls [`Session::advance_each`](super::Session::advance_each), which writes
//!   what is due (and, a response having ended, goes on with the input held behind it).
//! - "this connection is writable": as for any output. A piece is not produced while the
//!   connection's unsent output is at its bound ([`Each::room`](super::Each::room)): output
//!   driven by timers is bounded like any other; it goes on, late, once the output drains.
//! - "a completion was posted for this connection from another thread": the model's own queue
//!   and eventfd bring the response's ticket back to the thread that owns the connection, which
//!   calls [`Session::complete_each`](super::Session::complete_each) (the offload pool). A
//!   response whose stream was reset before its completion came is cancelled: the session says
//!   so ([`Session::cancelled`](super::Session::cancelled)), and the completion, if it comes,
//!   finds nothing to complete.
//!
//! What paces an event stream is the server's ([`Pace`]): the gaps between events (a
//! distribution the server draws from) and what it counts of each event sent (its lateness).
//! Dropping the stream (it ended, its connection closed, its HTTP/2 stream was reset) drops its
//! `Pace`, which is how the server counts streams that ended and streams that were cut.

use std::fmt;
use std::io::Write;
use std::time::{Duration, Instant};

/// How a server paces one event stream and counts what it sends.
pub trait Pace: Send + fmt::Debug {
    /// The stream's response began (the session took it: not a HEAD's).
    fn opened(&mut self) {}

    /// The gap from one event's due time to the next one's.
    fn gap(&mut self) -> Duration;

    /// Event `id` went out `late` after its due time.
    fn sent(&mut self, id: u32, late: Duration);
}

/// An event stream (`text/event-stream`): `events` events of `size` bytes of data, the first
/// due at `due`, each next one a [`Pace::gap`] after the one before (on the schedule: a late
/// event does not push the ones after it).
#[derive(Debug)]
pub struct EventStream {
    events: u32,
    sent: u32,
    size: usize,
    due: Instant,
    pace: Box<dyn Pace>,
}

/// The data of every event: `size` bytes of this, repeated (no line breaks: SSE's `data:`
/// field ends at one).
const FILL: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

impl EventStream {
    /// A stream of `events` events of `size` bytes, the first due at `first`.
    pub fn new(events: u32, size: usize, first: Instant, pace: Box<dyn Pace>) -> EventStream {
        EventStream {
            events,
            sent: 0,
            size,
            due: first,
            pace,
        }
    }

    /// The session begins the stream's response.
    pub fn open(&mut self) {
        self.pace.opened();
    }

    /// When the next event is due; `None` once every event went.
    pub fn due(&self) -> Option<Instant> {
        (self.sent < self.events).then_some(self.due)
    }

    /// Every event went.
    pub fn done(&self) -> bool {
        self.sent >= self.events
    }

    /// The length of the next event as [`EventStream::next_event`] frames it.
    pub fn next_len(&self) -> usize {
        let id = self.sent + 1;
        "id: \ndata: \n\n".len() + id.to_string().len() + self.size
    }

    /// Appends the next event if it is due at `now`, as SSE frames it (`id: N`, `data: ...`, an
    /// empty line); `false` when none is due.
    pub fn next_event(&mut self, now: Instant, body: &mut Vec<u8>) -> bool {
        if self.done() || now < self.due {
            return false;
        }
        self.sent += 1;
        let _ = write!(body, "id: {}\ndata: ", self.sent);
        let mut left = self.size;
        while left > 0 {
            let n = left.min(FILL.len());
            body.extend_from_slice(&FILL[..n]);
            left -= n;
        }
        body.extend_from_slice(b"\n\n");
        self.pace.sent(self.sent, now.saturating_duration_since(self.due));
        if !self.done() {
            self.due += self.pace.gap();
        }
        true
    }
}

/// What a server's hook answers a request whose response finishes later with.
#[derive(Debug)]
pub enum Later {
    /// An event stream: `200`, `text/event-stream`, its events as they fall due.
    Stream(Box<EventStream>),
    /// The usual response, once the server completes `ticket` (work done on another thread:
    /// [`Session::complete_each`](super::Session::complete_each)). Only for a request the
    /// session can answer later ([`Request::deferrable`](super::Request::deferrable)).
    Pending(u64),
}

/// The earlier of two due times.
pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A fixed gap; what it was told of each event sent, for the tests to read.
    #[derive(Debug, Clone)]
    pub(crate) struct Fixed {
        pub(crate) gap: Duration,
        pub(crate) log: Arc<Mutex<Vec<(u32, Duration)>>>,
    }

    impl Fixed {
        pub(crate) fn new(gap: Duration) -> Fixed {
            Fixed {
                gap,
                log: Arc::default(),
            }
        }
    }

    impl Pace for Fixed {
        fn gap(&mut self) -> Duration {
            self.gap
        }
        fn sent(&mut self, id: u32, late: Duration) {
            self.log.lock().unwrap().push((id, late));
        }
    }

    /// A stream of `events` events of `size` bytes every `gap` from `t0`.
    pub(crate) fn stream(events: u32, size: usize, t0: Instant, gap: Duration) -> (Box<EventStream>, Fixed) {
        let pace = Fixed::new(gap);
        (
            Box::new(EventStream::new(events, size, t0 + gap, Box::new(pace.clone()))),
            pace,
        )
    }

    #[test]
    fn events_follow_the_schedule_not_the_time_they_went_and_count_their_lateness() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let (mut s, pace) = stream(3, 40, t0, ms(10));
        let mut body = Vec::new();
        assert!(!s.next_event(t0 + ms(9), &mut body), "not due yet");
        assert_eq!(s.next_len(), "id: 1\ndata: \n\n".len() + 40);
        assert!(s.next_event(t0 + ms(13), &mut body), "due at 10ms, sent 3ms late");
        assert_eq!(
            body.len(),
            "id: 1\ndata: \n\n".len() + 40,
            "next_len says what next_event writes"
        );
        // The second is due at 20ms (the schedule), not 23ms (when the first went).
        assert_eq!(s.due(), Some(t0 + ms(20)));
        assert!(s.next_event(t0 + ms(20), &mut body));
        assert!(s.next_event(t0 + ms(45), &mut body));
        assert!(s.done() && s.due().is_none());
        assert!(!s.next_event(t0 + ms(100), &mut body), "three events, no more");
        let text = String::from_utf8(body).unwrap();
        let events: Vec<&str> = text.split_terminator("\n\n").collect();
        assert_eq!(events.len(), 3);
        for (i, e) in events.iter().enumerate() {
            let (id, data) = e.split_once('\n').unwrap();
            assert_eq!(id, format!("id: {}", i + 1));
            let data = data.strip_prefix("data: ").unwrap();
            assert_eq!(data.len(), 40);
            assert!(!data.contains('\n'));
        }
        assert_eq!(*pace.log.lock().unwrap(), vec![(1, ms(3)), (2, ms(0)), (3, ms(15))]);
    }
}
