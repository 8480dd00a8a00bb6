//! The session's limits: frame size, windows and flow control, streams, header lists and
//! blocks, bodies against their content-length.

use super::*;
use crate::proto::{Protocol, Speaks};

#[test]
fn a_frame_over_the_max_frame_size_is_a_frame_size_error() {
    let mut b = hello();
    wire::headers(&mut b, 1, &wire::request_block("POST", "/", &[], Coding::Plain), false);
    wire::data(&mut b, 1, &vec![0u8; frame::MAX_FRAME + 1], true);
    let (got, close) = talk(&b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::FrameSize as u32));
}

#[test]
fn windows_pushed_past_two_to_the_31_are_flow_control_errors() {
    // A stream's: that stream is reset, the connection goes on.
    let mut b = hello();
    wire::headers(&mut b, 1, &wire::request_block("POST", "/", &[], Coding::Plain), false);
    wire::window_update(&mut b, 1, (1 << 31) - 1);
    get(&mut b, 3);
    let (got, close) = talk(&b);
    assert!(!close);
    assert_eq!(got.streams[&1].reset, Some(Code::FlowControl as u32));
    assert_eq!(got.streams[&3].status.as_deref(), Some("200"));
    // The connection's: GOAWAY.
    let mut b = hello();
    wire::window_update(&mut b, 0, (1 << 31) - 1);
    let (got, close) = talk(&b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::FlowControl as u32));
}

#[test]
fn streams_past_the_limit_are_refused_and_the_others_served() {
    let mut b = hello();
    for id in [1, 3, 5] {
        wire::headers(&mut b, id, &wire::request_block("POST", "/", &[], Coding::Plain), false);
    }
    wire::data(&mut b, 1, b"one", true);
    wire::data(&mut b, 3, b"three", true);
    let lim = Limits {
        max_streams: 2,
        ..limits()
    };
    let (got, close, _) = talk_with(lim, &b);
    assert!(!close);
    assert_eq!(got.streams[&5].reset, Some(Code::RefusedStream as u32));
    assert_eq!(got.streams[&1].body, b"one");
    assert_eq!(got.streams[&3].body, b"three");
    let mut s = Session::with_limits(Proto::H2, lim);
    let fed = s.feed(&b, &mut Vec::new());
    assert_eq!((fed.streams.opened, fed.streams.refused), (2, 1));
}

#[test]
fn a_response_waits_for_window_and_goes_when_granted() {
    let mut s = Session::with_limits(Proto::H2, limits());
    let mut b = hello();
    wire::settings(&mut b, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 0)]);
    get(&mut b, 1);
    let mut out = Vec::new();
    s.feed(&b, &mut out);
    let got = wire::read(&out);
    assert_eq!(got.streams[&1].status.as_deref(), Some("200"));
    assert!(
        got.streams[&1].body.is_empty() && !got.streams[&1].ended,
        "no window, no DATA"
    );
    let mut more = Vec::new();
    wire::window_update(&mut more, 1, 10);
    s.feed(&more, &mut out);
    more.clear();
    wire::window_update(&mut more, 1, 100);
    s.feed(&more, &mut out);
    let got = wire::read(&out);
    assert_eq!(got.streams[&1].body, b"<html>hello</html>");
    assert!(got.streams[&1].ended);
}

/// A hook that serves every request and takes `0` bytes of output a feed at most (a wiring
/// whose socket takes that much at a time).
struct Room(usize);

impl crate::proto::Each for Room {
    fn request(&mut self, _: crate::proto::Request<'_>, _: &mut Vec<u8>) -> crate::proto::Answer {
        crate::proto::Answer::Serve
    }

    fn room(&self, pending: usize) -> usize {
        self.0.saturating_sub(pending)
    }
}

/// What [`upload`] saw: all the server sent, the DATA frames the client sent, and the
/// WINDOW_UPDATEs that granted credit back (the greeting's, which opens the connection's
/// window, left out).
struct Uploaded {
    got: Got,
    data_frames: usize,
    grants: usize,
}

