//! A client connection stepped with scripted events, no socket: per protocol, what a server
//! may do to it — cut a response, stall it, flood it with interim responses, answer with a
//! wrong value or to nothing — and what the connection makes of it (the error class it fails
//! with, what it settles, what it keeps).

use std::time::{Duration, Instant};

use super::connection::{Failed, BACKOFF_MIN};
use super::ctx::MAX_TRIES;
use super::*;
use crate::load::{resolve, ErrorClass, LoadArgs, Tally, Target, Workload};
use crate::proto::h2::frame::{self, Code};

/// Books kept by the test: every answer and abandoned request, in order; the window is always
/// open.
#[derive(Default)]
struct Kept {
    tally: Tally,
    answered: Vec<(u8, Option<u16>)>,
    abandoned: Vec<(u8, ErrorClass)>,
    open_streams: i64,
}

impl Books for Kept {
    fn answered(&mut self, _: usize, r: &Sent, status: Option<u16>, _: Instant) -> bool {
        self.answered.push((r.class, status));
        true
    }
    fn abandoned(&mut self, r: Sent, class: ErrorClass, _: Instant) {
        self.abandoned.push((r.class, class));
    }
    fn answer_failed(&mut self, class: ErrorClass, _: u8) {
        self.tally.error(class);
    }
    fn inside(&self, _: Instant) -> bool {
        true
    }
    fn tally(&mut self) -> &mut Tally {
        &mut self.tally
    }
    fn events(&mut self, _: Instant) -> &mut Tally {
        &mut self.tally
    }
    fn stream_open(&mut self, open: bool) {
        self.open_streams += if open { 1 } else { -1 };
    }
    fn events_of(&mut self, _: usize, _: u64) {}
}

/// A connection to `url` under the workload `toml`, up at `t0`, with its books.
fn up(url: &str, toml: &str, t0: Instant) -> (Connection, Kept) {
    let w: Workload = toml::from_str(toml).unwrap();
    let spec = resolve(LoadArgs::new(Target::parse(url).unwrap(), 1, w)).unwrap();
    let setup = Setup::of(&spec);
    let mut c = setup.connection(0, 0, t0, Reuse::default());
    c.connecting(t0);
    c.connected(t0);
    c.up(Link::Plain).unwrap();
    let books = Kept {
        tally: setup.tally(1),
        ..Kept::default()
    };
    (c, books)
}

/// Takes what the connection has to write.
fn sent(c: &mut Connection) -> Vec<u8> {
    let out = c.unsent().to_vec();
    c.wrote(out.len());
    out
}

#[test]
fn http1_a_response_the_close_cuts_fails_the_connection_as_an_unexpected_close() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    c.send(t0, t0, 0, t0, &mut b);
    assert!(sent(&mut c).starts_with(b"GET / HTTP/1.1\r\n"));
    c.input(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", t0, &mut b)
        .unwrap();
    assert!(b.answered.is_empty(), "7 of its 10 bytes are missing");
    assert_eq!(c.closed(t0, &mut b), Err(ErrorClass::UnexpectedClose));
    // A response delimited by the close is whole at the close.
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    c.send(t0, t0, 0, t0, &mut b);
    c.input(b"HTTP/1.0 200 OK\r\n\r\nall of it", t0, &mut b).unwrap();
    assert_eq!(c.closed(t0, &mut b), Ok(()));
    assert_eq!(b.answered, [(0, Some(200))]);
}

#[test]
fn http1_a_flood_of_interim_responses_is_a_bad_response_after_five() {
    let t0 = Instant::now();
    let interim = b"HTTP/1.1 100 Continue\r\n\r\n";
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    c.send(t0, t0, 0, t0, &mut b);
    for _ in 0..5 {
        c.input(interim, t0, &mut b).unwrap();
    }
    c.input(b"HTTP/1.1 204 No Content\r\n\r\n", t0, &mut b).unwrap();
    assert_eq!(b.answered, [(0, Some(204))], "five interim responses, then the answer");
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    c.send(t0, t0, 0, t0, &mut b);
    let flood = interim.repeat(6);
    assert_eq!(c.input(&flood, t0, &mut b), Err(ErrorClass::BadResponse));
    assert!(b.answered.is_empty());
}

#[test]
fn http1_an_answer_to_no_request_is_a_bad_response() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    let r = c.input(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", t0, &mut b);
    assert_eq!(r, Err(ErrorClass::BadResponse));
}

