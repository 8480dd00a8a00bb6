//! The session's limits: frame size, windows and flow control, streams, header lists and
//! blocks, bodies against their content-length.

use super::*;

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

/// A 1 MiB upload in 16 KiB DATA frames, sent as fast as the server's windows let it: it is
/// echoed whole, and the server grants its window back a half window at a time, not once per
/// DATA frame on the connection and once more on the stream.
#[test]
fn a_1_mib_upload_gets_at_most_half_as_many_window_updates_as_data_frames_and_echoes_whole() {
    let mut s = Session::with_limits(Proto::H2, limits());
    let body: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut b = hello();
    // The client reads everything: its own windows never hold the echo back.
    wire::settings(&mut b, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, (1 << 31) - 1)]);
    wire::window_update(&mut b, 0, (1 << 31) - 1 - 65_535);
    post_open(&mut b, 1);
    let mut out = Vec::new();
    s.feed(&b, &mut out);
    let first = wire::read(&out);
    let initial = i64::from(first.initial_window.unwrap_or(65_535));
    // What the server lets this client send, on the connection and on stream 1.
    let (mut conn, mut stream) = (65_535 + first.granted.get(&0).copied().unwrap_or(0) as i64, initial);
    let (mut sent, mut frames, mut seen) = (0usize, 0usize, out.len());
    while sent < body.len() {
        let n = 16_384.min(body.len() - sent).min(conn.min(stream).max(0) as usize);
        assert!(n > 0, "stuck at {sent} bytes: the server granted no more window");
        let mut b = Vec::new();
        wire::data(&mut b, 1, &body[sent..sent + n], false);
        s.feed(&b, &mut out);
        (sent, frames, conn, stream) = (sent + n, frames + 1, conn - n as i64, stream - n as i64);
        let got = wire::read(&out[seen..]);
        seen = out.len() - got.trailing;
        conn += got.granted.get(&0).copied().unwrap_or(0) as i64;
        stream += got.granted.get(&1).copied().unwrap_or(0) as i64;
    }
    let mut b = Vec::new();
    wire::data(&mut b, 1, b"", true);
    s.feed(&b, &mut out);
    let data_frames = frames + 1;
    let got = wire::read(&out);
    assert_eq!(data_frames, 65, "1 MiB in 16 KiB frames, and the request's end");
    assert!(got.streams[&1].ended, "the echo ended");
    assert!(got.streams[&1].body == body, "the echo is the upload, whole");
    // The one that opened the connection's window at the greeting is not a grant back.
    let updates = got.window_updates - usize::from(first.granted.contains_key(&0));
    assert!(
        2 * updates <= data_frames,
        "{updates} WINDOW_UPDATEs for {data_frames} DATA frames"
    );
}

#[test]
fn a_client_that_never_grants_window_cannot_make_the_session_hold_more_than_its_limit() {
    let lim = Limits {
        max_output: 64 * 1024,
        ..limits()
    };
    let mut s = Session::with_limits(Proto::H2, lim);
    let mut b = hello();
    wire::settings(&mut b, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 0)]);
    let mut out = Vec::new();
    s.feed(&b, &mut out);
    // Streams of uploads, each as much as the windows we grant allow.
    let mut sent = 0usize;
    let mut granted = frame::INITIAL_WINDOW as usize;
    for id in (1..200).step_by(2) {
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
    let Session::H2(h2) = &s else { panic!("not h2") };
    assert!(
        h2.held() <= lim.max_output + super::super::recv_window(lim.max_output) as usize,
        "held {} bytes",
        h2.held()
    );
    assert!(
        h2.held() >= lim.max_output,
        "the uploads reached the limit: {}",
        h2.held()
    );
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