/// Uploads `body` on stream 1 in 16 KiB DATA frames, as fast as the windows the client
/// believes in let it (each time all they allow, in one write): the server's
/// SETTINGS_INITIAL_WINDOW_SIZE once it `acks` them, the RFC's 65,535 if it never does. The
/// wire takes the output, `room` bytes a feed, and the session is fed again while it holds
/// any. Panics if the client is left with no window.
fn upload(lim: Limits, body: &[u8], acks: bool, room: usize) -> Uploaded {
    let mut s = Session::with_limits(Proto::H2, lim);
    let mut each = Room(room);
    let mut b = hello();
    // The client reads everything: its own windows never hold the echo back.
    wire::settings(&mut b, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, (1 << 31) - 1)]);
    wire::window_update(&mut b, 0, (1 << 31) - 1 - 65_535);
    post_open(&mut b, 1);
    let (mut wire, mut out) = (Vec::new(), Vec::new());
    let mut take = |s: &mut Session, input: &[u8], wire: &mut Vec<u8>| {
        s.feed_each(input, &mut out, &mut each);
        wire.append(&mut out);
        for _ in 0..10_000 {
            if !s.holding() {
                return;
            }
            s.feed_each(&[], &mut out, &mut each);
            wire.append(&mut out);
        }
        panic!("the session holds output forever");
    };
    take(&mut s, &b, &mut wire);
    let first = wire::read(&wire);
    let greeting = usize::from(first.granted.contains_key(&0));
    if acks {
        let mut b = Vec::new();
        wire::frame(&mut b, frame::SETTINGS, frame::ACK, 0, &[]);
        take(&mut s, &b, &mut wire);
    }
    let assumed = if acks {
        first.initial_window.unwrap_or(65_535)
    } else {
        65_535
    };
    // What the client may send, on the connection and on stream 1.
    let mut conn = 65_535 + first.granted.get(&0).copied().unwrap_or(0) as i64;
    let mut stream = i64::from(assumed);
    let (mut sent, mut frames, mut seen) = (0usize, 0usize, 0usize);
    while sent < body.len() {
        let got = wire::read(&wire[seen..]);
        seen = wire.len() - got.trailing;
        if seen > 0 {
            conn += got.granted.get(&0).copied().unwrap_or(0) as i64;
            stream += got.granted.get(&1).copied().unwrap_or(0) as i64;
        }
        // Every frame the windows allow now, in one write.
        let mut b = Vec::new();
        loop {
            let n = 16_384.min(body.len() - sent).min(conn.min(stream).max(0) as usize);
            if n == 0 {
                break;
            }
            wire::data(&mut b, 1, &body[sent..sent + n], false);
            (sent, frames, conn, stream) = (sent + n, frames + 1, conn - n as i64, stream - n as i64);
        }
        assert!(
            !b.is_empty(),
            "stuck at {sent} bytes: the server granted no more window"
        );
        take(&mut s, &b, &mut wire);
    }
    let mut b = Vec::new();
    wire::data(&mut b, 1, b"", true);
    take(&mut s, &b, &mut wire);
    let got = wire::read(&wire);
    let grants = got.window_updates - greeting;
    Uploaded {
        got,
        data_frames: frames + 1,
        grants,
    }
}

