//! The client session against muxlab's server session (`proto::h2`, fed in process) and
//! against frames written by hand: what a server may do, and what must break the connection.

use std::sync::Arc;

use super::*;
use crate::load::Payload;
use crate::peer::h2::wire;
use crate::proto::h2::frame::{self, Head};
use crate::proto::h2::hpack;
use crate::proto::{Limits, Proto, Session};

fn plan(method: &str, payload: Payload, headers: &[&str]) -> Arc<H2Plan> {
    let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    let verify = match payload {
        Payload::Generated(n) => Some(n),
        _ => None,
    };
    Arc::new(H2Plan {
        classes: vec![H2Class::new(method, "http", "127.0.0.1:80", "/", &headers, payload)],
        head_only: method == "HEAD",
        verify,
        sse: false,
    })
}

fn server() -> Session {
    Session::with_limits(
        Proto::H2,
        Limits {
            max_body: 1 << 20,
            max_output: 256 * 1024,
            max_streams: 100,
            ..Limits::default()
        },
    )
}

/// Moves bytes both ways until nothing moves; returns every event the client saw.
fn converse(c: &mut H2Conn, s: &mut Session, mut to_server: Vec<u8>, cut: usize) -> Vec<Event> {
    let mut events = Vec::new();
    for _ in 0..10_000 {
        if to_server.is_empty() {
            break;
        }
        let mut to_client = Vec::new();
        s.feed(&std::mem::take(&mut to_server), &mut to_client);
        // The server's bytes arrive in pieces of `cut`.
        for piece in to_client.chunks(cut.max(1)) {
            c.push(piece, &mut to_server, &mut events)
                .expect("the server's frames are good");
        }
    }
    events
}

fn done(events: &[Event]) -> Vec<(u32, u16)> {
    let mut d: Vec<(u32, u16)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Done { id, status } => Some((*id, *status)),
            _ => None,
        })
        .collect();
    d.sort();
    d
}

#[test]
fn gets_complete_on_their_streams_and_later_header_blocks_are_a_few_indices() {
    for cut in [1, 7, 100_000] {
        let mut c = H2Conn::new(plan("GET", Payload::None, &["Accept: */*", "X-Trace: abc"]), 3);
        let mut s = server();
        let mut out = Vec::new();
        c.start(&mut out);
        let ids: Vec<u32> = (0..3).map(|k| c.open(&mut out, 0, k)).collect();
        assert_eq!(ids, [1, 3, 5]);
        let first = c.counts.request_block;
        let events = converse(&mut c, &mut s, out, cut);
        assert_eq!(done(&events), [(1, 200), (3, 200), (5, 200)], "cut {cut}");
        assert_eq!(c.open_streams(), 0);
        // The first block put the fields in the server's table; the next ones refer to them.
        let mut out = Vec::new();
        let before = c.counts.request_block;
        c.open(&mut out, 0, 3);
        let again = c.counts.request_block - before;
        assert!(
            again <= 6 && first > 3 * again,
            "first three {first} B, a later one {again} B"
        );
        assert_eq!(done(&converse(&mut c, &mut s, out, cut)), [(7, 200)]);
        // HPACK's yardstick: the same request's head as HTTP/1.1 sends it.
        let h1 = "GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\nAccept: */*\r\nX-Trace: abc\r\n\r\n";
        assert_eq!(c.counts.request_text, 4 * h1.len() as u64);
    }
}

#[test]
fn bodies_larger_than_every_window_are_sent_within_them_and_their_echo_verified() {
    let size = 300_000;
    let mut c = H2Conn::new(plan("POST", Payload::Generated(size), &[]), 9);
    let mut s = server();
    let mut out = Vec::new();
    c.start(&mut out);
    for k in 0..4 {
        c.open(&mut out, 0, k);
    }
    let events = converse(&mut c, &mut s, out, 1000);
    assert_eq!(done(&events), [(1, 200), (3, 200), (5, 200), (7, 200)]);
}

