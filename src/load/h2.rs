//! The client's side of HTTP/2 (RFC 9113) for the load generator: one connection's session.
//! It writes the preface and each request's HEADERS (HPACK-coded against the server's table)
//! and DATA (within the server's windows and frame size), reads the server's frames, answers
//! SETTINGS and PING, keeps our receive windows open, and checks every response: its status,
//! its length against `content-length`, an echoed body byte for byte. What the engine must act
//! on comes out as [`Event`]s; a broken connection as a [`Fault`].
//!
//! The frame, HPACK and Huffman code is the server's (`proto::h2`).

use std::sync::Arc;

use super::request::{pattern, Payload};
use crate::proto::h2::frame::{self, Head};
use crate::proto::h2::hpack;

/// Our receive windows, per stream and for the connection: large, so a server never waits on
/// this client (h2load's default is the same, 2^30 - 1).
pub const RECV_WINDOW: u32 = (1 << 30) - 1;
/// The server's limit until its SETTINGS say otherwise (RFC 9113 6.5.2: unlimited; this
/// client opens one stream before they come, see `room`).
const ASSUMED_STREAMS: u32 = u32::MAX;
/// The largest response header list we accept.
const MAX_HEADER_LIST: usize = 64 * 1024;
/// The last client stream identifier (2^31 - 1): a connection that reaches it is done.
const LAST_ID: u32 = 0x7fff_ffff;

/// One request class as HTTP/2 sends it: its header fields and body.
#[derive(Debug, Clone)]
pub struct H2Class {
    /// Names lowercase, pseudo-headers first.
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
    pub payload: Payload,
    /// The bytes of the same request's head in HTTP/1.1 (request line, Host, the `-H` lines,
    /// Content-Length, the blank line): the yardstick of HPACK's savings.
    text: u64,
}

impl H2Class {
    /// A request of `method` for `path` at `authority` over `scheme`, with the user's `-H`
    /// headers (a `Host` becomes `:authority`; HTTP/1.1's connection headers are left out) and
    /// `payload`.
    pub fn new(
        method: &str,
        scheme: &str,
        authority: &str,
        path: &str,
        headers: &[String],
        payload: Payload,
    ) -> H2Class {
        // As HTTP/1.1 sends it (`request::http_request`): what HPACK is measured against.
        let own_host = headers.iter().any(|h| {
            h.split_once(':')
                .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("host"))
        });
        let text = format!("{method} {path} HTTP/1.1\r\n").len()
            + if own_host {
                0
            } else {
                format!("Host: {authority}\r\n").len()
            }
            + headers.iter().map(|h| h.len() + 2).sum::<usize>()
            + if payload.is_empty() {
                0
            } else {
                format!("Content-Length: {}\r\n", payload.len()).len()
            }
            + 2;
        let mut authority = authority.to_string();
        let mut extra = Vec::new();
        for h in headers {
            let Some((name, value)) = h.split_once(':') else {
                continue;
            };
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim();
            match name.as_str() {
                "host" => authority = value.to_string(),
                "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade"
                | "content-length" => {}
                _ => extra.push((name.into_bytes(), value.as_bytes().to_vec())),
            }
        }
        let mut fields = vec![
            (b":method".to_vec(), method.as_bytes().to_vec()),
            (b":scheme".to_vec(), scheme.as_bytes().to_vec()),
            (b":path".to_vec(), path.as_bytes().to_vec()),
            (b":authority".to_vec(), authority.into_bytes()),
        ];
        fields.extend(extra);
        if !payload.is_empty() {
            fields.push((b"content-length".to_vec(), payload.len().to_string().into_bytes()));
        }
        H2Class {
            fields,
            payload,
            text: text as u64,
        }
    }

    /// Bytes of its header block with every field a literal (no table, no Huffman): what one
    /// request's block takes at most; one HEADERS frame must hold it (see `fits_one_frame`).
    pub fn literal_len(&self) -> usize {
        self.fields.iter().map(|(n, v)| n.len() + v.len() + 10).sum()
    }
}

/// Whether every class's header block fits one HEADERS frame of the size every server allows
/// (16 KiB; this client sends no CONTINUATION).
pub fn fits_one_frame(classes: &[H2Class]) -> bool {
    classes.iter().all(|c| c.literal_len() <= frame::MAX_FRAME)
}

