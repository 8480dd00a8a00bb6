//! Entry points of the fuzz targets (`fuzz/`, `cargo +nightly fuzz run NAME`): the parsers that
//! face the network or the user. Each checks the properties that must hold for any input and
//! panics when one does not. A stable `cargo test` (tests/fuzz_corpus.rs) replays the committed
//! corpus through the same functions, so a regression fails CI without nightly.

use crate::load::{HttpReader, Read};
use crate::proto::Protocol;
use crate::proto::{Proto, Session};

/// The limits the fuzz targets run under: small bodies, and HTTP/2 budgets small enough that
/// inputs of a few KiB reach past them.
fn fuzz_limits() -> crate::proto::Limits {
    use crate::proto::{Calm, Rate};
    let rate = |max| Rate {
        max,
        per: std::time::Duration::from_secs(10),
    };
    crate::proto::Limits {
        max_body: 4096,
        calm: Calm {
            client_resets: rate(8),
            server_resets: rate(8),
            quiet_frames: rate(64),
        },
        ..crate::proto::Limits::default()
    }
}

/// Feeds `data` to a fresh session whole, then split at `cut`, and returns both outputs.
fn whole_and_split(proto: Proto, data: &[u8], cut: usize) -> [(Vec<u8>, u64, bool); 2] {
    let run = |pieces: &[&[u8]]| {
        let mut s = Session::with_limits(proto, fuzz_limits());
        let (mut out, mut requests, mut close) = (Vec::new(), 0, false);
        for p in pieces {
            let fed = s.feed(p, &mut out);
            requests += fed.requests;
            close |= fed.close;
        }
        (out, requests, close)
    };
    let cut = cut.min(data.len());
    [run(&[data]), run(&[&data[..cut], &data[cut..]])]
}

/// The HTTP session: any request stream, split anywhere, gives the same responses; every
/// response is a well-formed HTTP/1.1 status line; nothing panics.
pub fn http_session(data: &[u8]) {
    let Some((&c, rest)) = data.split_first() else { return };
    let [whole, split] = whole_and_split(Proto::Http, rest, c as usize * rest.len() / 255);
    assert_eq!(whole, split, "the responses depend on how the stream was split");
    if !whole.0.is_empty() {
        assert!(whole.0.starts_with(b"HTTP/1.1 "), "a response that is not HTTP/1.1");
    }
}

/// The HTTP/2 session: any frames after the client preface, split anywhere, give the same
/// output (the session answers frame by frame, whatever the reads); that output is whole,
/// decodable frames; nothing panics.
pub fn h2_session(data: &[u8]) {
    let Some((&c, rest)) = data.split_first() else { return };
    let mut input = Vec::with_capacity(rest.len() + 33);
    crate::peer::h2::wire::preface(&mut input);
    input.extend_from_slice(rest);
    let cut = c as usize * input.len() / 255;
    let [whole, split] = whole_and_split(Proto::H2, &input, cut);
    assert_eq!(whole, split, "the output depends on how the stream was split");
    let got = crate::peer::h2::wire::read(&whole.0);
    assert_eq!(got.trailing, 0, "the output ends inside a frame");
    assert!(got.problems.is_empty(), "{:?}", got.problems);
}

/// The load generator's HTTP/2 session: any server bytes after a SETTINGS frame, split
/// anywhere, give the same events, the same fault and the same output (acknowledgements,
/// window updates, bodies the windows let go), which is whole frames; nothing panics.
pub fn h2_client(data: &[u8]) {
    use crate::load::h2::{H2Class, H2Conn, H2Plan};
    use crate::load::Payload;
    use crate::peer::h2::wire;
    use crate::proto::h2::frame;
    let Some((&c, rest)) = data.split_first() else { return };
    let mut input = Vec::with_capacity(rest.len() + 9);
    wire::settings(&mut input, &[]);
    input.extend_from_slice(rest);
    let cut = c as usize * input.len() / 255;
    let plan = std::sync::Arc::new(H2Plan {
        classes: vec![H2Class::new("POST", "http", "t", "/", &[], Payload::Generated(3000))],
        head_only: false,
        verify: Some(3000),
        sse: false,
    });
    let run = |pieces: &[&[u8]]| {
        let mut conn = H2Conn::new(plan.clone(), 7);
        let mut out = Vec::new();
        conn.start(&mut out);
        for k in 0..5 {
            conn.open(&mut out, 0, k);
        }
        let mut events = Vec::new();
        let mut fault = None;
        for p in pieces {
            if let Err(f) = conn.push(p, &mut out, &mut events) {
                fault = Some(f);
                break;
            }
        }
        (out, events, fault)
    };
    let whole = run(&[&input]);
    let split = run(&[&input[..cut], &input[cut..]]);
    assert_eq!(whole, split, "the session depends on how the server's bytes were split");
    let mut b = &whole.0[frame::PREFACE.len()..];
    while b.len() >= frame::HEADER_LEN {
        let h = frame::Head::parse(b);
        assert!(b.len() >= frame::HEADER_LEN + h.len, "the output ends inside a frame");
        b = &b[frame::HEADER_LEN + h.len..];
    }
    assert!(b.is_empty(), "the output ends inside a frame header");
}

/// A hook that runs keyed commands against a table of its own (what a server with `--store
/// owned` does), with the output bounded at `room` bytes a feed.
struct Keyed {
    table: crate::store::Table,
    /// One clock for the whole and the split run (an expiry must not fall between them).
    now: std::time::Instant,
}

impl crate::proto::Each for Keyed {
    fn request(&mut self, _: crate::proto::Request<'_>, _: &mut Vec<u8>) -> crate::proto::Answer {
        crate::proto::Answer::Serve
    }

