//! The bound on output (`--max-output`) in every protocol: a session whose hook says the
//! output is full stops consuming input, mid-buffer, holds the rest, and goes on where it
//! stopped when fed again once the output drained, so the bytes that come out are exactly
//! those an unbounded session writes (for HTTP/2, the same frames' contents: a DATA frame may
//! be cut where the bound fell). The HTTP/2 port's session by the RFC, its budgets and limits,
//! are `h2`'s.

mod h2;

use super::{Answer, Each, Limits, Proto, Request, Session};
use crate::peer::h2::wire::{self, Coding};
use crate::proto::Protocol;

/// A hook that lets `bound` bytes of output pile up.
struct Bounded {
    bound: usize,
}

impl Each for Bounded {
    fn request(&mut self, _: Request<'_>, _: &mut Vec<u8>) -> Answer {
        Answer::Serve
    }

    fn room(&self, pending: usize) -> usize {
        self.bound.saturating_sub(pending)
    }
}

/// Feeds `input` in `piece`-byte reads under `bound`, draining the output between feeds as a
/// model does (and feeding again, with nothing new, while the session holds input): every
/// byte written, and the most that was ever pending.
fn bounded(proto: Proto, input: &[u8], piece: usize, bound: usize) -> (Vec<u8>, usize, bool) {
    let mut s = Session::with_limits(proto, Limits::default());
    let (mut all, mut out, mut most, mut held) = (Vec::new(), Vec::new(), 0, false);
    for read in input.chunks(piece) {
        s.feed_each(read, &mut out, &mut Bounded { bound });
        loop {
            most = most.max(out.len());
            all.append(&mut out);
            if !s.holding() {
                break;
            }
            held = true;
            s.feed_each(&[], &mut out, &mut Bounded { bound });
        }
    }
    (all, most, held)
}

fn unbounded(proto: Proto, input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    Session::with_limits(proto, Limits::default()).feed(input, &mut out);
    out
}

/// Checks one protocol's input under a few bounds and read sizes: the same bytes come out as
/// without a bound, a large read was held in part, and no more than `bound` plus `over` (one
/// response, or one frame's) was ever pending.
fn holds(proto: Proto, input: &[u8], over: usize) {
    let whole = unbounded(proto, input);
    for bound in [1, 100, 4096] {
        for piece in [7, 1000, 64 * 1024] {
            let (all, most, held) = bounded(proto, input, piece, bound);
            // HTTP/2 may cut a DATA frame where the bound fell: the same frames' contents.
            let same = match proto {
                Proto::H2 => wire::read(&all) == wire::read(&whole),
                _ => all == whole,
            };
            assert!(same, "{proto} bound {bound} reads {piece}: other bytes came out");
            // A read whose answers are over the bound is held in part.
            assert!(
                held || piece < 64 * 1024,
                "{proto} bound {bound} reads {piece}: nothing was ever held"
            );
            assert!(
                most <= bound + over,
                "{proto} bound {bound} reads {piece}: {most} bytes pending"
            );
        }
    }
}

#[test]
fn pipelined_http_stops_at_the_bound_mid_buffer_and_resumes_where_it_stopped() {
    let mut input = Vec::new();
    for i in 0..300 {
        match i % 3 {
            0 => input.extend_from_slice(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"),
            1 => input
                .extend_from_slice(format!("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\n\r\n{i:06}").as_bytes()),
            _ => input.extend_from_slice(
                b"PUT / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            ),
        }
    }
    // A large Content-Length body is echoed only as far as the room allows.
    input.extend_from_slice(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 20000\r\n\r\n");
    input.extend_from_slice(&[b'z'; 20000]);
    holds(Proto::Http, &input, 200);
}

#[test]
fn echo_and_packet_stop_at_the_bound_mid_buffer() {
    let input: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
    holds(Proto::Echo, &input, 0);
    holds(Proto::Packet(100), &input[..50_000], 100);
}

#[test]
fn h2_stops_reading_frames_at_the_bound_and_resumes() {
    let mut input = Vec::new();
    wire::preface(&mut input);
    let block = wire::request_block("GET", "/", &[], Coding::Plain);
    for k in 0..200u32 {
        wire::headers(&mut input, 1 + 2 * k, &block, true);
        // PINGs ask for output too: an ACK each.
        wire::frame(&mut input, crate::proto::h2::frame::PING, 0, 0, &[k as u8; 8]);
    }
    holds(Proto::H2, &input, 200);
}

#[test]
fn h2_bodies_a_window_update_lets_go_leave_within_the_bound() {
    use crate::proto::h2::frame;
    let mut input = Vec::new();
    wire::preface(&mut input);
    // No stream window at first: every echoed body waits in the session for window.
    wire::settings(&mut input, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 0)]);
    let block = wire::request_block("POST", "/", &[("content-length", "4000")], Coding::Plain);
    for k in 0..16u32 {
        wire::headers(&mut input, 1 + 2 * k, &block, false);
        wire::data(&mut input, 1 + 2 * k, &[b'a' + k as u8; 4000], true);
    }
    // Then one frame lets all of it go: the bound, not the window, says how much leaves now.
    wire::window_update(&mut input, 0, 1 << 20);
    wire::settings(&mut input, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)]);
    holds(Proto::H2, &input, frame::MAX_FRAME + 200);
}

/// A head that timed out gets HTTP/1.x's 408 and nothing else from any other protocol, nor
/// from a connection still choosing (h2's port) or behind TLS: each session answers for
/// itself through the one dispatch.
#[test]
fn only_http1_answers_a_head_that_timed_out() {
    let r408 = b"HTTP/1.1 408 Request Timeout\r\n";
    for proto in [
        Proto::Http,
        Proto::Echo,
        Proto::Packet(4),
        Proto::H2,
        Proto::Resp,
        Proto::Memcache,
    ] {
        let s = Session::with_limits(proto, Limits::default());
        assert_eq!(s.timeout_response().starts_with(r408), proto == Proto::Http, "{proto}");
        if proto != Proto::Http {
            assert_eq!(s.timeout_response(), b"", "{proto}");
        }
        let cfg = super::server_config("self-signed", proto == Proto::H2).unwrap();
        let tls = Session::with_tls(cfg, super::Speaks::with_limits(proto, Limits::default()));
        assert_eq!(tls.timeout_response(), b"", "{proto} behind TLS");
    }
}