/// What every connection of a run sends: the classes, and how responses are checked.
#[derive(Debug, Clone)]
pub struct H2Plan {
    pub classes: Vec<H2Class>,
    /// The requests are HEAD: responses carry no body.
    pub head_only: bool,
    /// Verify the body of every 200 against the generated body of this size (`--body-size`).
    pub verify: Option<usize>,
}

impl H2Plan {
    /// The plan of an HTTP/2 run: each class's request (the target's alone without `--mix`).
    pub fn of(spec: &super::Spec) -> H2Plan {
        let t = spec.target();
        let scheme = if t.tls { "https" } else { "http" };
        let class = |method: &str, path: &str, payload: &Payload| {
            H2Class::new(method, scheme, &t.host, path, spec.headers(), payload.clone())
        };
        let classes = match spec.classes.is_empty() {
            true => vec![class(&spec.method, &t.path, &spec.payload)],
            false => spec
                .classes
                .iter()
                .map(|c| class(&c.method, &c.path, &c.payload))
                .collect(),
        };
        H2Plan {
            classes,
            head_only: spec.method.eq_ignore_ascii_case("HEAD"),
            verify: match spec.payload {
                Payload::Generated(n) => Some(n),
                _ => None,
            },
        }
    }
}

/// What the engine must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Stream `id` got its whole response.
    Done { id: u32, status: u16 },
    /// The server refused stream `id` (REFUSED_STREAM): it did not process it; it may be sent again.
    Refused { id: u32 },
    /// The server reset stream `id` with another error `code`.
    Reset { id: u32, code: u32 },
    /// GOAWAY: streams above `last` were not processed and are forgotten here; no new stream
    /// may open on this connection.
    GoAway { last: u32, code: u32 },
}

/// The connection cannot go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The server broke the protocol (what it did).
    Bad(&'static str),
    /// An echoed body differs from the one sent.
    Mismatch,
}

/// Frames and header bytes, for the figures (HPACK's savings, frames per request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    pub frames_in: u64,
    pub frames_out: u64,
    /// Request header blocks: their bytes, and their fields as text lines.
    pub request_block: u64,
    pub request_text: u64,
    /// Response header blocks likewise.
    pub response_block: u64,
    pub response_text: u64,
}

impl Counts {
    /// Adds `o` in.
    pub fn add(&mut self, o: &Counts) {
        self.frames_in += o.frames_in;
        self.frames_out += o.frames_out;
        self.request_block += o.request_block;
        self.request_text += o.request_text;
        self.response_block += o.response_block;
        self.response_text += o.response_text;
    }
}

/// A stream this client opened and that has not ended.
#[derive(Debug, Clone)]
struct Stream {
    id: u32,
    class: u8,
    /// The request's sequence number on its slot (its generated body).
    seq: u64,
    /// Body bytes sent, and still to send.
    body_off: usize,
    body_left: usize,
    /// Our send window on it.
    window: i64,
    /// The final response's status (0 until its head came).
    status: u16,
    content_length: Option<u64>,
    /// Body bytes received, and received since we last opened its window.
    received: u64,
    unacked: u64,
}

/// One connection's HTTP/2 session.
#[derive(Debug)]
pub struct H2Conn {
    plan: Arc<H2Plan>,
    /// The slot (generated bodies depend on it).
    slot: u64,
    streams: Vec<Stream>,
    next_id: u32,
    /// The server's SETTINGS.
    max_streams: u32,
    initial_window: i64,
    max_frame: usize,
    /// Our send window on the connection.
    send_window: i64,
    /// Bytes received since we last opened the connection's window.
    unacked: u64,
    /// The server's preface (a SETTINGS frame) has come.
    settings_seen: bool,
    /// GOAWAY's last stream.
    goaway: Option<u32>,
    /// Bytes of a frame not yet whole.
    buf: Vec<u8>,
    /// A header block waiting for its CONTINUATION: (stream, END_STREAM), and its bytes.
    block_for: Option<(u32, bool)>,
    block: Vec<u8>,
    decoder: hpack::Decoder,
    encoder: Encoder,
    /// Some stream has body bytes its window held back.
    blocked: bool,
    scratch: Vec<u8>,
    pub counts: Counts,
}

