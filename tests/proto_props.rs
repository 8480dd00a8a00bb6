//! Property tests of the sans-I/O sessions: the output never depends on how the input was split.

use muxlab::peer::h2::wire::{self, Coding};
use muxlab::proto::h2::frame;
use muxlab::proto::{Proto, Session};
use proptest::prelude::*;

/// Feeds `input` cut at `cuts` (positions, any order) and returns all output and the request count.
fn feed_split(proto: Proto, input: &[u8], cuts: &[usize]) -> (Vec<u8>, u64, bool) {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    points.push(0);
    points.push(input.len());
    points.sort_unstable();
    let mut s = Session::new(proto);
    let mut out = Vec::new();
    let (mut requests, mut close) = (0, false);
    for w in points.windows(2) {
        let fed = s.feed(&input[w[0]..w[1]], &mut out);
        requests += fed.requests;
        close |= fed.close;
    }
    (out, requests, close)
}

fn request() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![Just("GET"), Just("HEAD"), Just("POST"), Just("PUT")],
        "/[a-z0-9/]{0,20}",
        prop_oneof![Just("HTTP/1.1"), Just("HTTP/1.0")],
        prop::collection::vec(("[A-Za-z][A-Za-z-]{0,15}", "[ -~]{0,40}"), 0..6),
        prop_oneof![
            Just(""),
            Just("Connection: keep-alive\r\n"),
            Just("Connection: close\r\n")
        ],
        prop::option::of(prop::collection::vec(any::<u8>(), 0..40)),
        // Host: mostly one; sometimes none or two (refused in HTTP/1.1).
        prop_oneof![8 => Just(1usize), 1 => Just(0usize), 1 => Just(2usize)],
        // The body's framing: Content-Length, or chunked in pieces of these sizes with a trailer.
        prop::option::of(prop::collection::vec(1usize..9, 0..4)),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(method, path, version, headers, conn, body, hosts, chunks, expect)| {
            let mut r = format!("{method} {path} {version}\r\n");
            for _ in 0..hosts {
                r.push_str("Host: example.com:80\r\n");
            }
            for (k, v) in headers {
                if !["content-length", "connection", "transfer-encoding", "host", "expect"]
                    .iter()
                    .any(|h| k.eq_ignore_ascii_case(h))
                {
                    r.push_str(&format!("{k}: {}\r\n", v.trim()));
                }
            }
            r.push_str(conn);
            if expect {
                r.push_str("Expect: 100-continue\r\n");
            }
            let body = body.unwrap_or_default();
            let mut bytes = match chunks {
                Some(sizes) if !body.is_empty() => {
                    let mut b = format!("{r}Transfer-Encoding: chunked\r\n\r\n").into_bytes();
                    let mut rest = &body[..];
                    for size in sizes.into_iter().chain(std::iter::once(usize::MAX)) {
                        let piece = &rest[..size.min(rest.len())];
                        if piece.is_empty() {
                            break;
                        }
                        b.extend(format!("{:x};n=v\r\n", piece.len()).into_bytes());
                        b.extend(piece);
                        b.extend(b"\r\n");
                        rest = &rest[piece.len()..];
                    }
                    b.extend(b"0\r\nX-Sum: 1\r\n\r\n");
                    return b;
                }
                _ => format!("{r}Content-Length: {}\r\n\r\n", body.len()).into_bytes(),
            };
            bytes.extend(body);
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_split_of_a_request_stream_gives_the_same_responses(
        reqs in prop::collection::vec(request(), 1..8),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let stream = reqs.concat();
        let whole = feed_split(Proto::Http, &stream, &[]);
        let split = feed_split(Proto::Http, &stream, &cuts);
        prop_assert_eq!(&whole, &split);
        // Every request up to the first that closes is answered.
        prop_assert!(whole.1 >= 1);
    }

    #[test]
    fn any_split_of_garbage_gives_the_same_answer(
        junk in prop::collection::vec(any::<u8>(), 0..300),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
    ) {
        prop_assert_eq!(feed_split(Proto::Http, &junk, &[]), feed_split(Proto::Http, &junk, &cuts));
    }

    #[test]
    fn echo_returns_exactly_the_input_whatever_the_chunking(
        data in prop::collection::vec(any::<u8>(), 0..5000),
        cuts in prop::collection::vec(any::<usize>(), 0..50),
    ) {
        let (out, _, close) = feed_split(Proto::Echo, &data, &cuts);
        prop_assert_eq!(out, data);
        prop_assert!(!close);
    }

    #[test]
    fn packet_frames_are_answered_only_when_whole(
        size in 1usize..300,
        data in prop::collection::vec(any::<u8>(), 0..3000),
        cuts in prop::collection::vec(any::<usize>(), 0..50),
    ) {
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
        points.push(0);
        points.push(data.len());
        points.sort_unstable();
        let mut s = Session::new(Proto::Packet(size));
        let mut out = Vec::new();
        let mut frames = 0;
        for w in points.windows(2) {
            frames += s.feed(&data[w[0]..w[1]], &mut out).requests;
            // After any prefix, exactly the whole frames in it have been answered, in order.
            let whole = w[1] / size * size;
            prop_assert_eq!(out.len(), whole);
            prop_assert_eq!(&out[..], &data[..whole]);
        }
        prop_assert_eq!(frames as usize, data.len() / size);
    }
}

