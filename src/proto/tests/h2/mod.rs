//! The session by the RFC, frame by frame: what a client sends, what it gets back.

use crate::peer::h2::wire::{self, Coding, Got};
use crate::proto::h2::frame::{self, Code};
use crate::proto::Protocol;
use crate::proto::{Limits, Proto, Session};

fn limits() -> Limits {
    Limits {
        max_body: 1 << 20,
        max_output: 256 * 1024,
        max_streams: 100,
        ..Limits::default()
    }
}

/// A cleartext `--proto h2` session fed `input`: what came back, and whether it closed.
fn talk_with(limits: Limits, input: &[u8]) -> (Got, bool, u64) {
    let mut s = Session::with_limits(Proto::H2, limits);
    let mut out = Vec::new();
    let fed = s.feed(input, &mut out);
    let got = wire::read(&out);
    assert_eq!(got.trailing, 0, "a partial frame in the output");
    assert!(got.problems.is_empty(), "{:?}", got.problems);
    (got, fed.close, fed.requests)
}

fn talk(input: &[u8]) -> (Got, bool) {
    let (got, close, _) = talk_with(limits(), input);
    (got, close)
}

fn hello() -> Vec<u8> {
    let mut b = Vec::new();
    wire::preface(&mut b);
    b
}

fn get(b: &mut Vec<u8>, stream: u32) {
    wire::headers(b, stream, &wire::request_block("GET", "/", &[], Coding::Plain), true);
}

/// A POST on `stream` whose body is still to come.
fn post_open(b: &mut Vec<u8>, stream: u32) {
    wire::headers(b, stream, &wire::request_block("POST", "/", &[], Coding::Plain), false);
}

/// Stream `id` got its whole response.
fn served(got: &Got, id: u32) -> bool {
    got.streams.get(&id).is_some_and(|s| s.ended)
}

fn goaway_code(got: &Got) -> Option<u32> {
    got.goaway.map(|(_, code)| code)
}

mod budgets;
mod limits;

#[test]
fn a_get_is_answered_with_hello_after_our_settings_and_an_ack_of_theirs() {
    let mut b = hello();
    get(&mut b, 1);
    let (got, close, requests) = talk_with(limits(), &b);
    assert!(!close);
    assert_eq!(requests, 1);
    assert_eq!((got.settings, got.settings_acks), (1, 1));
    let s = &got.streams[&1];
    assert_eq!(s.status.as_deref(), Some("200"));
    assert_eq!(s.body, b"<html>hello</html>");
    assert!(s.ended && s.reset.is_none());
    assert!(s.fields.contains(&("content-length".into(), "18".into())));
}

#[test]
fn head_gets_the_head_alone_and_post_is_echoed() {
    let mut b = hello();
    wire::headers(&mut b, 1, &wire::request_block("HEAD", "/", &[], Coding::Plain), true);
    wire::headers(
        &mut b,
        3,
        &wire::request_block("POST", "/up", &[("content-length", "11")], Coding::Plain),
        false,
    );
    wire::data(&mut b, 3, b"hello ", false);
    wire::data(&mut b, 3, b"world", true);
    wire::headers(&mut b, 5, &wire::request_block("DELETE", "/", &[], Coding::Plain), true);
    let (got, _) = talk(&b);
    assert_eq!(got.streams[&1].status.as_deref(), Some("200"));
    assert!(got.streams[&1].body.is_empty() && got.streams[&1].ended);
    assert_eq!(got.streams[&3].body, b"hello world");
    assert!(got.streams[&3].ended);
    assert_eq!(got.streams[&5].status.as_deref(), Some("405"));
}

#[test]
fn a_bad_preface_is_a_connection_error_and_http1_on_the_same_port_is_served() {
    let (got, close) = talk(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n");
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::Protocol as u32));
    // A first line that is no HTTP/1.x request line is a bad preface too (h2spec's).
    let (got, close) = talk(b"INVALID CONNECTION PREFACE\r\n\r\n");
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::Protocol as u32));
    // Anything but the preface's start is HTTP/1.1.
    let mut s = Session::new(Proto::H2);
    let mut out = Vec::new();
    let fed = s.feed(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n", &mut out);
    assert_eq!(fed.requests, 1);
    assert!(out.starts_with(b"HTTP/1.1 200 OK\r\n"));
    // Even one that starts like the preface ("P"), split anywhere.
    let mut s = Session::new(Proto::H2);
    out.clear();
    s.feed(b"P", &mut out);
    let fed = s.feed(b"UT / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nok", &mut out);
    assert_eq!(fed.requests, 1);
    assert!(out.starts_with(b"HTTP/1.1 200 OK\r\n") && out.ends_with(b"ok"));
}