impl H2Conn {
    pub fn new(plan: Arc<H2Plan>, slot: u64) -> H2Conn {
        let classes = plan.classes.len();
        H2Conn {
            plan,
            slot,
            streams: Vec::new(),
            next_id: 1,
            max_streams: ASSUMED_STREAMS,
            initial_window: frame::INITIAL_WINDOW,
            max_frame: frame::MAX_FRAME,
            send_window: frame::INITIAL_WINDOW,
            unacked: 0,
            settings_seen: false,
            goaway: None,
            buf: Vec::new(),
            block_for: None,
            block: Vec::new(),
            decoder: hpack::Decoder::new(),
            encoder: Encoder::new(classes),
            blocked: false,
            scratch: Vec::new(),
            counts: Counts::default(),
        }
    }

    /// A new socket: everything about the last one is forgotten (the counts stay).
    pub fn reset(&mut self) {
        let counts = self.counts;
        *self = H2Conn::new(self.plan.clone(), self.slot);
        self.counts = counts;
    }

    /// The client's preface: the magic, our SETTINGS (no push, large windows) and the
    /// connection window opened as wide.
    pub fn start(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(frame::PREFACE);
        frame::settings(
            out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_MAX_CONCURRENT_STREAMS, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, RECV_WINDOW),
            ],
        );
        frame::window_update(out, 0, RECV_WINDOW - frame::INITIAL_WINDOW as u32);
        self.counts.frames_out += 2;
    }

    /// How many more streams may open now: the server's limit; one until its SETTINGS say
    /// what that is (the first request need not wait a round trip, and no stream is sent that
    /// a lower limit would refuse); none after GOAWAY.
    pub fn room(&self) -> usize {
        if self.closing() {
            return 0;
        }
        let max = if self.settings_seen { self.max_streams } else { 1 };
        (max as usize).saturating_sub(self.streams.len())
    }

    /// No new stream may open: the server said GOAWAY, or the identifiers ran out.
    pub fn closing(&self) -> bool {
        self.goaway.is_some() || self.next_id > LAST_ID
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// Opens a stream for request `seq` of `class`, writing its HEADERS (and what the windows
    /// allow of its body) to `out`; returns its identifier.
    pub fn open(&mut self, out: &mut Vec<u8>, class: u8, seq: u64) -> u32 {
        let id = self.next_id;
        self.next_id += 2;
        let c = &self.plan.classes[usize::from(class)];
        let body = c.payload.len();
        let at = out.len();
        out.extend_from_slice(&[0; frame::HEADER_LEN]);
        self.encoder.encode(&self.plan.classes, class, out);
        let len = out.len() - at - frame::HEADER_LEN;
        let flags = frame::END_HEADERS | if body == 0 { frame::END_STREAM } else { 0 };
        let mut head = Vec::with_capacity(frame::HEADER_LEN);
        frame::head(&mut head, len, frame::HEADERS, flags, id);
        out[at..at + frame::HEADER_LEN].copy_from_slice(&head);
        self.counts.frames_out += 1;
        self.counts.request_block += len as u64;
        self.counts.request_text += c.text;
        self.streams.push(Stream {
            id,
            class,
            seq,
            body_off: 0,
            body_left: body,
            window: self.initial_window,
            status: 0,
            content_length: None,
            received: 0,
            unacked: 0,
        });
        // A body goes behind those the windows hold back (oldest first, see `pump`), as far
        // as the windows let it now.
        if body > 0 && !self.blocked {
            let last = self.streams.len() - 1;
            self.send_body(last, out);
        } else if body > 0 {
            self.pump(out);
        }
        id
    }

    /// Sends what the windows allow of stream `k`'s body.
    fn send_body(&mut self, k: usize, out: &mut Vec<u8>) {
        let s = &mut self.streams[k];
        while s.body_left > 0 {
            let n = (s.body_left as i64)
                .min(s.window)
                .min(self.send_window)
                .min(self.max_frame as i64);
            if n <= 0 {
                self.blocked = true;
                return;
            }
            let n = n as usize;
            let end = n == s.body_left;
            frame::head(out, n, frame::DATA, if end { frame::END_STREAM } else { 0 }, s.id);
            let at = out.len();
            match &self.plan.classes[usize::from(s.class)].payload {
                Payload::Fixed(b) => out.extend_from_slice(&b[s.body_off..s.body_off + n]),
                _ => {
                    out.resize(at + n, 0);
                    pattern(self.slot, s.seq, s.body_off, &mut out[at..]);
                }
            }
            s.body_off += n;
            s.body_left -= n;
            s.window -= n as i64;
            self.send_window -= n as i64;
            self.counts.frames_out += 1;
        }
    }

    /// Sends the bodies windows held back, as far as they now allow, oldest stream first (the
    /// streams are kept in the order they opened).
    fn pump(&mut self, out: &mut Vec<u8>) {
        if !std::mem::take(&mut self.blocked) {
            return;
        }
        for k in 0..self.streams.len() {
            if self.streams[k].body_left > 0 {
                self.send_body(k, out);
            }
        }
    }

    /// Reads the server's bytes: what must be answered goes to `out`, what the engine must act
    /// on to `events`.
    pub fn push(&mut self, data: &[u8], out: &mut Vec<u8>, events: &mut Vec<Event>) -> Result<(), Fault> {
        if self.buf.is_empty() {
            let used = self.frames(data, out, events)?;
            self.buf.extend_from_slice(&data[used..]);
        } else {
            self.buf.extend_from_slice(data);
            let buf = std::mem::take(&mut self.buf);
            let used = self.frames(&buf, out, events);
            self.buf = buf;
            self.buf.drain(..used?);
        }
        self.pump(out);
        Ok(())
    }

    /// Handles the whole frames at the start of `b`; returns the bytes used.
    fn frames(&mut self, mut b: &[u8], out: &mut Vec<u8>, events: &mut Vec<Event>) -> Result<usize, Fault> {
        let total = b.len();
        if !self.settings_seen && !b.is_empty() {
            // The server's preface is a SETTINGS frame: anything else is not HTTP/2.
            if b.starts_with(b"HTTP/") {
                return Err(Fault::Bad(
                    "the server answered in HTTP/1.x: it does not speak HTTP/2 on this port (prior knowledge)",
                ));
            }
            if b.len() > 3 && b[3] != frame::SETTINGS {
                return Err(Fault::Bad(
                    "the server's first frame is not SETTINGS: not an HTTP/2 server",
                ));
            }
        }
        while b.len() >= frame::HEADER_LEN {
            let h = Head::parse(b);
            if h.len > frame::MAX_FRAME {
                return Err(Fault::Bad("a frame larger than SETTINGS_MAX_FRAME_SIZE"));
            }
            if b.len() < frame::HEADER_LEN + h.len {
                break;
            }
            let p = &b[frame::HEADER_LEN..frame::HEADER_LEN + h.len];
            b = &b[frame::HEADER_LEN + h.len..];
            self.counts.frames_in += 1;
            self.frame(h, p, out, events)?;
        }
        Ok(total - b.len())
    }

    /// Where stream `id` is (the streams are in the order they opened: ids ascending).
    fn find(&self, id: u32) -> Option<usize> {
        self.streams.binary_search_by_key(&id, |s| s.id).ok()
    }

    /// A frame on stream `id` that is not open: one we opened and that has ended (a late
    /// frame, ignored), or one never opened (a protocol error).
    fn unknown(&self, id: u32) -> Result<(), Fault> {
        match id != 0 && id < self.next_id {
            true => Ok(()),
            false => Err(Fault::Bad("a frame on a stream this client never opened")),
        }
    }

    fn frame(&mut self, h: Head, p: &[u8], out: &mut Vec<u8>, events: &mut Vec<Event>) -> Result<(), Fault> {
        if self.block_for.is_some() && h.kind != frame::CONTINUATION {
            return Err(Fault::Bad("a header block not followed by its CONTINUATION"));
        }
        match h.kind {
            frame::DATA => self.data(h, p, out, events),
            frame::HEADERS => {
                let mut p = frame::unpad(h, p).map_err(|_| Fault::Bad("bad padding"))?;
                if h.flags & frame::PRIORITY_FLAG != 0 {
                    p = p
                        .get(5..)
                        .ok_or(Fault::Bad("a HEADERS frame too short for its priority"))?;
                }
                if h.stream == 0 {
                    return Err(Fault::Bad("HEADERS on stream 0"));
                }
                let end_stream = h.flags & frame::END_STREAM != 0;
                if h.flags & frame::END_HEADERS != 0 {
                    self.head(h.stream, p, end_stream, out, events)
                } else {
                    self.block.clear();
                    self.block.extend_from_slice(p);
                    self.block_for = Some((h.stream, end_stream));
                    Ok(())
                }
            }
            frame::CONTINUATION => {
                let Some((id, end_stream)) = self.block_for else {
                    return Err(Fault::Bad("a CONTINUATION without a header block"));
                };
                if h.stream != id {
                    return Err(Fault::Bad("a CONTINUATION on another stream"));
                }
                self.block.extend_from_slice(p);
                if self.block.len() > MAX_HEADER_LIST {
                    return Err(Fault::Bad("a response header block over 64 KiB"));
                }
                if h.flags & frame::END_HEADERS != 0 {
                    self.block_for = None;
                    let block = std::mem::take(&mut self.block);
                    let r = self.head(id, &block, end_stream, out, events);
                    self.block = block;
                    return r;
                }
                Ok(())
            }
            frame::RST_STREAM => {
                if p.len() != 4 || h.stream == 0 {
                    return Err(Fault::Bad("a malformed RST_STREAM"));
                }
                let code = u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
                match self.find(h.stream) {
                    Some(k) => {
                        self.streams.remove(k);
                        events.push(match code {
                            c if c == frame::Code::RefusedStream as u32 => Event::Refused { id: h.stream },
                            code => Event::Reset { id: h.stream, code },
                        });
                        Ok(())
                    }
                    None => self.unknown(h.stream),
                }
            }
            frame::SETTINGS => self.settings(h, p, out),
            frame::PING => {
                if p.len() != 8 || h.stream != 0 {
                    return Err(Fault::Bad("a malformed PING"));
                }
                if h.flags & frame::ACK == 0 {
                    frame::head(out, 8, frame::PING, frame::ACK, 0);
                    out.extend_from_slice(p);
                    self.counts.frames_out += 1;
                }
                Ok(())
            }
            frame::GOAWAY => {
                if p.len() < 8 || h.stream != 0 {
                    return Err(Fault::Bad("a malformed GOAWAY"));
                }
                let last = u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & LAST_ID;
                let code = u32::from_be_bytes([p[4], p[5], p[6], p[7]]);
                // A second GOAWAY may only lower the last stream.
                let last = self.goaway.map_or(last, |l| l.min(last));
                self.goaway = Some(last);
                self.streams.retain(|s| s.id <= last);
                events.push(Event::GoAway { last, code });
                Ok(())
            }
            frame::WINDOW_UPDATE => {
                if p.len() != 4 {
                    return Err(Fault::Bad("a malformed WINDOW_UPDATE"));
                }
                let inc = i64::from(u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & LAST_ID);
                if inc == 0 {
                    return Err(Fault::Bad("a WINDOW_UPDATE of 0"));
                }
                let window = match h.stream {
                    0 => &mut self.send_window,
                    id => match self.find(id) {
                        Some(k) => &mut self.streams[k].window,
                        None => return self.unknown(id),
                    },
                };
                *window += inc;
                if *window > frame::MAX_WINDOW {
                    return Err(Fault::Bad("a window opened past 2^31 - 1"));
                }
                self.blocked = true;
                Ok(())
            }
            frame::PUSH_PROMISE => Err(Fault::Bad("PUSH_PROMISE, though this client disabled push")),
            // PRIORITY, and frame types this client does not know, are ignored (RFC 9113 5.5).
            _ => Ok(()),
        }
    }

    fn settings(&mut self, h: Head, p: &[u8], out: &mut Vec<u8>) -> Result<(), Fault> {
        if h.stream != 0 || !p.len().is_multiple_of(6) {
            return Err(Fault::Bad("a malformed SETTINGS frame"));
        }
        if h.flags & frame::ACK != 0 {
            return Ok(());
        }
        self.settings_seen = true;
        for pair in p.chunks_exact(6) {
            let id = u16::from_be_bytes([pair[0], pair[1]]);
            let v = u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]);
            match id {
                0x1 => self.encoder.resize(v as usize),
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => self.max_streams = v,
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    if i64::from(v) > frame::MAX_WINDOW {
                        return Err(Fault::Bad("SETTINGS_INITIAL_WINDOW_SIZE past 2^31 - 1"));
                    }
                    // Every open stream's window moves by the change (RFC 9113 6.9.2).
                    let delta = i64::from(v) - self.initial_window;
                    self.initial_window = i64::from(v);
                    for s in &mut self.streams {
                        s.window += delta;
                        if s.window > frame::MAX_WINDOW {
                            return Err(Fault::Bad(
                                "a stream window moved past 2^31 - 1 by SETTINGS_INITIAL_WINDOW_SIZE",
                            ));
                        }
                    }
                    self.blocked = true;
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    if !(frame::MAX_FRAME as u32..=0xff_ffff).contains(&v) {
                        return Err(Fault::Bad("SETTINGS_MAX_FRAME_SIZE out of range"));
                    }
                    self.max_frame = v as usize;
                }
                _ => {}
            }
        }
        frame::head(out, 0, frame::SETTINGS, frame::ACK, 0);
        self.counts.frames_out += 1;
        Ok(())
    }

    fn data(&mut self, h: Head, p: &[u8], out: &mut Vec<u8>, events: &mut Vec<Event>) -> Result<(), Fault> {
        if h.stream == 0 {
            return Err(Fault::Bad("DATA on stream 0"));
        }
        // Flow control counts the whole payload, padding too.
        self.unacked += h.len as u64;
        if self.unacked >= u64::from(RECV_WINDOW / 2) {
            frame::window_update(out, 0, self.unacked as u32);
            self.counts.frames_out += 1;
            self.unacked = 0;
        }
        let body = frame::unpad(h, p).map_err(|_| Fault::Bad("bad padding"))?;
        let Some(k) = self.find(h.stream) else {
            return self.unknown(h.stream);
        };
        let verify = self.plan.verify;
        let s = &mut self.streams[k];
        if s.status == 0 {
            return Err(Fault::Bad("DATA before the response's HEADERS"));
        }
        if self.plan.head_only && !body.is_empty() {
            return Err(Fault::Bad("a body in the response to HEAD"));
        }
        if let (Some(size), 200) = (verify, s.status) {
            if s.received as usize + body.len() > size {
                return Err(Fault::Mismatch);
            }
            self.scratch.resize(body.len(), 0);
            pattern(self.slot, s.seq, s.received as usize, &mut self.scratch);
            if self.scratch[..] != *body {
                return Err(Fault::Mismatch);
            }
        }
        s.received += body.len() as u64;
        s.unacked += h.len as u64;
        if h.flags & frame::END_STREAM != 0 {
            return self.finish(k, out, events);
        }
        if s.unacked >= u64::from(RECV_WINDOW / 2) {
            frame::window_update(out, s.id, s.unacked as u32);
            s.unacked = 0;
            self.counts.frames_out += 1;
        }
        Ok(())
    }

    /// A whole header block for stream `id`: the response's head, an interim one, or trailers.
    fn head(
        &mut self,
        id: u32,
        block: &[u8],
        end_stream: bool,
        out: &mut Vec<u8>,
        events: &mut Vec<Event>,
    ) -> Result<(), Fault> {
        let (mut status, mut length, mut text, mut bad) = (None::<u16>, None::<u64>, 0u64, false);
        self.decoder
            .decode(block, MAX_HEADER_LIST, &mut |n, v| {
                // As HTTP/1.1 text: `HTTP/1.1 200\r\n` for the status, `name: value\r\n` for
                // the others.
                text += match n {
                    b":status" => 14,
                    _ => (n.len() + v.len() + 4) as u64,
                };
                match n {
                    b":status" => {
                        status = std::str::from_utf8(v).ok().and_then(|s| s.parse().ok());
                        bad |= status.is_none_or(|s| !(100..600).contains(&s));
                    }
                    b"content-length" => {
                        let l = std::str::from_utf8(v).ok().and_then(|s| s.parse().ok());
                        bad |= l.is_none() || (length.is_some() && length != l);
                        length = l;
                    }
                    _ => {}
                }
            })
            .map_err(|_| Fault::Bad("a response header block that does not decode"))?;
        self.counts.response_block += block.len() as u64;
        // And the blank line that ends an HTTP/1.1 head.
        self.counts.response_text += text + 2;
        let Some(k) = self.find(id) else {
            // Decoded all the same: the table must stay in step with the server's.
            return self.unknown(id);
        };
        if bad {
            return Err(Fault::Bad("a response with a bad :status or content-length"));
        }
        let s = &mut self.streams[k];
        if s.status == 0 {
            match status {
                Some(st) if (100..200).contains(&st) => {
                    // An interim response (100 Continue, 103 Early Hints): the final one follows.
                    if end_stream {
                        return Err(Fault::Bad("an interim response that ends its stream"));
                    }
                    return Ok(());
                }
                Some(st) => {
                    s.status = st;
                    s.content_length = length;
                    if let (Some(size), 200, Some(l)) = (self.plan.verify, st, length) {
                        if l != size as u64 {
                            return Err(Fault::Mismatch);
                        }
                    }
                }
                None => return Err(Fault::Bad("a response without :status")),
            }
        } else if !end_stream || status.is_some() {
            return Err(Fault::Bad("a second response head that is not trailers"));
        }
        match end_stream {
            true => self.finish(k, out, events),
            false => Ok(()),
        }
    }

    /// Stream `k` ended: its response is checked whole. A response that came before the whole
    /// request body went (RFC 9113 8.1) ends the stream from our side too: RST_STREAM(CANCEL),
    /// so the server does not keep it open waiting for the rest.
    fn finish(&mut self, k: usize, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Result<(), Fault> {
        let s = self.streams.remove(k);
        if s.body_left > 0 {
            frame::rst_stream(out, s.id, frame::Code::Cancel);
            self.counts.frames_out += 1;
        }
        let bodiless = self.plan.head_only || s.status == 204 || s.status == 304;
        if let Some(l) = s.content_length.filter(|_| !bodiless) {
            if l != s.received {
                return Err(Fault::Bad("a response body whose length is not its content-length"));
            }
        }
        if let (Some(size), 200) = (self.plan.verify, s.status) {
            if s.received != size as u64 {
                return Err(Fault::Mismatch);
            }
        }
        events.push(Event::Done {
            id: s.id,
            status: s.status,
        });
        Ok(())
    }
}

