//! HTTP/2 scripted: no streams allowed, a held flow-control window, resets and refusals, GOAWAY, ALPN, echoed bodies.

use std::time::{Duration, Instant};

use super::*;

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
fn h2_is_refused_over_tls_whose_alpn_did_not_pick_it_and_http1_is_not() {
    let t0 = Instant::now();
    for (url, alpn, ok) in [
        ("h2c://127.0.0.1:1/", Some(&b"http/1.1"[..]), false),
        ("h2c://127.0.0.1:1/", None, false),
        ("h2c://127.0.0.1:1/", Some(&b"h2"[..]), true),
        ("http://127.0.0.1:1/", Some(&b"http/1.1"[..]), true),
    ] {
        let spec = spec(url, "");
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