#[test]
fn http1_an_echoed_body_that_differs_from_the_one_sent_is_a_mismatch() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("http://127.0.0.1:1/", "method = \"POST\"\nbody_size = 16", t0);
    c.send(t0, t0, 0, t0, &mut b);
    let out = sent(&mut c);
    let body = &out[out.len() - 16..];
    let mut wrong = body.to_vec();
    wrong[3] ^= 1;
    let mut reply = b"HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n".to_vec();
    reply.extend_from_slice(&wrong);
    assert_eq!(c.input(&reply, t0, &mut b), Err(ErrorClass::EchoMismatch));
    // The same body, right, completes.
    let (mut c, mut b) = up("http://127.0.0.1:1/", "method = \"POST\"\nbody_size = 16", t0);
    c.send(t0, t0, 0, t0, &mut b);
    let out = sent(&mut c);
    let mut reply = b"HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n".to_vec();
    reply.extend_from_slice(&out[out.len() - 16..]);
    c.input(&reply, t0, &mut b).unwrap();
    assert_eq!(b.answered, [(0, Some(200))]);
}

#[test]
fn http1_an_event_stream_the_server_ends_before_its_end_is_cut() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    c.send(t0, t0, 0, t0, &mut b);
    let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    c.input(head, t0, &mut b).unwrap();
    c.input(b"d\r\ndata: first\n\n\r\n", t0 + Duration::from_millis(5), &mut b)
        .unwrap();
    assert_eq!(b.open_streams, 1);
    assert_eq!(b.tally.sse.as_ref().map(|t| t.events), Some(1));
    assert!(
        c.awaited().is_empty(),
        "an event stream is not awaited after the window"
    );
    assert_eq!(c.closed(t0, &mut b), Err(ErrorClass::StreamCut));
    c.fail(t0, &mut b);
    assert_eq!(b.open_streams, 0, "a failed connection ends its streams");
    let sse = b.tally.sse.as_ref().unwrap();
    assert_eq!((sse.cut, sse.cut_events), (1, 1), "cut, with the event it delivered");
}

#[test]
fn echo_bytes_that_differ_are_a_mismatch_and_a_message_the_close_cuts_an_unexpected_close() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("echo://127.0.0.1:1", "size = 8", t0);
    c.send(t0, t0, 0, t0, &mut b);
    c.send(t0, t0, 0, t0, &mut b);
    let out = sent(&mut c);
    assert_eq!(out.len(), 16, "two messages of 8 bytes");
    c.input(&out[..12], t0, &mut b).unwrap();
    assert_eq!(b.answered, [(0, None)], "the first is back whole, the second half");
    assert_eq!(c.closed(t0, &mut b), Err(ErrorClass::UnexpectedClose));
    let (mut c, mut b) = up("echo://127.0.0.1:1", "size = 8", t0);
    c.send(t0, t0, 0, t0, &mut b);
    let mut wrong = sent(&mut c);
    wrong[0] ^= 0xff;
    assert_eq!(c.input(&wrong, t0, &mut b), Err(ErrorClass::EchoMismatch));
}

#[test]
fn resp_a_value_that_is_not_the_one_written_is_a_wrong_value_and_the_connection_goes_on() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("resp://127.0.0.1:1", "keys = 1", t0);
    // A SET (class 0) then a GET (class 1) of the one key.
    c.send(t0, t0, 0, t0, &mut b);
    c.send(t0, t0, 1, t0, &mut b);
    let out = sent(&mut c);
    assert!(
        out.starts_with(b"*3\r\n$3\r\nSET\r\n"),
        "{:?}",
        String::from_utf8_lossy(&out)
    );
    c.input(b"+OK\r\n$5\r\nhello\r\n", t0, &mut b).unwrap();
    assert_eq!(
        b.answered,
        [(0, None), (1, None)],
        "both answered: a wrong value is an answer"
    );
    let k = b.tally.keyed.as_ref().unwrap();
    assert_eq!((k.sets, k.wrong), (1, 1), "{k:?}");
    assert_eq!(b.tally.errors_by_name().get("wrong_value"), Some(&1));
    assert!(c.is_up() && c.idle(), "the connection goes on");
    // A reply cut by the close, and a reply to no command.
    c.send(t0, t0, 1, t0, &mut b);
    sent(&mut c);
    c.input(b"$40\r\nonly part", t0, &mut b).unwrap();
    assert_eq!(c.closed(t0, &mut b), Err(ErrorClass::UnexpectedClose));
    let (mut c, mut b) = up("resp://127.0.0.1:1", "keys = 1", t0);
    assert_eq!(c.input(b"+OK\r\n", t0, &mut b), Err(ErrorClass::BadResponse));
}