/// One client frame of an HTTP/2 conversation (stream ids are assigned in order).
#[derive(Debug, Clone)]
enum H2Step {
    Get(Coding),
    Post(Vec<u8>, bool),
    Data(Vec<u8>, bool),
    WindowUpdate(u32),
    Ping([u8; 8]),
    Settings(u32),
    Reset,
}

fn h2_step() -> impl Strategy<Value = H2Step> {
    prop_oneof![
        prop_oneof![Just(Coding::Plain), Just(Coding::Indexed)].prop_map(H2Step::Get),
        (prop::collection::vec(any::<u8>(), 0..300), any::<bool>()).prop_map(|(b, e)| H2Step::Post(b, e)),
        (prop::collection::vec(any::<u8>(), 0..3000), any::<bool>()).prop_map(|(b, e)| H2Step::Data(b, e)),
        (1u32..100_000).prop_map(H2Step::WindowUpdate),
        any::<[u8; 8]>().prop_map(H2Step::Ping),
        (0u32..100).prop_map(H2Step::Settings),
        Just(H2Step::Reset),
    ]
}

/// The bytes of a conversation: DATA, WINDOW_UPDATE and RST_STREAM go to the last stream opened.
fn h2_conversation(steps: &[H2Step]) -> Vec<u8> {
    let mut b = Vec::new();
    wire::preface(&mut b);
    let mut id = 0u32;
    for s in steps {
        match s {
            H2Step::Get(coding) => {
                id += 2 - u32::from(id == 0);
                wire::headers(
                    &mut b,
                    id,
                    &wire::request_block("GET", "/x?y=1", &[("accept", "*/*")], *coding),
                    true,
                );
            }
            H2Step::Post(body, end) => {
                id += 2 - u32::from(id == 0);
                wire::headers(
                    &mut b,
                    id,
                    &wire::request_block("POST", "/up", &[], Coding::Indexed),
                    false,
                );
                wire::data(&mut b, id, body, *end);
            }
            H2Step::Data(body, end) => wire::data(&mut b, id.max(1), body, *end),
            H2Step::WindowUpdate(n) => wire::window_update(&mut b, id, *n),
            H2Step::Ping(p) => wire::frame(&mut b, frame::PING, 0, 0, p),
            H2Step::Settings(w) => wire::settings(&mut b, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, *w)]),
            H2Step::Reset => wire::frame(&mut b, frame::RST_STREAM, 0, id.max(1), &8u32.to_be_bytes()),
        }
    }
    b
}

proptest! {
    /// HTTP/2 answers frame by frame: any split of a conversation (valid or not: DATA on a
    /// closed stream, windows overrun) gives the same bytes back, all of them whole frames.
    #[test]
    fn any_split_of_an_h2_conversation_gives_the_same_frames(
        steps in prop::collection::vec(h2_step(), 0..30),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        let input = h2_conversation(&steps);
        let whole = feed_split(Proto::H2, &input, &[]);
        let split = feed_split(Proto::H2, &input, &cuts);
        prop_assert_eq!(&whole, &split);
        let got = wire::read(&whole.0);
        prop_assert_eq!(got.trailing, 0);
        prop_assert!(got.problems.is_empty(), "{:?}", got.problems);
        // Every GET answered in full got hello.
        let mut id = 0u32;
        for s in &steps {
            if matches!(s, H2Step::Post(..) | H2Step::Get(_)) {
                id += 2 - u32::from(id == 0);
            }
            if let (H2Step::Get(_), Some(got)) = (s, got.streams.get(&id)) {
                if got.ended && got.reset.is_none() {
                    prop_assert_eq!(got.status.as_deref(), Some("200"));
                    prop_assert_eq!(&got.body[..], &b"<html>hello</html>"[..]);
                }
            }
        }
    }
}
