//! The budgets for floods and the limits on header blocks and windows, each checked so that
//! removing it fails its test: the connection ends with GOAWAY ENHANCE_YOUR_CALM (naming the
//! last stream processed) past a budget, and not before; with the budget off, it goes on.

use super::*;
use crate::proto::{Calm, Rate};

/// A session whose budgets are `calm`.
fn with_calm(calm: Calm) -> Limits {
    Limits { calm, ..limits() }
}

/// HEADERS then RST_STREAM on `n` streams from 1 (Rapid Reset).
fn rapid_reset(b: &mut Vec<u8>, n: u32) {
    for k in 0..n {
        let id = 1 + 2 * k;
        get(b, id);
        wire::frame(b, frame::RST_STREAM, 0, id, &(Code::Cancel as u32).to_be_bytes());
    }
}

#[test]
fn rapid_reset_ends_the_connection_past_its_budget_naming_the_last_stream_processed() {
    let mut b = hello();
    rapid_reset(&mut b, 1000);
    let (got, close, requests) = talk_with(limits(), &b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::EnhanceYourCalm as u32));
    // 200 resets pass (Netty's 200 per 30 s); the 201st ends it, its stream processed.
    assert_eq!(requests, 201);
    assert_eq!(got.goaway.map(|(last, _)| last), Some(401));
    // Without the budget, every pair is served.
    let off = with_calm(Calm {
        client_resets: Rate::OFF,
        ..Calm::default()
    });
    let (got, close, requests) = talk_with(off, &b);
    assert!(!close && got.goaway.is_none());
    assert_eq!(requests, 1000);
}

#[test]
fn resets_the_client_makes_the_server_send_end_the_connection_past_their_budget() {
    // A WINDOW_UPDATE of 0 on an open stream is a stream error: MadeYouReset's pattern.
    let mut b = hello();
    for k in 0..300 {
        let id = 1 + 2 * k;
        post_open(&mut b, id);
        wire::window_update(&mut b, id, 0);
    }
    let (got, close, _) = talk_with(limits(), &b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::EnhanceYourCalm as u32));
    let resets = got
        .streams
        .values()
        .filter(|s| s.reset == Some(Code::Protocol as u32))
        .count();
    assert_eq!(resets, 201, "200 pass, the 201st ends the connection");
    let off = with_calm(Calm {
        server_resets: Rate::OFF,
        ..Calm::default()
    });
    let (got, close, _) = talk_with(off, &b);
    assert!(!close && got.goaway.is_none());
}

/// Writes one frame of a flood.
type Writer = Box<dyn Fn(&mut Vec<u8>)>;

/// `frames` of one kind after a request on stream 1, under the default budgets and with the
/// quiet-frame budget off.
fn flood(each: impl Fn(&mut Vec<u8>), frames: usize) -> ((Got, bool), (Got, bool)) {
    let mut b = hello();
    post_open(&mut b, 1);
    for _ in 0..frames {
        each(&mut b);
    }
    let (on, on_close, _) = talk_with(limits(), &b);
    let off = with_calm(Calm {
        quiet_frames: Rate::OFF,
        ..Calm::default()
    });
    let (off, off_close, _) = talk_with(off, &b);
    ((on, on_close), (off, off_close))
}

#[test]
fn floods_of_frames_that_produce_no_output_end_the_connection() {
    let kinds: [(&str, Writer); 5] = [
        ("empty DATA", Box::new(|b| wire::data(b, 1, b"", false))),
        (
            "PRIORITY",
            Box::new(|b| wire::frame(b, frame::PRIORITY, 0, 1, &[0, 0, 0, 0, 16])),
        ),
        ("unknown", Box::new(|b| wire::frame(b, 0xfa, 0, 0, b"x"))),
        ("PING", Box::new(|b| wire::frame(b, frame::PING, 0, 0, &[1; 8]))),
        ("SETTINGS", Box::new(|b| wire::settings(b, &[]))),
    ];
    for (name, each) in kinds {
        let ((on, closed), (off, open)) = flood(&*each, 20_000);
        assert!(closed, "{name}: a flood ends its connection");
        assert_eq!(goaway_code(&on), Some(Code::EnhanceYourCalm as u32), "{name}");
        assert!(!open && off.goaway.is_none(), "{name}: without the budget it goes on");
        // Well under the budget: nothing happens.
        let ((few, closed), _) = flood(&*each, 100);
        assert!(!closed && few.goaway.is_none(), "{name}: 100 are no flood");
    }
}