#[test]
fn one_flipped_byte_of_an_echoed_body_is_a_mismatch() {
    let size = 5000;
    let mut c = H2Conn::new(plan("POST", Payload::Generated(size), &[]), 9);
    let mut s = server();
    let mut out = Vec::new();
    c.start(&mut out);
    c.open(&mut out, 0, 0);
    let mut back = Vec::new();
    s.feed(&out, &mut back);
    // Flip the last byte of the echoed body's DATA frame.
    let (mut at, mut flip) = (0, None);
    for (kind, len) in frames(&back) {
        at += frame::HEADER_LEN + len;
        if kind == frame::DATA && len > 0 {
            flip = Some(at - 1);
        }
    }
    back[flip.expect("the body came back")] ^= 1;
    let r = c.push(&back, &mut Vec::new(), &mut Vec::new());
    assert_eq!(r, Err(Fault::Mismatch));
}

/// A response's header block: `:status` and an optional content-length.
fn response(status: &str, length: Option<usize>) -> Vec<u8> {
    let mut b = Vec::new();
    match status {
        "200" => hpack::put_indexed(&mut b, hpack::STATUS),
        s => hpack::put_literal(&mut b, hpack::STATUS, s.as_bytes()),
    }
    if let Some(l) = length {
        hpack::put_literal(&mut b, hpack::CONTENT_LENGTH, l.to_string().as_bytes());
    }
    b
}

/// A client that sent `n` GETs, and the server's preface.
fn started(n: u32) -> (H2Conn, Vec<u8>) {
    let mut c = H2Conn::new(plan("GET", Payload::None, &[]), 1);
    let mut out = Vec::new();
    c.start(&mut out);
    for k in 0..n {
        c.open(&mut out, 0, u64::from(k));
    }
    let mut s = Vec::new();
    wire::settings(&mut s, &[]);
    (c, s)
}

#[test]
fn settings_lower_the_streams_the_window_and_raise_the_frame_size() {
    let (mut c, mut s) = started(0);
    wire::settings(
        &mut s,
        &[
            (frame::SETTINGS_MAX_CONCURRENT_STREAMS, 2),
            (frame::SETTINGS_INITIAL_WINDOW_SIZE, 1000),
            (frame::SETTINGS_MAX_FRAME_SIZE, 20_000),
        ],
    );
    let mut out = Vec::new();
    c.push(&s, &mut out, &mut Vec::new()).unwrap();
    // Each SETTINGS is acknowledged.
    let acks = out
        .windows(5)
        .filter(|w| w == &[0, 0, 0, frame::SETTINGS, frame::ACK])
        .count();
    assert_eq!(acks, 2);
    assert_eq!(c.room(), 2);
    // A body goes out within the stream's window of 1000, and the rest when it opens.
    let mut c2 = H2Conn::new(plan("POST", Payload::Fixed(vec![7; 50_000]), &[]), 1);
    let mut out = Vec::new();
    c2.start(&mut out);
    c2.push(&s, &mut Vec::new(), &mut Vec::new()).unwrap();
    let mut out = Vec::new();
    c2.open(&mut out, 0, 0);
    let sent = |b: &[u8]| wire_data(b);
    assert_eq!(sent(&out), 1000);
    let mut more = Vec::new();
    wire::window_update(&mut more, 1, 30_000);
    let mut out = Vec::new();
    c2.push(&more, &mut out, &mut Vec::new()).unwrap();
    // The connection's window (65,535, less the 1,000 already sent) is the limit now; frames
    // are at most 20,000 bytes.
    assert_eq!(sent(&out), 30_000);
    assert!(frames(&out)
        .iter()
        .all(|&(kind, len)| kind != frame::DATA || len <= 20_000));
}

/// (type, length) of each frame in `b`.
fn frames(mut b: &[u8]) -> Vec<(u8, usize)> {
    let mut v = Vec::new();
    while b.len() >= frame::HEADER_LEN {
        let h = Head::parse(b);
        v.push((h.kind, h.len));
        b = &b[frame::HEADER_LEN + h.len..];
    }
    v
}

/// DATA bytes in `b`.
fn wire_data(b: &[u8]) -> usize {
    frames(b).iter().filter(|f| f.0 == frame::DATA).map(|f| f.1).sum()
}