#[test]
fn memcache_a_reply_that_answers_no_command_fails_the_connection() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("memcache://127.0.0.1:1", "keys = 1", t0);
    c.send(t0, t0, 0, t0, &mut b);
    assert!(sent(&mut c).starts_with(b"set "));
    c.input(b"STORED\r\n", t0, &mut b).unwrap();
    assert_eq!(b.answered, [(0, None)]);
    assert_eq!(c.input(b"STORED\r\n", t0, &mut b), Err(ErrorClass::BadResponse));
}

/// An HTTP/2 connection whose server said `settings` first.
fn h2_up(settings: &[(u16, u32)], t0: Instant) -> (Connection, Kept) {
    let (mut c, mut b) = up("h2c://127.0.0.1:1/", "streams = 4", t0);
    assert!(sent(&mut c).starts_with(b"PRI * HTTP/2.0"), "the preface goes first");
    let mut s = Vec::new();
    frame::settings(&mut s, settings);
    c.input(&s, t0, &mut b).unwrap();
    (c, b)
}

#[test]
fn h2_a_server_that_allows_no_stream_stalls_the_connection_until_the_timeout() {
    let t0 = Instant::now();
    // SETTINGS_MAX_CONCURRENT_STREAMS (3) of 0.
    let (mut c, mut b) = h2_up(&[(3, 0)], t0);
    assert!(!c.has_room(4), "no room for a stream");
    c.sends_done(t0, &mut b);
    let limit = Duration::from_secs(1);
    assert!(!c.late(t0 + limit / 2, limit));
    assert!(
        c.late(t0 + limit * 2, limit),
        "stuck with nothing in flight: timed out as a request is"
    );
    // The server gives room back: no longer stuck.
    let mut s = Vec::new();
    frame::settings(&mut s, &[(3, 10)]);
    c.input(&s, t0, &mut b).unwrap();
    assert!(c.has_room(4));
    c.sends_done(t0, &mut b);
    assert!(!c.late(t0 + limit * 2, limit), "room again: the stall is over");
}

#[test]
fn h2_a_request_whose_body_the_flow_control_window_holds_times_out() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("h2c://127.0.0.1:1/", "method = \"POST\"\nbody_size = 1000", t0);
    sent(&mut c);
    let mut s = Vec::new();
    // SETTINGS_INITIAL_WINDOW_SIZE (4) of 0: no DATA may go.
    frame::settings(&mut s, &[(4, 0)]);
    c.input(&s, t0, &mut b).unwrap();
    c.send(t0, t0, 0, t0, &mut b);
    let out = sent(&mut c);
    assert!(
        out.len() < 1000,
        "the body waits for the window: {} bytes went",
        out.len()
    );
    let limit = Duration::from_secs(1);
    assert!(!c.late(t0 + limit / 2, limit));
    assert!(c.late(t0 + limit * 2, limit), "in flight past the timeout");
}

#[test]
fn h2_a_reset_stream_is_abandoned_and_a_refused_one_sent_again_at_most_three_times() {
    let t0 = Instant::now();
    let (mut c, mut b) = h2_up(&[], t0);
    c.send(t0, t0, 0, t0, &mut b);
    let mut s = Vec::new();
    frame::rst_stream(&mut s, 1, Code::Cancel);
    c.input(&s, t0, &mut b).unwrap();
    assert_eq!(b.abandoned, [(0, ErrorClass::StreamReset)]);
    assert!(c.idle() && !c.resends_waiting());
    // Refused: sent again on a new stream, until the tries run out.
    c.send(t0, t0, 0, t0, &mut b);
    let mut id = 3;
    for tries in 1..=MAX_TRIES {
        let mut s = Vec::new();
        frame::rst_stream(&mut s, id, Code::RefusedStream);
        c.input(&s, t0, &mut b).unwrap();
        assert!(c.resends_waiting(), "try {tries}: waits to be sent again");
        assert!(c.resend(t0, &mut b));
        id += 2;
    }
    let mut s = Vec::new();
    frame::rst_stream(&mut s, id, Code::RefusedStream);
    c.input(&s, t0, &mut b).unwrap();
    assert!(!c.resends_waiting());
    assert_eq!(
        b.abandoned,
        [(0, ErrorClass::StreamReset), (0, ErrorClass::StreamReset)],
        "refused {} times: failed",
        MAX_TRIES + 1
    );
    let h2 = b.tally.h2.as_ref().unwrap();
    assert_eq!(
        (h2.reset, h2.refused, h2.retried),
        (1, u64::from(MAX_TRIES) + 1, u64::from(MAX_TRIES))
    );
}

