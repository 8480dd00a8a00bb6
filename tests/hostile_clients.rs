//! Every model against clients that try to hold or fool it: a half-close in the middle of an
//! event stream (HTTP/1.1 and HTTP/2), a client that reads but never grants HTTP/2 window,
//! connections that close with work queued in `offload`'s pool, a stop with work queued, and a
//! client's GOAWAY while its streams are still owed. Counts, order and framing only: no timing
//! assertion (a read bound far above every flag is a liveness check).

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use common::{for_each_model, Server};
use muxlab::peer::h2::wire::{self, Coding};
use muxlab::proto::h2::frame;

/// How long a client here waits for the server at most: far above every flag it was given.
const LIVENESS: Duration = Duration::from_secs(30);

/// Reads until the server closes (or an error: a reset), everything it sent.
fn to_end(c: &mut TcpStream) -> Vec<u8> {
    c.set_read_timeout(Some(LIVENESS)).unwrap();
    let mut all = Vec::new();
    let mut b = [0u8; 16 * 1024];
    loop {
        match c.read(&mut b) {
            Ok(0) => return all,
            Ok(n) => all.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                panic!("the server neither finished nor closed within {LIVENESS:?}")
            }
            Err(_) => return all,
        }
    }
}

/// Reads until `done` says the bytes so far are enough.
fn until(c: &mut TcpStream, got: &mut Vec<u8>, done: impl Fn(&[u8]) -> bool) {
    c.set_read_timeout(Some(LIVENESS)).unwrap();
    let mut b = [0u8; 16 * 1024];
    while !done(got) {
        let n = c.read(&mut b).expect("the server answers");
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(got));
        got.extend_from_slice(&b[..n]);
    }
}

/// The event ids in an HTTP/1.1 stream's bytes.
fn ids(text: &str) -> usize {
    text.lines().filter(|l| l.starts_with("id: ")).count()
}

/// HTTP/1.1: the client half-closes after the first event. A response that ends with the last
/// chunk has every event (a cut stream never looks complete); one that was cut just closes.
#[test]
fn a_half_close_mid_stream_never_yields_a_complete_looking_cut_response() {
    for_each_model(|model, args| {
        let srv = Server::start(model, args);
        let mut c = srv.connect();
        c.write_all(b"GET /stream?events=5&every=50ms&size=8 HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let mut got = Vec::new();
        until(&mut c, &mut got, |b| String::from_utf8_lossy(b).contains("id: 1"));
        c.shutdown(Shutdown::Write).unwrap();
        got.extend(to_end(&mut c));
        let text = String::from_utf8_lossy(&got);
        let stats = srv.stop().stats;
        if text.ends_with("0\r\n\r\n") {
            assert_eq!(ids(&text), 5, "{model}: a last chunk after every event only: {text}");
        } else {
            assert!(ids(&text) < 5, "{model}: all five events and no last chunk: {text}");
            assert_eq!(stats["totals"]["sse_cut"], 1, "{model}: {stats}");
        }
    });
}

/// HTTP/2's preface, our SETTINGS (`pairs`), and a GET of `path` on stream 1.
fn h2_request(path: &str, pairs: &[(u16, u32)]) -> Vec<u8> {
    let mut b = Vec::new();
    wire::preface(&mut b);
    wire::settings(&mut b, pairs);
    let block = wire::request_block("GET", path, &[], Coding::Plain);
    wire::headers(&mut b, 1, &block, true);
    b
}

/// HTTP/2: the client half-closes after the first event. The stream either ends with all its
/// events or is reset (RST_STREAM CANCEL): never END_STREAM on a cut stream.
#[test]
fn a_half_close_mid_h2_stream_resets_it_instead_of_ending_it() {
    for_each_model(|model, args| {
        let srv = Server::start(model, &[args, &["--proto", "h2"]].concat());
        let mut c = srv.connect();
        c.write_all(&h2_request("/stream?events=5&every=50ms&size=8", &[]))
            .unwrap();
        let mut got = Vec::new();
        until(&mut c, &mut got, |b| {
            wire::read(b).streams.get(&1).is_some_and(|s| !s.body.is_empty())
        });
        c.shutdown(Shutdown::Write).unwrap();
        got.extend(to_end(&mut c));
        srv.stop();
        let s = wire::read(&got).streams[&1].clone();
        let events = String::from_utf8_lossy(&s.body).matches("id: ").count();
        match s.ended {
            true => assert_eq!(events, 5, "{model}: END_STREAM after every event only"),
            false => assert_eq!(
                s.reset,
                Some(0x8),
                "{model}: a cut stream is reset (CANCEL), {events} events"
            ),
        }
    });
}

/// HTTP/2: a client that reads everything but grants no window (SETTINGS_INITIAL_WINDOW_SIZE
/// 0, no WINDOW_UPDATE) holds its stream's output at the server: past the send timeout
/// (`--idle-timeout`) the stream is reset and the connection closed, counted.
#[test]
fn a_client_that_grants_no_window_is_timed_out_like_one_that_reads_nothing() {
    for_each_model(|model, args| {
        let srv = Server::start(model, &[args, &["--proto", "h2", "--idle-timeout", "1s"]].concat());
        let mut c = srv.connect();
        c.write_all(&h2_request(
            "/stream?events=100000&every=1ms&size=64",
            &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 0)],
        ))
        .unwrap();
        let got = to_end(&mut c);
        let stats = srv.stop().stats;
        let read = wire::read(&got);
        let s = &read.streams[&1];
        assert!(!s.ended && s.reset == Some(0x8), "{model}: {s:?}");
        assert_eq!(stats["totals"]["closed_window_stall"], 1, "{model}: {stats}");
    });
}