#[test]
fn resets_and_updates_on_closed_streams_are_quiet_frames() {
    let mut b = hello();
    get(&mut b, 1);
    for _ in 0..20_000 {
        wire::window_update(&mut b, 1, 1);
    }
    let (got, close) = talk(&b);
    assert!(close, "WINDOW_UPDATE on a closed stream, again and again");
    assert_eq!(goaway_code(&got), Some(Code::EnhanceYourCalm as u32));
}

#[test]
fn a_header_block_past_64_continuations_or_64_kib_ends_the_connection() {
    let block = wire::request_block("GET", "/", &[], Coding::Plain);
    let with = |continuations: usize, each: &[u8]| {
        let mut b = hello();
        wire::frame(&mut b, frame::HEADERS, frame::END_STREAM, 1, &block);
        for k in 0..continuations {
            let last = k + 1 == continuations;
            wire::frame(
                &mut b,
                frame::CONTINUATION,
                if last { frame::END_HEADERS } else { 0 },
                1,
                each,
            );
        }
        talk(&b)
    };
    let (got, close) = with(64, b"");
    assert!(
        !close && got.streams[&1].status.as_deref() == Some("200"),
        "64 empty CONTINUATIONs pass"
    );
    let (got, close) = with(65, b"");
    assert!(
        close && goaway_code(&got) == Some(Code::EnhanceYourCalm as u32),
        "the 65th ends it"
    );
    // Four CONTINUATIONs of 16 KiB: the block passes 64 KiB in the fourth.
    let pad = [0x40u8; 16_384];
    let (got, close) = with(4, &pad);
    assert!(close && goaway_code(&got) == Some(Code::EnhanceYourCalm as u32));
}

#[test]
fn a_window_update_of_zero_is_a_stream_error_on_a_stream_and_a_connection_error_on_the_connection() {
    let mut b = hello();
    post_open(&mut b, 1);
    wire::window_update(&mut b, 1, 0);
    get(&mut b, 3);
    let (got, close) = talk(&b);
    assert_eq!(got.streams[&1].reset, Some(Code::Protocol as u32));
    assert!(!close && served(&got, 3), "only the stream ends");
    let mut b = hello();
    wire::window_update(&mut b, 0, 0);
    let (got, close) = talk(&b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::Protocol as u32));
}

#[test]
fn a_window_driven_below_zero_by_settings_sends_nothing_until_updates_restore_it() {
    let mut s = Session::with_limits(Proto::H2, limits());
    let mut out = Vec::new();
    // The 18-byte body goes 10 bytes under a window of 10; SETTINGS then shrinks the window
    // to 2, which leaves it at -8.
    let mut first = hello();
    wire::settings(&mut first, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 10)]);
    get(&mut first, 1);
    s.feed(&first, &mut out);
    let got = wire::read(&out);
    assert_eq!(got.streams[&1].body, b"<html>hell", "the window's 10 bytes of 18");
    out.clear();
    let mut shrink = Vec::new();
    wire::settings(&mut shrink, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 2)]);
    s.feed(&shrink, &mut out);
    // An update of 8 brings it to 0: still nothing to send.
    let mut update = Vec::new();
    wire::window_update(&mut update, 1, 8);
    s.feed(&update, &mut out);
    assert!(
        wire::read(&out).streams.get(&1).is_none_or(|s| s.body.is_empty()),
        "nothing below or at zero"
    );
    out.clear();
    let mut update = Vec::new();
    wire::window_update(&mut update, 1, 100);
    s.feed(&update, &mut out);
    let got = wire::read(&out);
    assert_eq!(got.streams[&1].body, b"o</html>", "the rest once it is restored");
    assert!(got.streams[&1].ended);
}