#[test]
fn h2_a_goaway_closes_the_connection_and_keeps_the_streams_above_its_last_to_send_again() {
    let t0 = Instant::now();
    let (mut c, mut b) = h2_up(&[], t0);
    c.send(t0, t0, 0, t0, &mut b);
    c.send(t0, t0, 0, t0, &mut b);
    let mut s = Vec::new();
    frame::goaway(&mut s, 1, Code::NoError);
    c.input(&s, t0, &mut b).unwrap();
    assert!(c.server_closing());
    assert!(c.resends_waiting(), "stream 3 was not processed: sent again elsewhere");
    assert_eq!(c.pending().count(), 2, "stream 1 still in flight, stream 3 waiting");
    assert_eq!(
        c.next(),
        Next::Send,
        "the requests and the SETTINGS acknowledgement wait to go"
    );
    sent(&mut c);
    assert_eq!(c.next(), Next::Read, "stream 1's answer is still awaited");
    let mut s = Vec::new();
    frame::rst_stream(&mut s, 1, Code::Cancel);
    c.input(&s, t0, &mut b).unwrap();
    assert_eq!(
        c.next(),
        Next::Close,
        "nothing left in flight on a connection the server closes"
    );
}

#[test]
fn a_failed_connection_backs_off_longer_each_time_and_gives_back_what_it_reserved() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    c.tickets().reserve(3, 1);
    let f = c.fail(t0, &mut b);
    assert_eq!(
        f,
        Failed {
            class: None,
            unused: (3, 1),
            idle: true
        }
    );
    c.close();
    c.back_off(t0);
    assert_eq!(c.next(), Next::Wait(t0 + BACKOFF_MIN));
    c.connecting(t0);
    c.fail(t0, &mut b);
    c.close();
    c.back_off(t0);
    assert_eq!(c.next(), Next::Wait(t0 + BACKOFF_MIN * 2), "doubled");
    c.connecting(t0);
    c.connected(t0);
    c.close();
    assert_eq!(
        c.next(),
        Next::Read,
        "a socket closed without a failure waits for nothing"
    );
    c.back_off(t0);
    assert_eq!(
        c.next(),
        Next::Wait(t0 + BACKOFF_MIN),
        "connected: the back-off started over"
    );
}

#[test]
fn a_connection_is_up_only_through_its_connect_and_times_the_connect_from_its_start() {
    let t0 = Instant::now();
    let w: Workload = toml::from_str("").unwrap();
    let spec = resolve(LoadArgs::new(Target::parse("http://127.0.0.1:1/").unwrap(), 1, w)).unwrap();
    let one = Reuse {
        per_socket: Some(1),
        open_loop: true,
    };
    let mut c = Setup::of(&spec).connection(7, 0, t0, one);
    assert_eq!(c.state(), State::Down);
    c.connecting(t0);
    assert_eq!(c.state(), State::Connecting);
    let limit = Duration::from_secs(1);
    assert!(c.setting_up_past(t0 + limit * 2, limit) && c.late(t0 + limit * 2, limit));
    assert!(!c.setting_up_past(t0 + limit / 2, limit));
    assert!(!c.connected_once());
    assert_eq!(c.connected(t0 + Duration::from_millis(3)), Duration::from_millis(3));
    c.up(Link::Plain).unwrap();
    assert!(c.is_up() && c.connected_once());
    let mut b = Kept::default();
    c.send(t0, t0, 0, t0, &mut b);
    assert_eq!(c.next(), Next::Send);
    assert!(c.used_up() && c.finishing(), "one request a socket: this one is used");
    let lost = c.close();
    assert_eq!(lost.len(), 1, "what was in flight on the socket is handed back");
    assert_eq!((c.state(), c.all_sent(), c.idle()), (State::Down, true, true));
    // The count of the socket's requests started over with it.
    assert!(!c.used_up());
}

#[test]
fn http1_a_head_the_close_cuts_is_an_unexpected_close_with_nothing_in_flight() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    c.input(b"HTTP/1.1 200 OK\r\nContent-Le", t0, &mut b).unwrap();
    assert!(c.idle());
    assert_eq!(
        c.closed(t0, &mut b),
        Err(ErrorClass::UnexpectedClose),
        "inside a message"
    );
}

