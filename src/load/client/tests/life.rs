//! A connection's life: connect and close, back-off, how many requests a socket carries.

use std::time::{Duration, Instant};

use super::*;

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
    let spec = spec("http://127.0.0.1:1/", "");
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
fn a_socket_that_carried_its_share_closes_once_its_answer_is_in() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("http://127.0.0.1:1/", "", t0);
    let mut c2 = {
        let spec = spec("http://127.0.0.1:1/", "close = true");
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