    fn command(
        &mut self,
        op: crate::proto::keyed::Op<'_>,
        replies: &mut dyn crate::proto::keyed::Replies,
    ) -> crate::proto::keyed::Outcome {
        self.table.run(op, self.now, replies)
    }
}

/// Feeds `data` to a fresh keyed session (a value over 64 bytes is past `--max-value`) whole,
/// then split at `cut`: both outputs, the commands answered and whether it closed.
fn keyed_whole_and_split(proto: Proto, data: &[u8], cut: usize) -> [(Vec<u8>, u64, bool); 2] {
    let now = std::time::Instant::now();
    let run = |pieces: &[&[u8]]| {
        let limits = crate::proto::Limits {
            max_value: 64,
            ..fuzz_limits()
        };
        let mut s = Session::with_limits(proto, limits);
        let mut each = Keyed {
            table: crate::store::Table::new(),
            now,
        };
        let (mut out, mut requests, mut close) = (Vec::new(), 0, false);
        for p in pieces {
            let fed = s.feed_each(p, &mut out, &mut each);
            requests += fed.requests;
            close |= fed.close;
        }
        (out, requests, close)
    };
    let cut = cut.min(data.len());
    [run(&[data]), run(&[&data[..cut], &data[cut..]])]
}

/// The RESP session: any command stream, split anywhere, gives the same replies, each a RESP
/// reply (`+`, `-`, `:`, `$` or `*` first); nothing panics. (TTLs are not in the corpus: the
/// replies would depend on the clock.)
pub fn resp_session(data: &[u8]) {
    let Some((&c, rest)) = data.split_first() else { return };
    let [whole, split] = keyed_whole_and_split(Proto::Resp, rest, c as usize * rest.len() / 255);
    assert_eq!(whole, split, "the replies depend on how the stream was split");
    if let Some(first) = whole.0.first() {
        assert!(b"+-:$*".contains(first), "a reply that is not RESP");
    }
}

/// The memcache session: any command stream, split anywhere, gives the same replies; nothing
/// panics.
pub fn memcache_session(data: &[u8]) {
    let Some((&c, rest)) = data.split_first() else { return };
    let [whole, split] = keyed_whole_and_split(Proto::Memcache, rest, c as usize * rest.len() / 255);
    assert_eq!(whole, split, "the replies depend on how the stream was split");
    assert!(
        whole.0.is_empty() || whole.0.ends_with(b"\r\n"),
        "a reply line not ended"
    );
}

/// Packet framing: every whole frame is answered, once, in order; the split does not matter.
pub fn packet_framing(data: &[u8]) {
    let [a, b, rest @ ..] = data else { return };
    let size = (*a as usize % 64) + 1;
    let [whole, split] = whole_and_split(Proto::Packet(size), rest, *b as usize * rest.len() / 255);
    assert_eq!(whole, split, "the frames depend on how the stream was split");
    let frames = rest.len() / size;
    assert_eq!(whole.1 as usize, frames);
    assert_eq!(whole.0, rest[..frames * size], "frames answered other than sent");
}

/// The load generator's HTTP response reader: any byte stream, split anywhere, reads as the
/// same sequence of responses; it never panics and never loops.
pub fn http_response(data: &[u8]) {
    let Some((&c, rest)) = data.split_first() else { return };
    let cut = (c as usize * rest.len() / 255).min(rest.len());
    let read = |pieces: &[&[u8]]| {
        let mut r = HttpReader::new(false);
        let mut seen = Vec::new();
        'feed: for p in pieces {
            r.push(p);
            loop {
                match r.next_response() {
                    Read::More => break,
                    done @ Read::Done { .. } => seen.push(done),
                    end => {
                        seen.push(end);
                        break 'feed;
                    }
                }
                assert!(seen.len() <= data.len(), "more responses than bytes");
            }
        }
        seen
    };
    assert_eq!(
        read(&[rest]),
        read(&[&rest[..cut], &rest[cut..]]),
        "the responses depend on the split"
    );
}

/// The scenario TOML loader: any text gives a scenario or an error naming where, never a panic.
pub fn scenario_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = crate::bench::record::scenario::parse(text, "fuzz.toml") {
        assert!(
            e.to_string().starts_with("fuzz.toml"),
            "an error that does not say where: {e}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The corpus reaches past every HTTP/2 budget (under the fuzz targets' small ones): the
    /// seeds named for a flood end their connection with GOAWAY ENHANCE_YOUR_CALM, the window
    /// driven below zero does not.
    #[test]
    fn the_h2_corpus_reaches_past_every_budget() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/h2_session");
        let calm = crate::proto::h2::frame::Code::EnhanceYourCalm as u32;
        for (seed, ends) in [
            ("rapid_reset", true),
            ("made_you_reset", true),
            ("ping_flood", true),
            ("empty_data_flood", true),
            ("priority_flood", true),
            ("unknown_flood", true),
            ("closed_window_updates", true),
            ("continuation_flood", true),
            ("negative_window", false),
        ] {
            let data = std::fs::read(dir.join(format!("{seed}_0"))).unwrap();
            let mut input = Vec::new();
            crate::peer::h2::wire::preface(&mut input);
            input.extend_from_slice(&data[1..]);
            let [(out, _, close), _] = whole_and_split(Proto::H2, &input, 0);
            let got = crate::peer::h2::wire::read(&out);
            let calmed = got.goaway.is_some_and(|(_, code)| code == calm);
            assert_eq!((calmed, close), (ends, ends), "{seed}: {:?}", got.goaway);
        }
    }
}