#[test]
fn a_socket_that_carried_its_share_closes_once_its_answer_is_in() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    let mut c2 = {
        let w: Workload = toml::from_str("close = true").unwrap();
        let spec = resolve(LoadArgs::new(Target::parse("http://127.0.0.1:1/").unwrap(), 1, w)).unwrap();
        let reuse = Reuse {
            per_socket: Some(1),
            open_loop: false,
        };
        Setup::of(&spec).connection(0, 0, t0, reuse)
    };
    c2.connecting(t0);
    c2.connected(t0);
    c2.up(Link::Plain).unwrap();
    for c in [&mut c, &mut c2] {
        c.tickets().reserve(1, 1);
        c.tickets().take();
        c.send(t0, t0, 0, t0, &mut b);
        sent(c);
        c.input(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", t0, &mut b)
            .unwrap();
    }
    assert_eq!((c.finishing(), c.next()), (false, Next::Read), "keep-alive goes on");
    assert_eq!(
        (c2.finishing(), c2.next()),
        (true, Next::Close),
        "--close: one request a socket"
    );
}

#[test]
fn packet_bytes_that_differ_are_a_mismatch_and_whole_ones_complete_in_order() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("packet://127.0.0.1:1", "size = 64", t0);
    for _ in 0..3 {
        c.send(t0, t0, 0, t0, &mut b);
    }
    let out = sent(&mut c);
    assert_eq!(out.len(), 192);
    // Back in two pieces cut mid-message.
    c.input(&out[..100], t0, &mut b).unwrap();
    c.input(&out[100..], t0, &mut b).unwrap();
    assert_eq!(b.answered.len(), 3);
    c.send(t0, t0, 0, t0, &mut b);
    let mut wrong = sent(&mut c);
    wrong[63] ^= 1;
    assert_eq!(c.input(&wrong, t0, &mut b), Err(ErrorClass::EchoMismatch));
}

#[test]
fn memcache_a_value_that_is_not_the_one_written_is_a_wrong_value_and_a_cut_reply_an_unexpected_close() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("memcache://127.0.0.1:1", "keys = 1", t0);
    c.send(t0, t0, 0, t0, &mut b);
    c.send(t0, t0, 1, t0, &mut b);
    let out = String::from_utf8_lossy(&sent(&mut c)).into_owned();
    let key = out
        .lines()
        .find_map(|l| l.strip_prefix("get "))
        .expect("a get")
        .to_string();
    let reply = format!("STORED\r\nVALUE {key} 0 5\r\nhello\r\nEND\r\n");
    c.input(reply.as_bytes(), t0, &mut b).unwrap();
    assert_eq!(b.answered.len(), 2);
    assert_eq!(b.tally.keyed.as_ref().unwrap().wrong, 1);
    assert!(c.is_up() && c.idle(), "the connection goes on");
    c.send(t0, t0, 1, t0, &mut b);
    sent(&mut c);
    c.input(format!("VALUE {key} 0 50\r\npart").as_bytes(), t0, &mut b)
        .unwrap();
    assert_eq!(c.closed(t0, &mut b), Err(ErrorClass::UnexpectedClose));
}

#[test]
fn h2_is_refused_over_tls_whose_alpn_did_not_pick_it_and_http1_is_not() {
    let t0 = Instant::now();
    for (url, alpn, ok) in [
        ("h2c://127.0.0.1:1/", Some(&b"http/1.1"[..]), false),
        ("h2c://127.0.0.1:1/", None, false),
        ("h2c://127.0.0.1:1/", Some(&b"h2"[..]), true),
        ("http://127.0.0.1:1/", Some(&b"http/1.1"[..]), true),
    ] {
        let w: Workload = toml::from_str("").unwrap();
        let spec = resolve(LoadArgs::new(Target::parse(url).unwrap(), 1, w)).unwrap();
        let mut c = Setup::of(&spec).connection(0, 0, t0, Reuse::default());
        c.connecting(t0);
        c.connected(t0);
        let r = c.up(Link::Tls { alpn });
        assert_eq!(r.is_ok(), ok, "{url} over TLS with ALPN {alpn:?}: {r:?}");
        if !ok {
            assert_eq!(r, Err(ErrorClass::Tls));
        }
    }
}

