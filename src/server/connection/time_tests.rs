//! The connection's time, stepped by hand: its deadlines (idle, send, header), giving back an
//! idle spell's buffers, and the one timer its wiring holds for them. No socket, no wiring.

use std::time::Duration;

use super::tests::{keep, responses, take_all, GET};
use super::*;
use crate::server::Ctx;

/// What would close `c` at `at` (its deadlines, read without handing it the time).
fn expired_at(c: &Connection, w: Worker<'_>, at: Instant) -> Option<Expired> {
    c.deadlines.expired(&w.ctx.cfg, &c.session, c.sending(), at)
}

#[test]
fn output_that_waited_for_the_client_is_progress_and_output_at_once_is_not() {
    let w = Ctx::for_tests(&["--idle-timeout", "1s"]).worker(0);
    let t0 = Instant::now();
    let ms = Duration::from_millis;
    // Taken by the wire when asked, even 500 ms later: the request was the activity.
    let mut c = Connection::new(w, 7, t0);
    c.input(w, GET, t0, None, &mut keep());
    c.next(w, t0, &mut keep());
    take_all(w, &mut c, t0 + ms(500));
    c.settle(w, t0 + ms(500));
    assert_eq!(expired_at(&c, w, t0 + ms(999)), None);
    assert_eq!(expired_at(&c, w, t0 + ms(1000)), Some(Expired::Idle));
    // The client took its reply only after 900 ms: while it waited that was a send
    // timeout in the making, and the reply moving then is progress.
    let mut c = Connection::new(w, 7, t0);
    c.input(w, GET, t0, None, &mut keep());
    c.next(w, t0, &mut keep());
    c.blocked();
    c.settle(w, t0);
    assert_eq!(expired_at(&c, w, t0 + ms(1000)), Some(Expired::Send));
    take_all(w, &mut c, t0 + ms(900));
    c.settle(w, t0 + ms(900));
    assert_eq!(expired_at(&c, w, t0 + ms(1800)), None);
    assert_eq!(expired_at(&c, w, t0 + ms(1900)), Some(Expired::Idle));
    // The next reply goes at once again: no progress of its own.
    c.input(w, GET, t0 + ms(1000), None, &mut keep());
    c.next(w, t0 + ms(1500), &mut keep());
    take_all(w, &mut c, t0 + ms(1500));
    assert_eq!(expired_at(&c, w, t0 + ms(2000)), Some(Expired::Idle));
}