#[test]
fn h2load_like_traffic_spends_no_budget() {
    // 100 streams at a time, ten rounds: requests, their connection's WINDOW_UPDATE and a
    // SETTINGS ACK, as h2load sends them: 1,022 quiet frames, well under 10,000.
    // And a PRIORITY_UPDATE (type 0x10, unknown here) per request, as browsers send.
    let mut b = hello();
    wire::frame(&mut b, frame::SETTINGS, frame::ACK, 0, b"");
    for round in 0..10u32 {
        for k in 0..100 {
            let id = 1 + 2 * (round * 100 + k);
            wire::frame(&mut b, 0x10, 0, 0, &id.to_be_bytes());
            get(&mut b, id);
        }
        wire::window_update(&mut b, 0, 1 << 20);
    }
    let (got, close, requests) = talk_with(limits(), &b);
    assert!(!close && got.goaway.is_none());
    assert_eq!(requests, 1000);
}

#[test]
fn resets_of_open_streams_count_as_rapid_reset_too() {
    // GET without END_STREAM: answered, still open on the client's side, then reset.
    let mut b = hello();
    for k in 0..300 {
        let id = 1 + 2 * k;
        wire::headers(&mut b, id, &wire::request_block("GET", "/", &[], Coding::Plain), false);
        wire::frame(&mut b, frame::RST_STREAM, 0, id, &(Code::Cancel as u32).to_be_bytes());
    }
    let (got, close, requests) = talk_with(limits(), &b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::EnhanceYourCalm as u32));
    assert_eq!(requests, 201);
}

/// A budget of `rate` for quiet frames, the reset budgets off.
fn quiet_only(rate: &str) -> Limits {
    with_calm(Calm {
        client_resets: Rate::OFF,
        server_resets: Rate::OFF,
        quiet_frames: rate.parse().unwrap(),
    })
}

#[test]
fn padding_alone_resets_on_closed_streams_and_idle_window_updates_are_quiet_frames() {
    let floods: [(&str, Writer); 3] = [
        // PADDED with a pad length of 0: no body at all.
        (
            "padded empty DATA",
            Box::new(|b| wire::frame(b, frame::DATA, frame::PADDED, 1, &[0])),
        ),
        (
            "RST on a closed stream",
            Box::new(|b| wire::frame(b, frame::RST_STREAM, 0, 3, &[0, 0, 0, 8])),
        ),
        (
            "connection WINDOW_UPDATE of 1",
            Box::new(|b| wire::window_update(b, 0, 1)),
        ),
    ];
    for (name, each) in floods {
        let mut b = hello();
        post_open(&mut b, 1);
        get(&mut b, 3);
        for _ in 0..200 {
            each(&mut b);
        }
        let (got, close, _) = talk_with(quiet_only("100/10s"), &b);
        assert!(close, "{name}");
        assert_eq!(goaway_code(&got), Some(Code::EnhanceYourCalm as u32), "{name}");
    }
}

#[test]
fn refused_streams_count_as_resets_the_server_sends() {
    let mut b = hello();
    post_open(&mut b, 1);
    for k in 1..300 {
        get(&mut b, 1 + 2 * k);
    }
    let lim = Limits {
        max_streams: 1,
        ..limits()
    };
    let (got, close, _) = talk_with(lim, &b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::EnhanceYourCalm as u32));
    let refused = got
        .streams
        .values()
        .filter(|s| s.reset == Some(Code::RefusedStream as u32))
        .count();
    assert_eq!(refused, 201);
}