/// Runs the client's bytes through muxlab's own HTTP/2 server session: its answer.
fn h2_server_answer(c: &mut Connection, server: &mut crate::proto::Session) -> Vec<u8> {
    let mut answer = Vec::new();
    server.feed(&sent(c), &mut answer);
    answer
}

#[test]
fn h2_an_echoed_body_that_differs_is_a_mismatch_and_a_response_the_close_cuts_an_unexpected_close() {
    use crate::proto::{Limits, Proto};
    let t0 = Instant::now();
    let toml = "method = \"POST\"\nbody_size = 16";
    let (mut c, mut b) = up("h2c://127.0.0.1:1/", toml, t0);
    let mut server = crate::proto::Session::with_limits(Proto::H2, Limits::default());
    c.send(t0, t0, 0, t0, &mut b);
    let answer = h2_server_answer(&mut c, &mut server);
    c.input(&answer, t0, &mut b).unwrap();
    assert_eq!(b.answered, [(0, Some(200))], "the server's echo is right");
    // The same again, one byte of the echoed body changed on the way: the body is the last
    // 16 bytes of the last DATA frame.
    c.send(t0, t0, 0, t0, &mut b);
    let mut answer = h2_server_answer(&mut c, &mut server);
    let n = answer.len();
    answer[n - 5] ^= 1;
    assert_eq!(c.input(&answer, t0, &mut b), Err(ErrorClass::EchoMismatch));
    // A request in flight when the server closes.
    let (mut c, mut b) = up("h2c://127.0.0.1:1/", "", t0);
    c.send(t0, t0, 0, t0, &mut b);
    sent(&mut c);
    assert_eq!(c.closed(t0, &mut b), Err(ErrorClass::UnexpectedClose));
}

/// A connection to `url` under `toml` whose sockets are used as `reuse` says, up at `t0`.
fn up_reusing(url: &str, toml: &str, reuse: Reuse, t0: Instant) -> Connection {
    let w: Workload = toml::from_str(toml).unwrap();
    let spec = resolve(LoadArgs::new(Target::parse(url).unwrap(), 1, w)).unwrap();
    let mut c = Setup::of(&spec).connection(0, 0, t0, reuse);
    c.connecting(t0);
    c.connected(t0);
    c.up(Link::Plain).unwrap();
    c
}

#[test]
fn a_socket_done_and_answered_closes_whatever_it_had_left_to_write() {
    let t0 = Instant::now();
    let one = Reuse {
        per_socket: Some(1),
        open_loop: false,
    };
    let mut c = up_reusing(
        "http://127.0.0.1:1/",
        "method = \"POST\"\nbody_size = 100000\nclose = true",
        one,
        t0,
    );
    let mut b = Kept::default();
    c.tickets().reserve(1, 1);
    c.tickets().take();
    c.send(t0, t0, 0, t0, &mut b);
    // The wire took the head and a little of the body; the server answered at once.
    c.wrote(100);
    assert_eq!(c.next(), Next::Send);
    c.input(
        b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n",
        t0,
        &mut b,
    )
    .unwrap();
    assert!(!c.all_sent(), "most of the body is still unwritten");
    assert_eq!(
        c.next(),
        Next::Close,
        "nothing in flight on a socket that is done: it closes"
    );
}

#[test]
fn a_closed_loops_socket_is_done_once_its_reserved_requests_are_used_and_an_open_loops_is_not() {
    let t0 = Instant::now();
    for (open_loop, done) in [(false, true), (true, false)] {
        let five = Reuse {
            per_socket: Some(5),
            open_loop,
        };
        let mut c = up_reusing("http://127.0.0.1:1/", "", five, t0);
        c.tickets().reserve(1, 1);
        c.tickets().take();
        c.send(t0, t0, 0, t0, &mut Kept::default());
        assert!(!c.used_up(), "one of five sent");
        assert_eq!(c.finishing(), done, "open loop {open_loop}");
    }
}

#[test]
fn http1_only_the_oldest_of_pipelined_requests_is_an_event_stream_waiting_for_its_first_event() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    // Two requests sent together: the same send time.
    c.send(t0, t0, 0, t0, &mut b);
    c.send(t0, t0, 0, t0, &mut b);
    sent(&mut c);
    let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    c.input(head, t0, &mut b).unwrap();
    let mut tally = Tally::default();
    c.streams_at_close(t0 + Duration::from_millis(5), &mut tally);
    let sse = tally.sse.expect("an event stream at the close");
    assert_eq!(sse.open_at_close, 1, "the second request's response has not begun");
}