/// HPACK's encoder side for requests: each field the first time as a literal the server adds
/// to its table (while the table has room), later as one index. A class's block is kept once
/// it no longer changes the table, so a warm connection copies a few bytes per request.
#[derive(Debug)]
struct Encoder {
    /// Entries we added to the server's table, oldest first: (class, field).
    table: Vec<(u8, u8)>,
    size: usize,
    /// The table size the server allows (SETTINGS_HEADER_TABLE_SIZE, at most our 4096).
    max: usize,
    /// A size update the next block must start with.
    resize: Option<usize>,
    /// Each class's block, once it no longer changes the table.
    cached: Vec<Vec<u8>>,
}

impl Encoder {
    fn new(classes: usize) -> Encoder {
        Encoder {
            table: Vec::new(),
            size: 0,
            max: hpack::TABLE_SIZE,
            resize: None,
            cached: vec![Vec::new(); classes],
        }
    }

    /// The server's table size changed: it is emptied, and the next block says so.
    fn resize(&mut self, server: usize) {
        let max = server.min(hpack::TABLE_SIZE);
        if max == self.max && self.resize.is_none() {
            return;
        }
        self.max = max;
        self.resize = Some(max);
        self.table.clear();
        self.size = 0;
        self.cached.iter_mut().for_each(Vec::clear);
    }

