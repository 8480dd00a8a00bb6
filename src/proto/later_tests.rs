//! The responses-that-finish-later contract over every protocol that has it: what the session
//! writes at once, what it writes as pieces fall due, what waits behind a response (HTTP/1.1's
//! pipelined requests), what cancels one (HTTP/2's reset), what bounds one (`--max-output`),
//! and how a stopping server ends one.

use crate::proto::Protocol;
use std::time::{Duration, Instant};

use super::later::tests::{stream, Fixed};
use super::later::Later;
use super::{Answer, Each, Limits, Proto, Request, Session};
use crate::peer::h2::wire::{self, Coding};

/// A hook that answers `/stream` with an event stream of `events` events every 10 ms from
/// `t0`, and lets `bound` bytes of output pile up.
struct Streamer {
    t0: Instant,
    events: u32,
    bound: usize,
    paces: Vec<Fixed>,
}

impl Streamer {
    fn new(t0: Instant, events: u32) -> Streamer {
        Streamer {
            t0,
            events,
            bound: usize::MAX,
            paces: Vec::new(),
        }
    }

    /// Events sent over all streams.
    fn sent(&self) -> usize {
        self.paces.iter().map(|p| p.log.lock().unwrap().len()).sum()
    }
}

impl Each for Streamer {
    fn request(&mut self, req: Request<'_>, _: &mut Vec<u8>) -> Answer {
        if !req.target.starts_with(b"/stream") {
            return Answer::Serve;
        }
        let (s, pace) = stream(self.events, 8, self.t0, ms(10));
        self.paces.push(pace);
        Answer::Later(Later::Stream(s))
    }