#[test]
fn a_refused_request_that_ended_takes_no_second_trailers() {
    // The 405 is held by a window of 0, so the stream stays; trailers end its request, and a
    // second block on it is on an ended request: STREAM_CLOSED.
    let mut b = hello();
    wire::settings(&mut b, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 0)]);
    wire::headers(
        &mut b,
        1,
        &wire::request_block("DELETE", "/", &[], Coding::Plain),
        false,
    );
    let trailers = wire::request_block("GET", "/", &[], Coding::Plain)[..0].to_vec();
    wire::headers(&mut b, 1, &trailers, true);
    wire::headers(&mut b, 1, &trailers, true);
    let (got, close) = talk(&b);
    assert!(!close);
    assert_eq!(got.streams[&1].status.as_deref(), Some("405"));
    assert_eq!(got.streams[&1].reset, Some(Code::StreamClosed as u32));
}

#[test]
fn a_header_blocks_connection_error_comes_with_its_headers_not_after_its_continuations() {
    // HEADERS as the very first frame (no SETTINGS), then more CONTINUATIONs than a block may
    // take: the preface's rule answers, at the HEADERS.
    let mut b = Vec::new();
    b.extend_from_slice(frame::PREFACE);
    wire::frame(
        &mut b,
        frame::HEADERS,
        frame::END_STREAM,
        1,
        &wire::request_block("GET", "/", &[], Coding::Plain),
    );
    for _ in 0..65 {
        wire::frame(&mut b, frame::CONTINUATION, 0, 1, b"");
    }
    let (got, close) = talk(&b);
    assert!(close);
    assert_eq!(goaway_code(&got), Some(Code::Protocol as u32));
}

#[test]
fn a_ping_dribbled_byte_by_byte_is_quiet_once_its_type_is_known() {
    let mut s = Session::with_limits(Proto::H2, limits());
    let mut out = Vec::new();
    s.feed(&hello(), &mut out);
    let mut ping = Vec::new();
    wire::frame(&mut ping, frame::PING, 0, 0, &[1; 8]);
    let quiet: Vec<bool> = ping
        .iter()
        .map(|b| s.feed(std::slice::from_ref(b), &mut out).quiet())
        .collect();
    assert_eq!(&quiet[..3], &[false; 3], "its type not known yet");
    assert!(quiet[3..].iter().all(|q| *q), "{quiet:?}");
    // A DATA frame dribbled is activity (a slow upload).
    let mut data = Vec::new();
    post_open(&mut data, 1);
    s.feed(&data, &mut out);
    let mut body = Vec::new();
    wire::data(&mut body, 1, b"abcdef", false);
    assert!(body.iter().all(|b| !s.feed(std::slice::from_ref(b), &mut out).quiet()));
}

#[test]
fn a_protocol_error_that_spends_the_last_of_a_budget_is_not_counted_as_the_budget() {
    let mut s = Session::with_limits(Proto::H2, quiet_only("1/10s"));
    let mut out = Vec::new();
    let mut b = hello();
    // The SETTINGS spends the one quiet frame; PRIORITY on stream 0 is a protocol error.
    wire::frame(&mut b, frame::PRIORITY, 0, 0, &[0, 0, 0, 0, 16]);
    let fed = s.feed(&b, &mut out);
    assert!(fed.close);
    assert_eq!(goaway_code(&wire::read(&out)), Some(Code::Protocol as u32));
    assert_eq!(fed.calm, None);
}

#[test]
fn window_updates_that_give_back_what_the_server_sent_are_never_quiet() {
    // A client that grants back each response's bytes as they come (curl and h2load do it per
    // chunk): 20,000 of them are bookkeeping, not a flood.
    let mut b = hello();
    for k in 0..20_000u32 {
        get(&mut b, 1 + 2 * k);
        wire::window_update(&mut b, 0, 18);
    }
    let (got, close, requests) = talk_with(limits(), &b);
    assert!(!close && got.goaway.is_none(), "{:?}", got.goaway);
    assert_eq!(requests, 20_000);
}