/// HTTP/2 frames, as a client sends them.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend([kind, flags]);
    f.extend(stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

#[test]
fn pings_do_not_keep_a_connection_alive_even_after_a_reply_waited_for_the_client() {
    let w = Ctx::for_tests(&["--proto", "h2", "--idle-timeout", "1s"]).worker(0);
    let t0 = Instant::now();
    let ms = Duration::from_millis;
    let mut c = Connection::new(w, 7, t0);
    let preface = [&b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"[..], &frame(4, 0, 0, &[])].concat();
    c.input(w, &preface, t0, None, &mut keep());
    assert_eq!(c.next(w, t0, &mut keep()), Next::Send);
    // The server's SETTINGS wait for the client a while: progress when they go.
    c.blocked();
    take_all(w, &mut c, t0 + ms(100));
    c.settle(w, t0 + ms(100));
    // Then only PINGs, each answered at once.
    for at in [ms(400), ms(700), ms(1000)] {
        c.input(w, &frame(6, 0, 0, &[0; 8]), t0 + at, None, &mut keep());
        assert_eq!(c.next(w, t0 + at, &mut keep()), Next::Send, "a PING's ACK");
        take_all(w, &mut c, t0 + at);
        c.settle(w, t0 + at);
    }
    assert_eq!(expired_at(&c, w, t0 + ms(1099)), None);
    assert_eq!(
        expired_at(&c, w, t0 + ms(1100)),
        Some(Expired::Idle),
        "idle since the SETTINGS went"
    );
}

#[test]
fn a_blocking_writes_send_timeout_counts_from_the_input_it_answers() {
    let w = Ctx::for_tests(&["--idle-timeout", "10s"]).worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 7, t0);
    // Quiet for 9 s, then a request whose reply the client is slow to take.
    c.input(w, GET, t0 + Duration::from_secs(9), None, &mut keep());
    assert_eq!(c.next(w, t0 + Duration::from_secs(9), &mut keep()), Next::Send);
    c.blocked();
    assert!(c.handle_timeout(w, None, t0 + Duration::from_secs(10)));
    assert_eq!(c.next(w, t0 + Duration::from_secs(10), &mut keep()), Next::Send);
    assert_eq!(c.poll_timeout(w), Some(t0 + Duration::from_secs(19)));
    assert!(c.handle_timeout(w, None, t0 + Duration::from_secs(19)));
    assert_eq!(c.next(w, t0 + Duration::from_secs(19), &mut keep()), Next::Close);
    assert_eq!(w.counters.get(Counter::ClosedSendTimeout), 1);
}

#[test]
fn a_head_past_the_header_timeout_gets_408_and_is_counted() {
    let w = Ctx::for_tests(&["--header-timeout", "1s"]).worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 7, t0);
    c.input(w, b"GET / HT", t0, None, &mut keep());
    assert_eq!(c.next(w, t0, &mut keep()), Next::Read);
    c.settle(w, t0);
    assert_eq!(
        c.poll_timeout(w),
        Some(t0 + Duration::from_millis(100)),
        "shedding first"
    );
    assert!(c.handle_timeout(w, None, t0 + Duration::from_millis(500)));
    assert_eq!(
        c.poll_event(),
        Some(Event::Shed),
        "silent for a tick, it gave back its buffers"
    );
    assert_eq!(c.next(w, t0 + Duration::from_millis(500), &mut keep()), Next::Read);
    assert_eq!(
        c.poll_timeout(w),
        Some(t0 + Duration::from_secs(1)),
        "then the head's deadline"
    );
    assert!(c.handle_timeout(w, None, t0 + Duration::from_secs(1)));
    assert_eq!(c.next(w, t0 + Duration::from_secs(1), &mut keep()), Next::Close);
    assert_eq!(c.poll_timeout(w), None, "closed: nothing more comes due");
    let mut said = Vec::new();
    c.close(|b| said.extend_from_slice(b));
    assert!(said.starts_with(b"HTTP/1.1 408"), "{}", String::from_utf8_lossy(&said));
    assert_eq!(w.counters.get(Counter::ClosedHeaderTimeout), 1);
    c.close(|b| said.extend_from_slice(b));
    assert_eq!(responses(&said), 1, "its parting words are said once");
}

#[test]
fn one_timer_brings_every_timeout_and_a_deadline_that_moves_later_costs_no_new_one() {
    let w = Ctx::for_tests(&["--idle-timeout", "1s"]).worker(0);
    let (t0, ms) = (Instant::now(), Duration::from_millis);
    let mut c = Connection::new(w, 7, t0);
    // Its first timeout: giving back buffers a tick after it last moved.
    let first = c.timer(w, t0).expect("a new connection has timeouts");
    assert_eq!(first, t0 + ms(100));
    // Requests keep coming: its deadlines move later, and the timer it holds will do.
    for at in [ms(30), ms(60), ms(90)] {
        c.input(w, GET, t0 + at, None, &mut keep());
        take_all(w, &mut c, t0 + at);
        c.settle(w, t0 + at);
        assert_eq!(c.timer(w, t0 + at), None, "no new timer while the held one comes first");
    }
    assert!(
        !c.handle_timeout(w, Some(t0 + ms(5)), t0 + ms(100)),
        "a timer it does not hold is stale"
    );
    // The held timer comes early: nothing is due; the next is armed.
    assert!(c.handle_timeout(w, Some(first), first));
    assert_eq!(c.poll_event(), None, "moved 10 ms ago: nothing to give back yet");
    assert_eq!(c.next(w, first, &mut keep()), Next::Read);
    assert_eq!(c.timer(w, first), Some(t0 + ms(190)));
    assert!(c.handle_timeout(w, Some(t0 + ms(190)), t0 + ms(190)));
    assert_eq!(
        c.poll_event(),
        Some(Event::Shed),
        "silent for a tick: buffers given back, once"
    );
    // Then nothing until its idle deadline: an idle connection costs no wake-up before it.
    assert_eq!(c.timer(w, t0 + ms(190)), Some(t0 + ms(1090)));
    assert!(c.handle_timeout(w, Some(t0 + ms(1090)), t0 + ms(1090)));
    assert_eq!(c.next(w, t0 + ms(1090), &mut keep()), Next::Close);
    assert_eq!(w.counters.get(Counter::ClosedIdle), 1);
    assert_eq!(c.timer(w, t0 + ms(1090)), None, "closed: no timer");
}