fn mib() -> Vec<u8> {
    (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// A 1 MiB upload in 16 KiB DATA frames, sent as fast as the server's windows let it: it is
/// echoed whole, and the server grants its window back a half window at a time, not once per
/// DATA frame on the connection and once more on the stream.
#[test]
fn a_1_mib_upload_gets_at_most_half_as_many_window_updates_as_data_frames_and_echoes_whole() {
    let body = mib();
    let up = upload(limits(), &body, true, usize::MAX);
    assert_eq!(up.data_frames, 65, "1 MiB in 16 KiB frames, and the request's end");
    assert!(up.got.streams[&1].ended, "the echo ended");
    assert!(up.got.streams[&1].body == body, "the echo is the upload, whole");
    assert!(
        2 * up.grants <= up.data_frames,
        "{} WINDOW_UPDATEs for {} DATA frames",
        up.grants,
        up.data_frames
    );
}

/// A client that never acknowledges our SETTINGS may still assume the RFC's 65,535 bytes on
/// a stream: its credit goes back at half of that, and the upload never waits for ever.
#[test]
fn a_client_that_never_applies_our_window_setting_still_gets_its_credit_back() {
    let body = mib();
    let up = upload(limits(), &body, false, usize::MAX);
    assert!(up.got.streams[&1].ended && up.got.streams[&1].body == body);
}

/// Credit withheld while the held output is at `--max-output` goes back once the output has
/// drained, also when no frame from the client comes meanwhile (the wiring feeds the session
/// again with nothing new).
#[test]
fn window_withheld_at_the_output_bound_is_granted_once_the_output_drains() {
    let body = mib();
    // The wire takes a 16 KiB frame's echo and 5 bytes more a feed: room enough for the
    // session to read on, not for another DATA frame out. The next frames' echoes are held
    // (past a bound of 16 KiB, under the RFC's window, which the session's never goes below),
    // and their credit with them.
    let lim = Limits {
        max_output: 16 * 1024,
        ..limits()
    };
    let up = upload(lim, &body, true, 16_384 + frame::HEADER_LEN + 5);
    assert!(up.got.streams[&1].ended && up.got.streams[&1].body == body);
}

#[test]
fn a_client_that_never_grants_window_cannot_make_the_session_hold_more_than_its_limit() {
    // Under the RFC's window, and at the default (the session's window as large as the
    // bound).
    for max_output in [16 * 1024, 256 * 1024] {
        let lim = Limits { max_output, ..limits() };
        let mut s = Session::with_limits(Proto::H2, lim);
        let mut b = hello();
        wire::settings(&mut b, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 0)]);
        let mut out = Vec::new();
        s.feed(&b, &mut out);
        // Streams of uploads, each as much as the windows we grant allow.
        let mut sent = 0usize;
        let mut granted =
            frame::INITIAL_WINDOW as usize + wire::read(&out).granted.get(&0).copied().unwrap_or(0) as usize;
        for id in (1..400).step_by(2) {
            let mut b = Vec::new();
            wire::headers(&mut b, id, &wire::request_block("POST", "/", &[], Coding::Plain), false);
            let chunk = 16_000.min(granted.saturating_sub(sent));
            wire::data(&mut b, id, &vec![7u8; chunk], false);
            sent += chunk;
            out.clear();
            let fed = s.feed(&b, &mut out);
            assert!(!fed.close);
            granted += wire::read(&out).granted.get(&0).copied().unwrap_or(0) as usize;
        }
        let Some(Speaks::H2(h2)) = s.plain() else {
            panic!("not h2")
        };
        let window = crate::proto::h2::recv_window(max_output) as usize;
        assert_eq!(window, max_output.max(65_535), "the window is the bound, or the RFC's");
        // The window open to the client and the output held share the window's size: held
        // at most that plus one read (here one feed: a DATA frame of 16,000 bytes). It held
        // 406,144 bytes at 256 KiB (1.55 times the bound) when credit went back regardless.
        assert!(h2.held() <= window + 16_000, "{max_output}: held {} bytes", h2.held());
        assert!(
            h2.held() >= max_output,
            "{max_output}: the uploads reached the limit: {}",
            h2.held()
        );
    }
}

#[test]
fn a_header_list_over_8_kib_gets_431() {
    let big = "x".repeat(9000);
    let mut b = hello();
    let mut block = wire::request_block("GET", "/", &[], Coding::Plain);
    // 9,000 bytes in one field: spread over CONTINUATIONs of the 16 KiB frame limit.
    wire::field(&mut block, b"x-big", big.as_bytes(), Coding::Plain);
    wire::frame(&mut b, frame::HEADERS, frame::END_STREAM, 1, &block[..8000]);
    wire::frame(&mut b, frame::CONTINUATION, frame::END_HEADERS, 1, &block[8000..]);
    let (got, close) = talk(&b);
    assert!(!close);
    assert_eq!(got.streams[&1].status.as_deref(), Some("431"));
}

#[test]
fn bodies_that_contradict_their_content_length_reset_before_anything_is_echoed() {
    let mut b = hello();
    wire::headers(
        &mut b,
        1,
        &wire::request_block("POST", "/", &[("content-length", "2")], Coding::Plain),
        false,
    );
    wire::data(&mut b, 1, b"abc", false);
    let (got, _) = talk(&b);
    assert_eq!(got.streams[&1].reset, Some(Code::Protocol as u32));
    assert!(got.streams[&1].body.is_empty(), "echoed past its content-length");
    let mut b = hello();
    wire::headers(
        &mut b,
        1,
        &wire::request_block("POST", "/", &[("content-length", "5")], Coding::Plain),
        true,
    );
    let (got, _) = talk(&b);
    assert_eq!(got.streams[&1].reset, Some(Code::Protocol as u32));
}

#[test]
fn a_block_that_expands_past_64_kib_ends_the_connection() {
    // One 4,000-byte entry in the table, then a block referring to it 1,000 times.
    let mut b = hello();
    let mut block = wire::request_block("GET", "/", &[], Coding::Plain);
    wire::field(&mut block, b"x-big", "v".repeat(4000).as_bytes(), Coding::Indexed);
    wire::headers(&mut b, 1, &block, true);
    let mut bomb = wire::request_block("GET", "/", &[], Coding::Plain);
    bomb.extend(std::iter::repeat_n(0x80 | 62, 1000));
    wire::headers(&mut b, 3, &bomb, true);
    let (got, close) = talk(&b);
    assert_eq!(got.streams[&1].status.as_deref(), Some("200"));
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::EnhanceYourCalm as u32));
}