#[test]
fn refusals_resets_and_goaway_come_out_as_events() {
    let (mut c, mut s) = started(4);
    wire::frame(
        &mut s,
        frame::RST_STREAM,
        0,
        1,
        &(frame::Code::RefusedStream as u32).to_be_bytes(),
    );
    wire::frame(&mut s, frame::RST_STREAM, 0, 3, &2u32.to_be_bytes());
    let mut g = 5u32.to_be_bytes().to_vec();
    g.extend_from_slice(&0u32.to_be_bytes());
    wire::frame(&mut s, frame::GOAWAY, 0, 0, &g);
    let mut events = Vec::new();
    c.push(&s, &mut Vec::new(), &mut events).unwrap();
    assert_eq!(
        events,
        [
            Event::Refused { id: 1 },
            Event::Reset { id: 3, code: 2 },
            Event::GoAway { last: 5, code: 0 }
        ]
    );
    // Stream 7 is forgotten; stream 5 still completes; no stream may open.
    assert_eq!((c.open_streams(), c.room(), c.closing()), (1, 0, true));
    let mut s = Vec::new();
    wire::headers(&mut s, 5, &response("200", Some(0)), true);
    let mut events = Vec::new();
    c.push(&s, &mut Vec::new(), &mut events).unwrap();
    assert_eq!(events, [Event::Done { id: 5, status: 200 }]);
}

#[test]
fn continuation_padding_and_an_interim_response_are_read_through() {
    let (mut c, mut s) = started(1);
    wire::headers(&mut s, 1, &response("100", None), false);
    let block = response("200", Some(5));
    let (a, b) = block.split_at(1);
    wire::frame(&mut s, frame::HEADERS, 0, 1, a);
    wire::frame(&mut s, frame::CONTINUATION, frame::END_HEADERS, 1, b);
    let mut padded = vec![3];
    padded.extend_from_slice(b"hello");
    padded.extend_from_slice(&[0, 0, 0]);
    wire::frame(&mut s, frame::DATA, frame::END_STREAM | frame::PADDED, 1, &padded);
    let mut events = Vec::new();
    // Byte by byte: every frame split everywhere.
    for b in s.chunks(1) {
        c.push(b, &mut Vec::new(), &mut events).unwrap();
    }
    assert_eq!(events, [Event::Done { id: 1, status: 200 }]);
}

#[test]
fn a_ping_is_answered_and_trailers_end_a_response() {
    let (mut c, mut s) = started(1);
    wire::frame(&mut s, frame::PING, 0, 0, b"12345678");
    wire::headers(&mut s, 1, &response("200", None), false);
    wire::data(&mut s, 1, b"body", false);
    let mut trailers = Vec::new();
    hpack::put_literal(&mut trailers, hpack::SERVER, b"t");
    wire::headers(&mut s, 1, &trailers, true);
    let (mut out, mut events) = (Vec::new(), Vec::new());
    c.push(&s, &mut out, &mut events).unwrap();
    assert_eq!(events, [Event::Done { id: 1, status: 200 }]);
    // The PING comes back with its payload, flagged ACK.
    let mut pong = Vec::new();
    frame::head(&mut pong, 8, frame::PING, frame::ACK, 0);
    pong.extend_from_slice(b"12345678");
    assert!(out.windows(pong.len()).any(|w| w == pong), "no PING ACK");
    // Trailers without END_STREAM are not trailers.
    let (mut c, mut s) = started(1);
    wire::headers(&mut s, 1, &response("200", None), false);
    wire::headers(&mut s, 1, &trailers, false);
    assert_eq!(
        c.push(&s, &mut Vec::new(), &mut Vec::new()),
        Err(Fault::Violation(Violation::SecondHead))
    );
}