/// `offload`: connections that close with work queued cancel it (their responses could never
/// be written); what ran plus what was dropped is what was queued, and the server answers a
/// newcomer after.
#[test]
fn connections_that_close_with_queued_work_cancel_it() {
    let srv = Server::start(
        "offload",
        &[
            "--proto",
            "h2",
            "--work-from-request",
            "--max-work",
            "2s",
            "--workers",
            "1",
        ],
    );
    for _ in 0..20 {
        let mut c = srv.connect();
        let mut b = Vec::new();
        wire::preface(&mut b);
        wire::settings(&mut b, &[]);
        for id in (1..20).step_by(2) {
            let block = wire::request_block("GET", "/?sleep=20ms", &[], Coding::Plain);
            wire::headers(&mut b, id, &block, true);
        }
        c.write_all(&b).unwrap();
        // The server has the requests (its SETTINGS came back), then the client is gone.
        let mut got = Vec::new();
        until(&mut c, &mut got, |b| wire::read(b).settings > 0);
    }
    let mut c = srv.connect();
    assert_eq!(common::get(&mut c, &mut Vec::new()).status, 200);
    let st = srv.stop();
    let (queued, done, cancelled) = (
        st.total("offload_queued"),
        st.total("offload_done"),
        st.total("offload_cancelled"),
    );
    assert!(cancelled > 0, "{}", st.stats);
    assert_eq!(done + cancelled, queued, "{}", st.stats);
}

/// `offload`: a stopping server drops the work still queued instead of running it.
#[test]
fn a_stopping_server_drops_queued_work_instead_of_running_it() {
    let srv = Server::start(
        "offload",
        &[
            "--proto",
            "h2",
            "--work-from-request",
            "--max-work",
            "2s",
            "--workers",
            "1",
        ],
    );
    let mut c = srv.connect();
    let mut b = Vec::new();
    wire::preface(&mut b);
    wire::settings(&mut b, &[]);
    for id in (1..100).step_by(2) {
        let block = wire::request_block("GET", "/?sleep=100ms", &[], Coding::Plain);
        wire::headers(&mut b, id, &block, true);
    }
    c.write_all(&b).unwrap();
    let mut got = Vec::new();
    until(&mut c, &mut got, |b| wire::read(b).settings > 0);
    // Fifty requests of 100 ms in one worker: five seconds of work, stopped at once.
    let st = srv.stop();
    let (queued, done, cancelled) = (
        st.total("offload_queued"),
        st.total("offload_done"),
        st.total("offload_cancelled"),
    );
    assert_eq!(queued, 50, "{}", st.stats);
    // Every queued job is either done or dropped, and dropped ones there are: five seconds of
    // work cannot all have run between the stop and the exit.
    assert!(cancelled > 0 && done + cancelled == queued, "{}", st.stats);
}

/// HTTP/2: after the client's GOAWAY the server finishes what it owes (an event stream's last
/// event, or pooled work in `offload`), then says GOAWAY and closes: the connection does not
/// wait for the idle timeout.
#[test]
fn after_the_clients_goaway_the_server_closes_once_its_last_stream_is_done() {
    for_each_model(|model, args| {
        let path = match model {
            "offload" => "/?sleep=100ms",
            _ => "/stream?events=3&every=100ms&size=8",
        };
        let mut a = [args, &["--proto", "h2", "--idle-timeout", "120s"]].concat();
        if model == "offload" {
            a.extend(["--work-from-request", "--max-work", "2s"]);
        }
        let srv = Server::start(model, &a);
        let mut c = srv.connect();
        let mut b = h2_request(path, &[]);
        // GOAWAY (type 7): last stream 0, no error.
        wire::frame(&mut b, 7, 0, 0, &[0u8; 8]);
        c.write_all(&b).unwrap();
        let got = to_end(&mut c);
        srv.stop();
        let read = wire::read(&got);
        let s = &read.streams[&1];
        assert!(s.ended && s.status.as_deref() == Some("200"), "{model}: {s:?}");
        if model != "offload" {
            assert_eq!(String::from_utf8_lossy(&s.body).matches("id: ").count(), 3, "{model}");
        }
        assert_eq!(read.goaway.map(|g| g.1), Some(0), "{model}: GOAWAY, no error");
    });
}