    fn encode(&mut self, classes: &[H2Class], class: u8, out: &mut Vec<u8>) {
        if let Some(max) = self.resize.take() {
            // Evict everything, then set the new limit (RFC 7541 4.2).
            hpack::put_integer(out, 0x20, 5, 0);
            hpack::put_integer(out, 0x20, 5, max);
        }
        let cached = &self.cached[usize::from(class)];
        if !cached.is_empty() {
            out.extend_from_slice(cached);
            return;
        }
        let start = out.len();
        let mut added = false;
        for (f, (name, value)) in classes[usize::from(class)].fields.iter().enumerate() {
            let (whole, by_name) = hpack::static_index(name, value);
            if let Some(i) = whole {
                hpack::put_indexed(out, i);
                continue;
            }
            let same = |&(c, g): &(u8, u8)| {
                let (n, v) = &classes[usize::from(c)].fields[usize::from(g)];
                n == name && v == value
            };
            if let Some(pos) = self.table.iter().position(same) {
                hpack::put_indexed(out, 62 + self.table.len() - 1 - pos);
                continue;
            }
            let size = name.len() + value.len() + hpack::ENTRY_OVERHEAD;
            let index = self.size + size <= self.max && f < 256;
            let (first, bits) = if index { (0x40, 6) } else { (0x00, 4) };
            match by_name {
                Some(n) => hpack::put_integer(out, first, bits, n),
                None => {
                    out.push(first);
                    hpack::put_string(out, name);
                }
            }
            hpack::put_string(out, value);
            if index {
                self.table.push((class, f as u8));
                self.size += size;
                added = true;
            }
        }
        if added {
            // Indices moved: every kept block is stale.
            self.cached.iter_mut().for_each(Vec::clear);
        } else {
            self.cached[usize::from(class)] = out[start..].to_vec();
        }
    }
}

#[cfg(test)]
mod tests;
