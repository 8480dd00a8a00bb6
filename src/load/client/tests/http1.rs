//! HTTP/1.1 scripted: cut responses, interim floods, answers to nothing, echoed bodies, event streams.

use std::time::{Duration, Instant};

use super::*;

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