#[test]
fn what_breaks_the_protocol_is_a_fault_that_says_what() {
    use crate::proto::h2::frame::ReadError;
    let broke = Fault::Violation;
    let cases: Vec<(Fault, &str, Vec<u8>)> = vec![
        (
            broke(Violation::Http1),
            "HTTP/1.x",
            b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec(),
        ),
        (broke(Violation::FirstNotSettings), "not SETTINGS", {
            let mut b = Vec::new();
            wire::frame(&mut b, frame::PING, 0, 0, &[0; 8]);
            b
        }),
        (broke(Violation::LengthNotContentLength), "content-length", {
            let (_, mut b) = started(0);
            wire::headers(&mut b, 1, &response("200", Some(10)), false);
            wire::data(&mut b, 1, b"short", true);
            b
        }),
        (broke(Violation::NeverOpened), "never opened", {
            let (_, mut b) = started(0);
            wire::headers(&mut b, 9, &response("200", None), true);
            b
        }),
        (broke(Violation::PushPromise), "PUSH_PROMISE", {
            let (_, mut b) = started(0);
            wire::frame(&mut b, frame::PUSH_PROMISE, frame::END_HEADERS, 1, &[0, 0, 0, 2]);
            b
        }),
        (broke(Violation::DataBeforeHeaders), "before the response", {
            let (_, mut b) = started(0);
            wire::data(&mut b, 1, b"x", true);
            b
        }),
        (
            broke(Violation::Padding {
                code: frame::Code::Protocol,
            }),
            "bad padding",
            {
                // DATA whose pad length (5) is past its payload (1 byte): the code it calls for
                // is kept.
                let (_, mut b) = started(0);
                frame::head(&mut b, 1, frame::DATA, frame::PADDED, 1);
                b.push(5);
                b
            },
        ),
        (Fault::Frame(ReadError::FrameTooLarge), "larger than", {
            let (_, mut b) = started(0);
            frame::head(&mut b, 20_000, frame::DATA, 0, 1);
            b.resize(b.len() + 20_000, 0);
            b
        }),
    ];
    for (fault, what, bytes) in cases {
        let (mut c, _) = started(1);
        let got = c.push(&bytes, &mut Vec::new(), &mut Vec::new());
        assert_eq!(got, Err(fault), "{what}");
        let said = fault.to_string();
        assert!(said.contains(what), "{what}: said {said}");
    }
}

#[test]
fn a_server_table_of_zero_gets_a_size_update_and_literals_only() {
    let (mut c, mut s) = started(0);
    wire::settings(&mut s, &[(0x1, 0)]);
    c.push(&s, &mut Vec::new(), &mut Vec::new()).unwrap();
    let mut out = Vec::new();
    c.open(&mut out, 0, 0);
    let block = &out[frame::HEADER_LEN..];
    // Two size updates (to 0, then the new limit 0), then no field that indexes (01xxxxxx).
    assert_eq!(&block[..2], &[0x20, 0x20]);
    let mut d = hpack::Decoder::new();
    let mut fields = Vec::new();
    d.decode(block, usize::MAX, &mut |n, v| fields.push((n.to_vec(), v.to_vec())))
        .unwrap();
    assert_eq!(fields, c.plan.classes[0].fields);
    // The next block is the same size: nothing was added to a table.
    let mut again = Vec::new();
    c.open(&mut again, 0, 1);
    assert_eq!(again.len(), out.len() - 2);
}

#[test]
fn blocks_decode_to_the_fields_whatever_the_table_holds() {
    let mut plan = (*plan(
        "GET",
        Payload::None,
        &["Host: example.test", "Accept: */*", "Connection: close"],
    ))
    .clone();
    plan.classes.push(H2Class::new(
        "POST",
        "http",
        "example.test",
        "/up",
        &[],
        Payload::Fixed(b"abc".to_vec()),
    ));
    let plan = Arc::new(plan);
    let mut c = H2Conn::new(plan.clone(), 1);
    let mut d = hpack::Decoder::new();
    for class in [0u8, 1, 0, 1, 1, 0] {
        let mut out = Vec::new();
        c.open(&mut out, class, 0);
        let len = Head::parse(&out).len;
        let mut fields = Vec::new();
        d.decode(
            &out[frame::HEADER_LEN..frame::HEADER_LEN + len],
            usize::MAX,
            &mut |n, v| fields.push((n.to_vec(), v.to_vec())),
        )
        .unwrap();
        assert_eq!(fields, plan.classes[usize::from(class)].fields, "class {class}");
    }
    // Host became :authority; the connection header is HTTP/1.1's and left out.
    let f = &plan.classes[0].fields;
    assert!(f.contains(&(b":authority".to_vec(), b"example.test".to_vec())));
    assert!(!f.iter().any(|(n, _)| n == b"host" || n == b"connection"));
}