    fn room(&self, pending: usize) -> usize {
        self.bound.saturating_sub(pending)
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn http1_streams_its_events_chunked_and_answers_what_was_pipelined_behind_them_after() {
    let t0 = Instant::now();
    let mut each = Streamer::new(t0, 3);
    let mut s = Session::new(Proto::Http);
    let mut out = Vec::new();
    let req = b"GET /stream HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n";
    // Any split of the input: the stream's head at once, the GET behind it held.
    for b in req {
        let fed = s.feed_each(std::slice::from_ref(b), &mut out, &mut each);
        assert!(!fed.close);
    }
    let head = text(&out);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("Content-Type: text/event-stream\r\n") && head.contains("Transfer-Encoding: chunked\r\n"));
    assert!(
        !head.contains("hello"),
        "the pipelined GET waits for the stream: {head}"
    );
    assert_eq!(s.due(), Some(t0 + ms(10)));
    out.clear();
    // Nothing before it is due; two events once two are.
    assert_eq!(s.advance_each(t0 + ms(5), &mut out, &mut each).requests, 0);
    assert!(out.is_empty());
    s.advance_each(t0 + ms(21), &mut out, &mut each);
    assert_eq!(
        text(&out),
        "16\r\nid: 1\ndata: abcdefgh\n\n\r\n16\r\nid: 2\ndata: abcdefgh\n\n\r\n"
    );
    out.clear();
    // The last: the final chunk, then the GET behind it.
    let fed = s.advance_each(t0 + ms(30), &mut out, &mut each);
    assert_eq!(fed.requests, 1, "the pipelined GET is answered once the stream ended");
    let rest = text(&out);
    assert!(
        rest.starts_with("16\r\nid: 3\ndata: abcdefgh\n\n\r\n0\r\n\r\nHTTP/1.1 200 OK"),
        "{rest}"
    );
    assert!(rest.ends_with("<html>hello</html>"));
    assert_eq!(s.due(), None);
    assert_eq!(each.sent(), 3);
}

#[test]
fn http1_events_stop_at_the_bound_on_output_and_go_on_once_it_drains() {
    let t0 = Instant::now();
    let mut each = Streamer::new(t0, 100);
    let mut s = Session::new(Proto::Http);
    let mut out = Vec::new();
    s.feed_each(b"GET /stream HTTP/1.1\r\nHost: t\r\n\r\n", &mut out, &mut each);
    // The client takes nothing: one event past the bound at most, then none.
    each.bound = out.len() + 40;
    s.advance_each(t0 + ms(1000), &mut out, &mut each);
    assert_eq!(each.sent(), 2, "events stop once the output is at its bound");
    assert!(s.due().is_some_and(|d| d <= t0 + ms(1000)), "the rest are owed, late");
    out.clear();
    each.bound = usize::MAX;
    s.advance_each(t0 + ms(1000), &mut out, &mut each);
    assert_eq!(each.sent(), 100, "all due by then, once the output drained");
    // The pace saw each event's lateness against its own due time.
    let log = each.paces[0].log.lock().unwrap();
    assert_eq!(log[99], (100, Duration::ZERO));
    assert_eq!(log[2], (3, ms(1000 - 30)));
}

#[test]
fn a_stopping_server_ends_an_http1_stream_with_its_last_chunk_and_http10_streams_until_close() {
    let t0 = Instant::now();
    let mut each = Streamer::new(t0, 100);
    let mut s = Session::new(Proto::Http);
    let mut out = Vec::new();
    s.feed_each(b"GET /stream HTTP/1.1\r\nHost: t\r\n\r\n", &mut out, &mut each);
    out.clear();
    s.farewell(&mut out);
    assert_eq!(text(&out), "0\r\n\r\n");
    assert_eq!(s.due(), None);
    drop(s);
    assert_eq!(each.sent(), 0);
    // HTTP/1.0 has no chunked coding: the events, then the close.
    let mut s = Session::new(Proto::Http);
    let mut out = Vec::new();
    s.feed_each(b"GET /stream HTTP/1.0\r\n\r\n", &mut out, &mut Streamer::new(t0, 1));
    let head = text(&out);
    assert!(
        head.contains("Connection: close") && !head.contains("chunked"),
        "{head}"
    );
    out.clear();
    let fed = s.advance_each(t0 + ms(10), &mut out, &mut Streamer::new(t0, 1));
    assert!(fed.close);
    assert_eq!(text(&out), "id: 1\ndata: abcdefgh\n\n");
}

/// An h2 session with the preface read and a GET of `path` on each stream of `ids`.
fn h2_streams(each: &mut Streamer, ids: &[u32], path: &str) -> (Session, Vec<u8>) {
    let mut s = Session::with_limits(Proto::H2, Limits::default());
    let mut b = Vec::new();
    wire::preface(&mut b);
    for &id in ids {
        wire::headers(&mut b, id, &wire::request_block("GET", path, &[], Coding::Plain), true);
    }
    let mut out = Vec::new();
    s.feed_each(&b, &mut out, each);
    (s, out)
}

#[test]
fn h2_streams_go_side_by_side_and_end_with_end_stream() {
    let t0 = Instant::now();
    let mut each = Streamer::new(t0, 2);
    let (mut s, mut out) = h2_streams(&mut each, &[1, 3], "/stream");
    // A plain GET beside them is answered at once.
    let mut b = Vec::new();
    wire::headers(&mut b, 5, &wire::request_block("GET", "/", &[], Coding::Plain), true);
    s.feed_each(&b, &mut out, &mut each);
    s.advance_each(t0 + ms(10), &mut out, &mut each);
    let got = wire::read(&out);
    assert!(got.problems.is_empty(), "{:?}", got.problems);
    assert!(got.streams[&5].ended && got.streams[&5].body == b"<html>hello</html>");
    for id in [1, 3] {
        let st = &got.streams[&id];
        assert_eq!(st.status.as_deref(), Some("200"));
        assert!(st.fields.contains(&("content-type".into(), "text/event-stream".into())));
        assert_eq!(text(&st.body), "id: 1\ndata: abcdefgh\n\n");
        assert!(!st.ended, "one event of two: the stream goes on");
    }
    s.advance_each(t0 + ms(20), &mut out, &mut each);
    let got = wire::read(&out);
    for id in [1, 3] {
        assert!(got.streams[&id].ended);
        assert!(text(&got.streams[&id].body).ends_with("id: 2\ndata: abcdefgh\n\n"));
    }
    assert_eq!(s.due(), None);
}

#[test]
fn an_h2_stream_reset_by_the_client_cancels_its_events() {
    let t0 = Instant::now();
    let mut each = Streamer::new(t0, 100);
    let (mut s, mut out) = h2_streams(&mut each, &[1, 3], "/stream");
    s.advance_each(t0 + ms(10), &mut out, &mut each);
    let mut b = Vec::new();
    wire::frame(&mut b, 3, 0, 1, &8u32.to_be_bytes()); // RST_STREAM(CANCEL) on stream 1
    let fed = s.feed_each(&b, &mut out, &mut each);
    assert_eq!(fed.streams.reset, 1);
    // Stream 1's pace was dropped with it (how the server counts a cut stream); 3 goes on.
    assert_eq!(
        std::sync::Arc::strong_count(&each.paces[0].log),
        1,
        "stream 1's pace still held"
    );
    assert_eq!(std::sync::Arc::strong_count(&each.paces[1].log), 2);
    s.advance_each(t0 + ms(20), &mut out, &mut each);
    assert_eq!(each.paces[0].log.lock().unwrap().len(), 1);
    assert_eq!(each.paces[1].log.lock().unwrap().len(), 2);
}

#[test]
fn an_h2_stream_whose_client_grants_no_window_holds_at_most_max_output_and_owes_nothing_meanwhile() {
    let t0 = Instant::now();
    let mut each = Streamer::new(t0, 1_000_000);
    let mut s = Session::with_limits(
        Proto::H2,
        Limits {
            max_output: 4096,
            ..Limits::default()
        },
    );
    let mut b = Vec::new();
    wire::preface(&mut b);
    wire::settings(&mut b, &[(4, 0)]); // SETTINGS_INITIAL_WINDOW_SIZE 0: no DATA may go
    wire::headers(
        &mut b,
        1,
        &wire::request_block("GET", "/stream", &[], Coding::Plain),
        true,
    );
    let mut out = Vec::new();
    s.feed_each(&b, &mut out, &mut each);
    s.advance_each(t0 + ms(100_000), &mut out, &mut each);
    let held: usize = (1..=each.sent())
        .map(|id| format!("id: {id}\ndata: abcdefgh\n\n").len())
        .sum();
    assert!((4096..4096 + 32).contains(&held), "{held} bytes of events held");
    assert_eq!(s.due(), None, "nothing owed until the client grants window");
    // A stopping server says GOAWAY (the stream ends once what it holds has gone).
    out.clear();
    s.farewell(&mut out);
    let got = wire::read(&out);
    assert!(got.goaway.is_some());
}

/// A hook that answers every request it may answer later with a ticket of its own (as the
/// offload model does), and serves the others.
#[derive(Default)]
struct Deferring {
    tickets: Vec<u64>,
}

impl Each for Deferring {
    fn request(&mut self, req: Request<'_>, _: &mut Vec<u8>) -> Answer {
        if !req.deferrable {
            return Answer::Serve;
        }
        self.tickets.push(100 + self.tickets.len() as u64);
        Answer::Later(Later::Pending(*self.tickets.last().unwrap()))
    }
}

#[test]
fn an_http1_response_waits_for_its_ticket_and_the_pipelined_ones_follow_in_order() {
    let mut each = Deferring::default();
    let mut s = Session::new(Proto::Http);
    let mut out = Vec::new();
    let req = b"GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\nPOST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi";
    let fed = s.feed_each(req, &mut out, &mut each);
    assert_eq!(
        (fed.requests, out.len()),
        (0, 0),
        "nothing until the first one's work is done"
    );
    assert_eq!(each.tickets, vec![100], "the requests behind it wait unread");
    // A completion for a ticket it does not hold does nothing.
    assert_eq!(s.complete_each(7, &mut out, &mut each).requests, 0);
    let fed = s.complete_each(100, &mut out, &mut each);
    assert_eq!(fed.requests, 1, "the second is deferred in turn");
    assert_eq!(each.tickets, vec![100, 101]);
    assert!(text(&out).ends_with("<html>hello</html>") && text(&out).matches("HTTP/1.1 200").count() == 1);
    // The POST (a body: not deferrable) is served in the same call that completes the GET.
    let fed = s.complete_each(101, &mut out, &mut each);
    assert_eq!(fed.requests, 2);
    let all = text(&out);
    assert_eq!(all.matches("HTTP/1.1 200").count(), 3, "{all}");
    assert!(all.ends_with("hi"), "in order: {all}");
}

#[test]
fn an_h2_response_that_waits_for_its_ticket_is_cancelled_by_a_reset() {
    let mut each = Deferring::default();
    let mut s = Session::with_limits(Proto::H2, Limits::default());
    let mut b = Vec::new();
    wire::preface(&mut b);
    for id in [1, 3] {
        wire::headers(&mut b, id, &wire::request_block("GET", "/", &[], Coding::Plain), true);
    }
    let mut out = Vec::new();
    assert_eq!(s.feed_each(&b, &mut out, &mut each).requests, 0);
    assert_eq!(each.tickets, vec![100, 101]);
    let mut b = Vec::new();
    wire::frame(&mut b, 3, 0, 1, &8u32.to_be_bytes()); // RST_STREAM(CANCEL) on stream 1
    s.feed_each(&b, &mut out, &mut each);
    assert_eq!(s.cancelled(), vec![100], "stream 1's work may be dropped");
    assert!(s.cancelled().is_empty(), "said once");
    assert_eq!(
        s.complete_each(100, &mut out, &mut each).requests,
        0,
        "nothing left to complete"
    );
    assert_eq!(s.complete_each(101, &mut out, &mut each).requests, 1);
    let got = wire::read(&out);
    assert!(got.streams[&3].ended && got.streams[&3].body == b"<html>hello</html>");
    assert!(
        got.streams.get(&1).is_none_or(|st| st.status.is_none()),
        "no response on the reset stream"
    );
}

/// A response that waits for its work has not begun: a WINDOW_UPDATE meanwhile (which sends
/// what every stream's window lets go) sends nothing on it, and its HEADERS come first.
#[test]
fn an_h2_response_that_waits_for_its_ticket_sends_nothing_before_its_head_when_window_opens() {
    let mut each = Deferring::default();
    let mut s = Session::with_limits(Proto::H2, Limits::default());
    let mut b = Vec::new();
    wire::preface(&mut b);
    wire::headers(&mut b, 1, &wire::request_block("GET", "/", &[], Coding::Plain), true);
    let mut out = Vec::new();
    s.feed_each(&b, &mut out, &mut each);
    let mut b = Vec::new();
    wire::window_update(&mut b, 0, 1000);
    wire::window_update(&mut b, 1, 1000);
    s.feed_each(&b, &mut out, &mut each);
    let got = wire::read(&out);
    assert!(
        !got.streams.contains_key(&1),
        "nothing on stream 1 before its work is done: {:?}",
        got.streams.get(&1)
    );
    assert!(s.cancelled().is_empty(), "its work is still wanted");
    assert_eq!(s.complete_each(100, &mut out, &mut each).requests, 1);
    let got = wire::read(&out);
    let st = &got.streams[&1];
    assert_eq!(st.status.as_deref(), Some("200"));
    assert!(st.ended && st.body == b"<html>hello</html>", "{st:?}");
}

/// A connection that stops reading while a response is pending (as the event loops do): fed
/// one read at a time, only while not paused, 150,000 pipelined requests each answered later
/// come out whole and in order, and the session never holds more than one read.
#[test]
fn pipelined_requests_fed_a_read_at_a_time_while_not_paused_are_all_answered() {
    let mut each = Deferring::default();
    let mut s = Session::new(Proto::Http);
    let mut out = Vec::new();
    let one = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";
    let input = one.repeat(150_000);
    let mut pos = 0;
    let mut answered = 0;
    while pos < input.len() || s.paused() {
        if s.paused() {
            let t = *each.tickets.last().unwrap();
            let fed = s.complete_each(t, &mut out, &mut each);
            assert!(
                !fed.close,
                "closed after {answered}: {}",
                text(&out[out.len().saturating_sub(200)..])
            );
            answered += fed.requests;
            continue;
        }
        let end = (pos + 65536).min(input.len());
        let fed = s.feed_each(&input[pos..end], &mut out, &mut each);
        assert!(!fed.close, "closed after {answered}");
        answered += fed.requests;
        pos = end;
        assert!(s.behind() <= 65536);
    }
    assert_eq!(answered, 150_000);
    assert_eq!(text(&out).matches("HTTP/1.1 200 OK").count(), 150_000);
}