#[test]
fn a_header_block_split_into_continuations_is_served() {
    let mut b = hello();
    let block = wire::request_block("GET", "/split", &[("x-a", "1"), ("x-b", "2")], Coding::Indexed);
    let (first, rest) = block.split_at(5);
    let (mid, last) = rest.split_at(rest.len() / 2);
    wire::frame(&mut b, frame::HEADERS, frame::END_STREAM, 1, first);
    wire::frame(&mut b, frame::CONTINUATION, 0, 1, mid);
    wire::frame(&mut b, frame::CONTINUATION, frame::END_HEADERS, 1, last);
    // The indexed fields are in the table now: the next block may refer to them.
    let mut again = wire::request_block("GET", "/split", &[], Coding::Plain);
    again.push(0x80 | 62);
    wire::headers(&mut b, 3, &again, true);
    let (got, close) = talk(&b);
    assert!(!close, "{got:?}");
    assert_eq!(got.streams[&1].body, b"<html>hello</html>");
    assert_eq!(got.streams[&3].status.as_deref(), Some("200"));
}

#[test]
fn another_frame_inside_a_header_block_is_a_protocol_error() {
    let mut b = hello();
    let block = wire::request_block("GET", "/", &[], Coding::Plain);
    wire::frame(&mut b, frame::HEADERS, frame::END_STREAM, 1, &block[..3]);
    wire::frame(&mut b, 0xfa, 0, 0, b"unknown");
    let (got, close) = talk(&b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::Protocol as u32));
    // A CONTINUATION with no header block open.
    let mut b = hello();
    wire::frame(&mut b, frame::CONTINUATION, frame::END_HEADERS, 1, &block);
    assert_eq!(goaway_code(&talk(&b).0), Some(Code::Protocol as u32));
}

#[test]
fn stream_ids_must_rise_and_be_odd() {
    let mut b = hello();
    get(&mut b, 5);
    get(&mut b, 3);
    let (got, close) = talk(&b);
    assert!(close);
    assert_eq!(got.goaway, Some((5, Code::Protocol as u32)));
    assert_eq!(
        got.streams[&5].status.as_deref(),
        Some("200"),
        "the stream before is served"
    );
    let mut b = hello();
    get(&mut b, 2);
    assert_eq!(goaway_code(&talk(&b).0), Some(Code::Protocol as u32));
}

#[test]
fn ping_is_answered_and_its_ack_is_not() {
    let mut b = hello();
    wire::frame(&mut b, frame::PING, 0, 0, b"12345678");
    wire::frame(&mut b, frame::PING, frame::ACK, 0, b"87654321");
    let (got, close) = talk(&b);
    assert!(!close);
    assert_eq!(got.pongs, vec![*b"12345678"]);
    let mut b = hello();
    wire::frame(&mut b, frame::PING, 0, 0, b"1234567");
    assert_eq!(goaway_code(&talk(&b).0), Some(Code::FrameSize as u32));
    let mut b = hello();
    wire::frame(&mut b, frame::PING, 0, 1, b"12345678");
    assert_eq!(goaway_code(&talk(&b).0), Some(Code::Protocol as u32));
}

#[test]
fn settings_are_acked_and_bad_ones_refused() {
    let mut b = hello();
    wire::settings(&mut b, &[(frame::SETTINGS_MAX_FRAME_SIZE, 20_000), (0xff, 7)]);
    let (got, close) = talk(&b);
    assert!(!close);
    assert_eq!(got.settings_acks, 2);
    for (pairs, code) in [
        (vec![(frame::SETTINGS_ENABLE_PUSH, 2)], Code::Protocol),
        (vec![(frame::SETTINGS_INITIAL_WINDOW_SIZE, 1 << 31)], Code::FlowControl),
        (vec![(frame::SETTINGS_MAX_FRAME_SIZE, 100)], Code::Protocol),
    ] {
        let mut b = hello();
        wire::settings(&mut b, &pairs);
        assert_eq!(goaway_code(&talk(&b).0), Some(code as u32), "{pairs:?}");
    }
    let mut b = hello();
    wire::frame(&mut b, frame::SETTINGS, frame::ACK, 0, b"x");
    assert_eq!(goaway_code(&talk(&b).0), Some(Code::FrameSize as u32));
}