#[test]
fn a_timeout_sooner_than_the_held_timer_gets_a_timer_of_its_own() {
    let w = Ctx::for_tests(&["--idle-timeout", "60s", "--header-timeout", "1s"]).worker(0);
    let (t0, ms) = (Instant::now(), Duration::from_millis);
    let mut c = Connection::new(w, 7, t0);
    c.input(w, GET, t0, None, &mut keep());
    take_all(w, &mut c, t0);
    c.settle(w, t0);
    let shed = c.timer(w, t0).expect("a timer");
    assert!(c.handle_timeout(w, Some(shed), shed));
    assert_eq!(c.poll_event(), Some(Event::Shed));
    assert_eq!(
        c.timer(w, shed),
        Some(t0 + ms(60_000)),
        "idle: only its idle deadline is ahead"
    );
    // Five seconds on, the start of a head: its timeouts come long before the held one.
    let at = t0 + ms(5000);
    c.input(w, b"GET / HT", at, None, &mut keep());
    assert_eq!(c.next(w, at, &mut keep()), Next::Read);
    c.settle(w, at);
    assert_eq!(
        c.timer(w, at),
        Some(at + ms(100)),
        "giving back buffers, sooner than the held timer"
    );
    assert!(c.handle_timeout(w, Some(at + ms(100)), at + ms(100)));
    assert_eq!(
        c.timer(w, at + ms(100)),
        Some(at + ms(1000)),
        "then the head's deadline"
    );
    assert!(c.handle_timeout(w, Some(at + ms(1000)), at + ms(1000)));
    assert_eq!(c.next(w, at + ms(1000), &mut keep()), Next::Close);
    assert_eq!(w.counters.get(Counter::ClosedHeaderTimeout), 1);
}

#[test]
fn an_event_after_a_silence_longer_than_the_idle_timeout_gets_a_whole_send_timeout() {
    let w = Ctx::for_tests(&["--idle-timeout", "1s"]).worker(0);
    let (t0, s) = (Instant::now(), Duration::from_secs);
    let mut c = Connection::new(w, 7, t0);
    let slow = b"GET /stream?events=2&every=3s&first=3s HTTP/1.1\r\nHost: t\r\n\r\n";
    c.input(w, slow, t0, None, &mut keep());
    while c.next(w, t0, &mut keep()) == Next::Send {
        take_all(w, &mut c, t0);
    }
    c.settle(w, t0);
    let due = c.timer(w, t0).expect("its first event's wake-up");
    assert!(
        due >= t0 + s(3),
        "silent between events, the stream is not idle: {:?}",
        due - t0
    );
    assert!(c.handle_timeout(w, Some(due), due));
    // The event goes out, and the client has not read: its send timeout runs from now.
    assert_eq!(c.next(w, due, &mut keep()), Next::Send);
    c.blocked();
    assert_eq!(
        c.poll_timeout(w),
        Some(due + s(1)),
        "a whole --idle-timeout for the send"
    );
    assert!(c.handle_timeout(w, None, due + Duration::from_millis(10)));
    assert_eq!(c.next(w, due, &mut keep()), Next::Send, "not closed at once");
}

#[test]
fn a_timer_that_came_is_never_armed_again_for_a_time_that_has_passed() {
    let w = Ctx::for_tests(&["--idle-timeout", "60s"]).worker(0);
    let (t0, ms) = (Instant::now(), Duration::from_millis);
    // A client that connects and never sends: its first timer, then only its idle deadline.
    let mut c = Connection::new(w, 7, t0);
    assert_eq!(c.next(w, t0, &mut keep()), Next::Read);
    c.settle(w, t0);
    let first = c.timer(w, t0).expect("a first timer");
    assert!(first > t0);
    assert!(c.handle_timeout(w, Some(first), first));
    assert_eq!(c.next(w, first, &mut keep()), Next::Read);
    c.settle(w, first);
    wire::perform(w, &mut c);
    let next = c.timer(w, first).expect("its idle deadline");
    assert!(next > first, "armed again for {:?}, which has passed", next - t0);
    assert_eq!(next, t0 + ms(60_000));
}
