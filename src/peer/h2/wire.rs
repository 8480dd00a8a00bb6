//! The client's side of the wire, for tests, the fuzz target and tools: frames and request
//! header blocks as a client writes them, and a server's output read back into what each
//! stream got.

use std::collections::BTreeMap;

use crate::proto::h2::frame::{self, Head};
use crate::proto::h2::hpack::{self, huffman};

/// Appends one frame.
pub fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    frame::head(out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
}

/// The client preface and an empty SETTINGS frame.
pub fn preface(out: &mut Vec<u8>) {
    out.extend_from_slice(frame::PREFACE);
    frame(out, frame::SETTINGS, 0, 0, &[]);
}

/// How a header block writes its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// Literal names and values, not indexed.
    Plain,
    /// Literal fields added to the dynamic table, values Huffman-coded (later blocks of the
    /// same connection may refer to them).
    Indexed,
}

/// A request's header block: the pseudo-headers, then `extra` fields.
pub fn request_block(method: &str, path: &str, extra: &[(&str, &str)], coding: Coding) -> Vec<u8> {
    let mut b = Vec::new();
    let fields = [
        (":method", method),
        (":scheme", "http"),
        (":path", path),
        (":authority", "t"),
    ];
    for (name, value) in fields.iter().chain(extra) {
        field(&mut b, name.as_bytes(), value.as_bytes(), coding);
    }
    b
}

/// Appends one literal field.
pub fn field(b: &mut Vec<u8>, name: &[u8], value: &[u8], coding: Coding) {
    match coding {
        Coding::Plain => {
            b.push(0x00);
            hpack::put_integer(b, 0x00, 7, name.len());
            b.extend_from_slice(name);
            hpack::put_integer(b, 0x00, 7, value.len());
            b.extend_from_slice(value);
        }
        Coding::Indexed => {
            b.push(0x40);
            hpack::put_integer(b, 0x00, 7, name.len());
            b.extend_from_slice(name);
            hpack::put_integer(b, 0x80, 7, huffman::encoded_len(value));
            huffman::encode(value, b);
        }
    }
}

/// Appends a HEADERS frame carrying `block` whole.
pub fn headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool) {
    let flags = frame::END_HEADERS | if end_stream { frame::END_STREAM } else { 0 };
    frame(out, frame::HEADERS, flags, stream, block);
}

/// Appends a DATA frame.
pub fn data(out: &mut Vec<u8>, stream: u32, body: &[u8], end_stream: bool) {
    frame(
        out,
        frame::DATA,
        if end_stream { frame::END_STREAM } else { 0 },
        stream,
        body,
    );
}

/// Appends a WINDOW_UPDATE frame.
pub fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    frame::window_update(out, stream, increment);
}

/// Appends a SETTINGS frame.
pub fn settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    frame::settings(out, pairs);
}

/// What one stream got back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamGot {
    /// The response's `:status`, and its other fields.
    pub status: Option<String>,
    pub fields: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// END_STREAM came.
    pub ended: bool,
    /// RST_STREAM's error code.
    pub reset: Option<u32>,
}

/// A server's output read back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Got {
    pub streams: BTreeMap<u32, StreamGot>,
    /// GOAWAY's last stream and error code.
    pub goaway: Option<(u32, u32)>,
    /// SETTINGS frames, and their ACKs.
    pub settings: usize,
    pub settings_acks: usize,
    /// PING ACK payloads.
    pub pongs: Vec<[u8; 8]>,
    /// Window granted on the connection (stream 0) and per stream, and the WINDOW_UPDATE
    /// frames that granted it.
    pub granted: BTreeMap<u32, u64>,
    pub window_updates: usize,
    /// The server's SETTINGS_INITIAL_WINDOW_SIZE, if its SETTINGS said one.
    pub initial_window: Option<u32>,
    /// Bytes after the last whole frame (none when the server's output ended cleanly).
    pub trailing: usize,
    /// A header block that did not decode, or a frame no server sends.
    pub problems: Vec<String>,
}

/// Reads a server's output (all of it, from its first byte).
pub fn read(mut b: &[u8]) -> Got {
    let mut got = Got::default();
    let mut dec = hpack::Decoder::new();
    while b.len() >= frame::HEADER_LEN {
        let h = Head::parse(b);
        if b.len() < frame::HEADER_LEN + h.len {
            break;
        }
        let p = &b[frame::HEADER_LEN..frame::HEADER_LEN + h.len];
        b = &b[frame::HEADER_LEN + h.len..];
        match h.kind {
            frame::SETTINGS if h.flags & frame::ACK != 0 => got.settings_acks += 1,
            frame::SETTINGS => {
                got.settings += 1;
                for pair in p.chunks_exact(6) {
                    if u16::from_be_bytes([pair[0], pair[1]]) == frame::SETTINGS_INITIAL_WINDOW_SIZE {
                        got.initial_window = Some(u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]));
                    }
                }
            }
            frame::PING => {
                let mut x = [0u8; 8];
                x.copy_from_slice(&p[..8.min(p.len())]);
                got.pongs.push(x);
            }
            frame::GOAWAY => {
                got.goaway = Some((
                    u32::from_be_bytes([p[0], p[1], p[2], p[3]]),
                    u32::from_be_bytes([p[4], p[5], p[6], p[7]]),
                ))
            }
            frame::WINDOW_UPDATE => {
                let inc = u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
                *got.granted.entry(h.stream).or_default() += u64::from(inc);
                got.window_updates += 1;
            }
            frame::RST_STREAM => {
                got.streams.entry(h.stream).or_default().reset = Some(u32::from_be_bytes([p[0], p[1], p[2], p[3]]))
            }
            frame::HEADERS => {
                let s = got.streams.entry(h.stream).or_default();
                let mut fields = Vec::new();
                if dec
                    .decode(p, usize::MAX, &mut |n, v| {
                        fields.push((
                            String::from_utf8_lossy(n).into_owned(),
                            String::from_utf8_lossy(v).into_owned(),
                        ))
                    })
                    .is_err()
                {
                    got.problems
                        .push(format!("stream {}: a header block that does not decode", h.stream));
                }
                for (n, v) in fields {
                    if n == ":status" {
                        s.status = Some(v);
                    } else {
                        s.fields.push((n, v));
                    }
                }
                s.ended |= h.flags & frame::END_STREAM != 0;
            }
            frame::DATA => {
                let s = got.streams.entry(h.stream).or_default();
                s.body.extend_from_slice(p);
                s.ended |= h.flags & frame::END_STREAM != 0;
            }
            k => got.problems.push(format!("a frame of type {k} from a server")),
        }
    }
    got.trailing = b.len();
    got
}