#[test]
fn a_reset_stream_leaves_the_others_served() {
    let mut b = hello();
    for id in [1, 3] {
        wire::headers(&mut b, id, &wire::request_block("POST", "/", &[], Coding::Plain), false);
    }
    wire::frame(&mut b, frame::RST_STREAM, 0, 1, &(Code::Cancel as u32).to_be_bytes());
    wire::data(&mut b, 3, b"still here", true);
    let (got, close) = talk(&b);
    assert!(!close);
    assert_eq!(got.streams[&3].body, b"still here");
    assert!(got.streams[&1].body.is_empty() && !got.streams[&1].ended);
    // DATA on the stream the client reset is on a closed stream.
    wire::data(&mut b, 1, b"late", true);
    assert_eq!(goaway_code(&talk(&b).0), Some(Code::StreamClosed as u32));
}

#[test]
fn unknown_frame_types_and_flags_are_ignored() {
    let mut b = hello();
    wire::frame(&mut b, 0xfa, 0xff, 0, b"whatever");
    wire::frame(&mut b, 0xfb, 0, 7, b"");
    get(&mut b, 1);
    let (got, close) = talk(&b);
    assert!(!close);
    assert_eq!(got.streams[&1].status.as_deref(), Some("200"));
}

#[test]
fn frames_on_idle_streams_are_protocol_errors() {
    for kind in [frame::DATA, frame::RST_STREAM, frame::WINDOW_UPDATE] {
        let mut b = hello();
        wire::frame(&mut b, kind, 0, 1, &[0, 0, 0, 1]);
        assert_eq!(
            goaway_code(&talk(&b).0),
            Some(Code::Protocol as u32),
            "frame type {kind}"
        );
    }
    // PRIORITY on an idle stream is fine; on stream 0, or of the wrong length, it is not.
    let mut b = hello();
    wire::frame(&mut b, frame::PRIORITY, 0, 9, &[0, 0, 0, 1, 16]);
    get(&mut b, 1);
    assert_eq!(talk(&b).0.streams[&1].status.as_deref(), Some("200"));
    let mut b = hello();
    wire::frame(&mut b, frame::PRIORITY, 0, 0, &[0, 0, 0, 1, 16]);
    assert_eq!(goaway_code(&talk(&b).0), Some(Code::Protocol as u32));
    let mut b = hello();
    wire::frame(&mut b, frame::PRIORITY, 0, 1, &[0, 0, 0, 3]);
    assert_eq!(talk(&b).0.streams[&1].reset, Some(Code::FrameSize as u32));
}

#[test]
fn malformed_requests_reset_their_stream() {
    for (what, block) in [
        (
            "uppercase name",
            wire::request_block("GET", "/", &[("X-Up", "1")], Coding::Plain),
        ),
        (
            "connection field",
            wire::request_block("GET", "/", &[("connection", "close")], Coding::Plain),
        ),
        (
            "te other than trailers",
            wire::request_block("GET", "/", &[("te", "gzip")], Coding::Plain),
        ),
        ("empty path", wire::request_block("GET", "", &[], Coding::Plain)),
        (
            "unknown pseudo-header",
            wire::request_block("GET", "/", &[(":foo", "1")], Coding::Plain),
        ),
        (
            "CR LF in a value",
            wire::request_block("GET", "/", &[("x-a", "1\r\nx-b: 2")], Coding::Plain),
        ),
        (
            "a space in a name",
            wire::request_block("GET", "/", &[("x a", "1")], Coding::Plain),
        ),
        (
            "a value with leading space",
            wire::request_block("GET", "/", &[("x-a", " 1")], Coding::Plain),
        ),
    ] {
        let mut b = hello();
        wire::headers(&mut b, 1, &block, true);
        get(&mut b, 3);
        let (got, close) = talk(&b);
        assert!(!close, "{what}");
        assert_eq!(got.streams[&1].reset, Some(Code::Protocol as u32), "{what}");
        assert_eq!(got.streams[&3].status.as_deref(), Some("200"), "{what}");
    }
    // A body longer than its content-length.
    let mut b = hello();
    wire::headers(
        &mut b,
        1,
        &wire::request_block("POST", "/", &[("content-length", "2")], Coding::Plain),
        false,
    );
    wire::data(&mut b, 1, b"abc", true);
    assert_eq!(talk(&b).0.streams[&1].reset, Some(Code::Protocol as u32));
}

#[test]
fn a_bad_header_block_is_a_compression_error() {
    let mut b = hello();
    wire::headers(&mut b, 1, &[0x80], true);
    let (got, close) = talk(&b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::Compression as u32));
}

#[test]
fn a_stopping_server_says_goaway_with_the_last_stream() {
    let mut s = Session::with_limits(Proto::H2, limits());
    let mut b = hello();
    get(&mut b, 1);
    get(&mut b, 3);
    let mut out = Vec::new();
    s.feed(&b, &mut out);
    s.farewell(&mut out);
    assert_eq!(wire::read(&out).goaway, Some((3, Code::NoError as u32)));
    // Any other protocol has nothing to say.
    let mut h1 = Session::new(Proto::Http);
    let mut out = Vec::new();
    h1.farewell(&mut out);
    assert!(out.is_empty());
}

#[test]
fn a_client_goaway_lets_its_streams_finish_then_the_connection_closes() {
    let mut b = hello();
    wire::headers(&mut b, 1, &wire::request_block("POST", "/", &[], Coding::Plain), false);
    wire::frame(&mut b, frame::GOAWAY, 0, 0, &[0, 0, 0, 0, 0, 0, 0, 0]);
    wire::frame(&mut b, frame::PING, 0, 0, b"still up");
    let (got, close) = talk(&b);
    assert!(!close, "a stream is still open");
    assert!(got.goaway.is_none());
    assert_eq!(got.pongs, vec![*b"still up"]);
    let mut b = hello();
    wire::headers(&mut b, 1, &wire::request_block("POST", "/", &[], Coding::Plain), false);
    wire::frame(&mut b, frame::GOAWAY, 0, 0, &[0, 0, 0, 1, 0, 0, 0, 0]);
    wire::data(&mut b, 1, b"last", true);
    let (got, close) = talk(&b);
    assert!(close);
    assert_eq!(got.streams[&1].body, b"last");
    assert_eq!(got.goaway, Some((1, Code::NoError as u32)));
    // With nothing open, at once (with an unknown error code too).
    let mut b = hello();
    wire::frame(&mut b, frame::GOAWAY, 0, 0, &[0, 0, 0, 0, 0, 0, 0x12, 0x34]);
    let (got, close) = talk(&b);
    assert!(close && got.goaway == Some((0, Code::NoError as u32)));
}

#[test]
fn data_on_a_stream_closed_long_ago_is_a_stream_error() {
    let mut b = hello();
    // 300 GETs: the first ones are forgotten (the ring holds 200 at --max-streams 100).
    for k in 0..300 {
        get(&mut b, 2 * k + 1);
    }
    wire::data(&mut b, 1, b"late", true);
    get(&mut b, 601);
    let (got, close) = talk(&b);
    assert!(!close);
    assert_eq!(got.streams[&1].reset, Some(Code::StreamClosed as u32));
    assert_eq!(got.streams[&601].status.as_deref(), Some("200"));
}

#[test]
fn the_first_frame_must_be_settings_and_connect_gets_405() {
    let mut b = frame::PREFACE.to_vec();
    get(&mut b, 1);
    let (got, close) = talk(&b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::Protocol as u32));
    let mut b = hello();
    let mut block = Vec::new();
    wire::field(&mut block, b":method", b"CONNECT", Coding::Plain);
    wire::field(&mut block, b":authority", b"example.test:443", Coding::Plain);
    wire::headers(&mut b, 1, &block, true);
    assert_eq!(talk(&b).0.streams[&1].status.as_deref(), Some("405"));
}

/// The h2 port's first bytes choose the protocol wherever the reads split them: HTTP/2's
/// preface with a request behind it, and an HTTP/1.1 request, cut into two feeds at every
/// byte, get the answer the whole input gets (`Detect` hands the protocol chosen every byte it
/// held, and what came after its choice).
#[test]
fn the_h2_ports_choice_holds_at_every_split_of_its_first_bytes() {
    let mut h2 = hello();
    get(&mut h2, 1);
    let h1 = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
    for input in [h2, h1] {
        let whole = {
            let mut s = Session::with_limits(Proto::H2, limits());
            let mut out = Vec::new();
            assert_eq!(s.feed(&input, &mut out).requests, 1);
            out
        };
        for cut in 0..=input.len() {
            let mut s = Session::with_limits(Proto::H2, limits());
            let mut out = Vec::new();
            let mut requests = s.feed(&input[..cut], &mut out).requests;
            requests += s.feed(&input[cut..], &mut out).requests;
            assert_eq!(requests, 1, "cut at {cut}");
            assert_eq!(out, whole, "cut at {cut}");
        }
    }
}
