//! h2: HTTP/2 (RFC 9113) as a sans-I/O session, served by every model like http.
//!
//! GET / HEAD -> 200 `<html>hello</html>`; POST / PUT -> 200 echoing the request body as it
//! arrives; other methods -> 405. A connection's streams are all served here, by the worker
//! that owns the connection. What the session sends goes into one output buffer per call, so
//! a turn's frames leave in one write.
//!
//! By the RFC: the preface and SETTINGS (ours: `SETTINGS_MAX_CONCURRENT_STREAMS`, streams past
//! it refused with REFUSED_STREAM) and their ACK; HEADERS + CONTINUATION decoded with HPACK;
//! DATA under connection- and stream-level flow control both ways; PING; RST_STREAM; GOAWAY;
//! PRIORITY checked and otherwise ignored; unknown frame types ignored. A connection error
//! sends GOAWAY with its code and closes; a stream error resets only that stream.
//!
//! Limits as for http: a header list over 8 KiB gets 431, a body over `max_body` resets its
//! stream. Response bytes waiting for the client's flow-control window count against
//! `max_output`: past it the session grants the client no more window, so a client that never
//! sends WINDOW_UPDATE cannot make it hold more than `max_output` plus one window.

pub mod frame;
pub(crate) mod hpack;
pub(crate) mod huffman;
pub mod wire;

use frame::{Code, Head};

use super::{Answer, Fed, Limits, Request};
use crate::proto::http::{BODY, MAX_HEAD};

/// The largest header block (HEADERS and its CONTINUATIONs) accepted, encoded: past it the
/// connection ends with ENHANCE_YOUR_CALM.
const MAX_BLOCK: usize = 64 * 1024;
/// The most CONTINUATION frames one header block may take (an endless run of empty ones is
/// the CONTINUATION flood).
const MAX_CONTINUATIONS: usize = 64;
/// Recently closed streams remembered, to tell a frame on a closed stream from one on a
/// stream identifier never used: at least this many, and twice `--max-streams` (a client's
/// DATA for every stream we refused may still be in flight).
const REMEMBERED: usize = 64;
/// A stream's pending-body buffer larger than this is given back when it empties (a spare
/// stream keeps at most this much).
const KEEP_BUFFER: usize = 16 * 1024;
/// The largest decoded header list (what an HPACK block may expand to) before the connection
/// ends with ENHANCE_YOUR_CALM: a few bytes referring to a large table entry again and again
/// must not cost the server megabytes of copying.
const MAX_DECODED: usize = 64 * 1024;

/// What a request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Get,
    Head,
    /// POST or PUT: the body is echoed.
    Echo,
    Other,
}

/// One stream that is open or half-closed.
#[derive(Debug)]
struct Stream {
    id: u32,
    /// What the client may still send us, and what we may send it.
    recv_window: i64,
    send_window: i64,
    /// Window consumed by DATA and not yet granted back.
    recv_owed: u32,
    /// Response body waiting for window.
    pending: Vec<u8>,
    method: Method,
    /// The request's END_STREAM arrived.
    ended_in: bool,
    /// A refusal was sent before the request ended: the rest of it is not wanted (RFC 9113
    /// 8.1: RST_STREAM with NO_ERROR once the response is complete), and its DATA is dropped.
    abort_in: bool,
    /// The response is complete once `pending` is sent; and its END_STREAM went.
    end_out: bool,
    done_out: bool,
    /// The request's content-length, and the body bytes so far.
    expect_len: Option<u64>,
    got_len: u64,
}

impl Stream {
    fn open(&mut self, id: u32, send_window: i64) {
        self.id = id;
        self.recv_window = frame::INITIAL_WINDOW;
        self.send_window = send_window;
        self.recv_owed = 0;
        self.pending.clear();
        self.method = Method::Other;
        self.ended_in = false;
        self.abort_in = false;
        self.end_out = false;
        self.done_out = false;
        self.expect_len = None;
        self.got_len = 0;
    }
}

/// How a remembered stream closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closed {
    /// Both sides ended it, or the client reset it: frames on it are STREAM_CLOSED.
    Finished,
    /// We reset it: frames the client sent before it knew are ignored.
    ResetByUs,
}

/// A stream error found while a header block was read; applied once the block is decoded
/// (the HPACK state must follow every block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Problem {
    Malformed,
    StreamClosed,
}

/// The request head a block decoded to.
#[derive(Debug, Default)]
struct Fields {
    method: Option<Method>,
    scheme: bool,
    path: bool,
    authority: bool,
    /// CONNECT, which carries neither :scheme nor :path (and gets 405 here).
    connect: bool,
    /// A pseudo-header missing, repeated, unknown or after a regular field; a bad name or a
    /// connection-specific field.
    malformed: bool,
    regular_seen: bool,
    content_length: Option<u64>,
    /// Bytes of the decoded header list (RFC 9113's size: name + value + 32 each).
    list_size: usize,
}

/// Where the connection is in the frame stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// This many bytes of the client preface still to check.
    Preface(usize),
    Frames,
    /// A connection error sent GOAWAY: everything after is ignored.
    Dead,
}

/// One connection's HTTP/2 state.
#[derive(Debug)]
pub struct H2Session {
    limits: Limits,
    phase: Phase,
    /// Our SETTINGS went out; the client's first SETTINGS came.
    greeted: bool,
    settings_seen: bool,
    /// An incomplete frame, kept for the next input.
    partial: Vec<u8>,
    decoder: hpack::Decoder,
    /// The header block being assembled: its stream, its END_STREAM, its fragments so far,
    /// how many CONTINUATIONs, and a stream error found in its frame.
    block: Vec<u8>,
    block_stream: u32,
    block_end_stream: bool,
    continuations: usize,
    expecting_continuation: bool,
    block_problem: Option<Problem>,
    /// Streams open or half-closed, and spare ones kept for reuse.
    streams: Vec<Stream>,
    spare: Vec<Stream>,
    /// The highest stream identifier the client used.
    last_id: u32,
    closed: Vec<(u32, Closed)>,
    closed_next: usize,
    /// The client's SETTINGS.
    peer_initial_window: i64,
    peer_max_frame: usize,
    /// Connection windows, and window owed back to the client.
    send_window: i64,
    recv_window: i64,
    recv_owed: u32,
    /// Response bytes held for window, over all streams.
    held: usize,
    /// The client sent GOAWAY: its streams go on, new ones are refused, and once they are done
    /// the connection closes.
    peer_gone: bool,
    /// The request path of the block being decoded.
    path: Vec<u8>,
}

impl H2Session {
    /// A session after the client's preface (`preface`: still to be checked here).
    pub fn new(limits: Limits, preface: bool) -> H2Session {
        H2Session {
            limits,
            phase: if preface {
                Phase::Preface(frame::PREFACE.len())
            } else {
                Phase::Frames
            },
            greeted: false,
            settings_seen: false,
            partial: Vec::new(),
            decoder: hpack::Decoder::new(),
            block: Vec::new(),
            block_stream: 0,
            block_end_stream: false,
            continuations: 0,
            expecting_continuation: false,
            block_problem: None,
            streams: Vec::new(),
            spare: Vec::new(),
            last_id: 0,
            closed: vec![(0, Closed::Finished); REMEMBERED.max(2 * limits.max_streams as usize)],
            closed_next: 0,
            peer_initial_window: frame::INITIAL_WINDOW,
            peer_max_frame: frame::MAX_FRAME,
            send_window: frame::INITIAL_WINDOW,
            recv_window: frame::INITIAL_WINDOW,
            recv_owed: 0,
            held: 0,
            peer_gone: false,
            path: Vec::new(),
        }
    }

    /// Inside the preface or a header block (what `--header-timeout` limits).
    pub fn head_pending(&self) -> bool {
        matches!(self.phase, Phase::Preface(_))
            || self.expecting_continuation
            || self
                .partial
                .get(3)
                .is_some_and(|&t| t == frame::HEADERS || t == frame::CONTINUATION)
    }

    /// Response bytes held for the client's window.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Ends the connection politely: GOAWAY naming the last stream served (a server that is
    /// stopping).
    pub fn goaway(&mut self, out: &mut Vec<u8>) {
        if self.phase == Phase::Frames {
            self.greet(out);
            frame::goaway(out, self.last_id, Code::NoError);
            self.phase = Phase::Dead;
        }
    }

    /// Bytes in (any split), frames out.
    pub fn feed<F: FnMut(Request<'_>, &mut Vec<u8>) -> Answer>(
        &mut self,
        mut input: &[u8],
        out: &mut Vec<u8>,
        each: &mut F,
    ) -> Fed {
        let mut fed = Fed::default();
        if let Phase::Preface(left) = self.phase {
            let done = frame::PREFACE.len() - left;
            let n = left.min(input.len());
            if input[..n] != frame::PREFACE[done..done + n] {
                self.connection_error(out, Code::Protocol, &mut fed);
                return fed;
            }
            input = &input[n..];
            self.phase = if n == left {
                Phase::Frames
            } else {
                Phase::Preface(left - n)
            };
            if n < left {
                return fed;
            }
        }
        if self.phase == Phase::Dead {
            fed.close = true;
            return fed;
        }
        self.greet(out);
        if self.partial.is_empty() {
            let used = self.frames(input, out, each, &mut fed);
            self.partial.extend_from_slice(&input[used..]);
        } else {
            let mut buf = std::mem::take(&mut self.partial);
            buf.extend_from_slice(input);
            let used = self.frames(&buf, out, each, &mut fed);
            buf.drain(..used);
            self.partial = buf;
        }
        fed.close |= self.phase == Phase::Dead;
        fed
    }

    /// Our SETTINGS, once, first.
    fn greet(&mut self, out: &mut Vec<u8>) {
        if !self.greeted {
            self.greeted = true;
            frame::settings(
                out,
                &[
                    (frame::SETTINGS_MAX_CONCURRENT_STREAMS, self.limits.max_streams),
                    (frame::SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEAD as u32),
                ],
            );
        }
    }

    /// Handles every whole frame at the start of `b`; returns the bytes used.
    fn frames<F: FnMut(Request<'_>, &mut Vec<u8>) -> Answer>(
        &mut self,
        b: &[u8],
        out: &mut Vec<u8>,
        each: &mut F,
        fed: &mut Fed,
    ) -> usize {
        let mut at = 0;
        while b.len() - at >= frame::HEADER_LEN && self.phase == Phase::Frames {
            let head = Head::parse(&b[at..]);
            if head.len > frame::MAX_FRAME {
                self.connection_error(out, Code::FrameSize, fed);
                break;
            }
            let end = at + frame::HEADER_LEN + head.len;
            if b.len() < end {
                break;
            }
            let payload = &b[at + frame::HEADER_LEN..end];
            at = end;
            if let Err(code) = self.frame(head, payload, out, each, fed) {
                self.connection_error(out, code, fed);
            } else if self.peer_gone && self.streams.is_empty() {
                // The client said GOAWAY and its streams are done: ours, and close.
                frame::goaway(out, self.last_id, Code::NoError);
                self.phase = Phase::Dead;
                fed.close = true;
            }
        }
        at
    }

    fn connection_error(&mut self, out: &mut Vec<u8>, code: Code, fed: &mut Fed) {
        self.greet(out);
        frame::goaway(out, self.last_id, code);
        self.phase = Phase::Dead;
        fed.close = true;
    }

    /// One frame. `Err`: a connection error.
    fn frame<F: FnMut(Request<'_>, &mut Vec<u8>) -> Answer>(
        &mut self,
        head: Head,
        payload: &[u8],
        out: &mut Vec<u8>,
        each: &mut F,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        if self.expecting_continuation && (head.kind != frame::CONTINUATION || head.stream != self.block_stream) {
            return Err(Code::Protocol);
        }
        if !self.settings_seen {
            // The client's preface ends with a SETTINGS frame (RFC 9113 3.4).
            if head.kind != frame::SETTINGS || head.flags & frame::ACK != 0 {
                return Err(Code::Protocol);
            }
            self.settings_seen = true;
        }
        match head.kind {
            frame::DATA => self.data(head, payload, out, fed),
            frame::HEADERS => self.headers(head, payload, out, each, fed),
            frame::CONTINUATION => {
                if !self.expecting_continuation {
                    return Err(Code::Protocol);
                }
                self.continuations += 1;
                if self.continuations > MAX_CONTINUATIONS {
                    return Err(Code::EnhanceYourCalm);
                }
                self.fragment(payload, head.flags & frame::END_HEADERS != 0, out, each, fed)
            }
            frame::PRIORITY => {
                if head.stream == 0 {
                    return Err(Code::Protocol);
                }
                if head.len != 5 {
                    self.reset(out, head.stream, Code::FrameSize, fed);
                } else if dependency(payload) == head.stream {
                    self.reset(out, head.stream, Code::Protocol, fed);
                }
                Ok(())
            }
            frame::RST_STREAM => {
                if head.stream == 0 {
                    return Err(Code::Protocol);
                }
                if head.len != 4 {
                    return Err(Code::FrameSize);
                }
                if head.stream > self.last_id {
                    return Err(Code::Protocol);
                }
                if let Some(i) = self.find(head.stream) {
                    fed.streams.reset += 1;
                    self.close(i, Closed::Finished);
                    self.grant(out, None);
                }
                Ok(())
            }
            frame::SETTINGS => self.settings(head, payload, out),
            frame::PUSH_PROMISE => Err(Code::Protocol),
            frame::PING => {
                if head.stream != 0 {
                    return Err(Code::Protocol);
                }
                if head.len != 8 {
                    return Err(Code::FrameSize);
                }
                if head.flags & frame::ACK == 0 {
                    frame::head(out, 8, frame::PING, frame::ACK, 0);
                    out.extend_from_slice(payload);
                }
                Ok(())
            }
            frame::GOAWAY => {
                if head.stream != 0 {
                    return Err(Code::Protocol);
                }
                if head.len < 8 {
                    return Err(Code::FrameSize);
                }
                self.peer_gone = true;
                Ok(())
            }
            frame::WINDOW_UPDATE => self.window_update(head, payload, out, fed),
            // Unknown frame types are ignored (RFC 9113 4.1).
            _ => Ok(()),
        }
    }

    fn settings(&mut self, head: Head, payload: &[u8], out: &mut Vec<u8>) -> Result<(), Code> {
        if head.stream != 0 {
            return Err(Code::Protocol);
        }
        if head.flags & frame::ACK != 0 {
            return if head.len == 0 { Ok(()) } else { Err(Code::FrameSize) };
        }
        if !head.len.is_multiple_of(6) {
            return Err(Code::FrameSize);
        }
        for s in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([s[0], s[1]]);
            let value = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
            match id {
                frame::SETTINGS_ENABLE_PUSH if value > 1 => return Err(Code::Protocol),
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    let value = i64::from(value);
                    if value > frame::MAX_WINDOW {
                        return Err(Code::FlowControl);
                    }
                    let delta = value - self.peer_initial_window;
                    self.peer_initial_window = value;
                    for s in &mut self.streams {
                        s.send_window += delta;
                        if s.send_window > frame::MAX_WINDOW {
                            return Err(Code::FlowControl);
                        }
                    }
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    if !(frame::MAX_FRAME as u32..=(1 << 24) - 1).contains(&value) {
                        return Err(Code::Protocol);
                    }
                    self.peer_max_frame = value as usize;
                }
                // The header table size bounds an encoder's table: ours uses none. The others
                // (max streams, which bounds pushes, and header list size) ask nothing of us.
                _ => {}
            }
        }
        frame::head(out, 0, frame::SETTINGS, frame::ACK, 0);
        // A larger initial window may let held responses go, and the uploads they held back.
        self.flush(out);
        self.grant(out, None);
        Ok(())
    }

    fn window_update(&mut self, head: Head, payload: &[u8], out: &mut Vec<u8>, fed: &mut Fed) -> Result<(), Code> {
        if head.len != 4 {
            return Err(Code::FrameSize);
        }
        let inc = i64::from(u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff);
        if head.stream == 0 {
            if inc == 0 {
                return Err(Code::Protocol);
            }
            self.send_window += inc;
            if self.send_window > frame::MAX_WINDOW {
                return Err(Code::FlowControl);
            }
            self.flush(out);
            self.grant(out, None);
            return Ok(());
        }
        if head.stream > self.last_id {
            return Err(Code::Protocol);
        }
        let Some(i) = self.find(head.stream) else {
            return Ok(()); // closed: a late update is harmless
        };
        if inc == 0 {
            self.reset(out, head.stream, Code::Protocol, fed);
            return Ok(());
        }
        self.streams[i].send_window += inc;
        if self.streams[i].send_window > frame::MAX_WINDOW {
            self.reset(out, head.stream, Code::FlowControl, fed);
        } else {
            self.flush_stream(i, out);
        }
        self.grant(out, None);
        Ok(())
    }

    /// DATA: the body goes to its stream (echoed as window allows), and the window it used is
    /// granted back at once while the session holds less than `max_output`.
    fn data(&mut self, head: Head, payload: &[u8], out: &mut Vec<u8>, fed: &mut Fed) -> Result<(), Code> {
        self.take_data(head, payload, out, fed)?;
        if let Some(i) = self.find(head.stream) {
            self.flush_stream(i, out);
        }
        self.grant(out, Some(head.stream));
        Ok(())
    }

    fn take_data(&mut self, head: Head, payload: &[u8], out: &mut Vec<u8>, fed: &mut Fed) -> Result<(), Code> {
        if head.stream == 0 {
            return Err(Code::Protocol);
        }
        if head.stream > self.last_id {
            return Err(Code::Protocol);
        }
        let body = unpad(head, payload)?;
        // All of the payload, padding included, counts against the windows.
        let len = head.len as i64;
        if len > self.recv_window {
            return Err(Code::FlowControl);
        }
        self.recv_window -= len;
        self.recv_owed += head.len as u32;
        let Some(i) = self.find(head.stream) else {
            return match self.was_closed(head.stream) {
                Some(Closed::ResetByUs) => Ok(()),
                Some(Closed::Finished) => Err(Code::StreamClosed),
                // Closed too long ago to say how: a stream error (RFC 9113 6.1).
                None => {
                    frame::rst_stream(out, head.stream, Code::StreamClosed);
                    Ok(())
                }
            };
        };
        if self.streams[i].abort_in {
            return Ok(());
        }
        if self.streams[i].ended_in {
            self.reset(out, head.stream, Code::StreamClosed, fed);
            return Ok(());
        }
        let s = &mut self.streams[i];
        if len > s.recv_window {
            self.reset(out, head.stream, Code::FlowControl, fed);
            return Ok(());
        }
        s.recv_window -= len;
        s.recv_owed += head.len as u32;
        s.got_len += body.len() as u64;
        if s.expect_len.is_some_and(|n| s.got_len > n) {
            // More body than its content-length: malformed, before a byte of it is echoed.
            self.reset(out, head.stream, Code::Protocol, fed);
            return Ok(());
        }
        if s.got_len > self.limits.max_body as u64 {
            self.reset(out, head.stream, Code::Cancel, fed);
            return Ok(());
        }
        if s.method == Method::Echo {
            s.pending.extend_from_slice(body);
            self.held += body.len();
        }
        if head.flags & frame::END_STREAM != 0 {
            self.end_request(i, out, fed);
        }
        Ok(())
    }

    /// The request's END_STREAM arrived on stream `i`.
    fn end_request(&mut self, i: usize, out: &mut Vec<u8>, fed: &mut Fed) {
        let s = &mut self.streams[i];
        if s.expect_len.is_some_and(|n| n != s.got_len) {
            let id = s.id;
            self.reset(out, id, Code::Protocol, fed);
            return;
        }
        s.ended_in = true;
        if s.method == Method::Echo {
            s.end_out = true;
        }
    }

    fn headers<F: FnMut(Request<'_>, &mut Vec<u8>) -> Answer>(
        &mut self,
        head: Head,
        payload: &[u8],
        out: &mut Vec<u8>,
        each: &mut F,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        if head.stream == 0 {
            return Err(Code::Protocol);
        }
        let mut fragment = unpad(head, payload)?;
        self.block_problem = None;
        if head.flags & frame::PRIORITY_FLAG != 0 {
            if fragment.len() < 5 {
                return Err(Code::FrameSize);
            }
            if dependency(fragment) == head.stream {
                self.block_problem = Some(Problem::Malformed);
            }
            fragment = &fragment[5..];
        }
        if head.stream > self.last_id {
            if head.stream.is_multiple_of(2) {
                return Err(Code::Protocol);
            }
        } else {
            match self.find(head.stream) {
                // Trailers end the request; a second HEADERS after it is on a closed stream.
                Some(i) if !self.streams[i].ended_in => {
                    if head.flags & frame::END_STREAM == 0 {
                        self.block_problem = Some(Problem::Malformed);
                    }
                }
                Some(_) => self.block_problem = Some(Problem::StreamClosed),
                None => match self.was_closed(head.stream) {
                    Some(Closed::Finished) => return Err(Code::StreamClosed),
                    Some(Closed::ResetByUs) => self.block_problem = Some(Problem::StreamClosed),
                    // A stream identifier below the last, never opened (RFC 9113 5.1.1).
                    None => return Err(Code::Protocol),
                },
            }
        }
        self.block.clear();
        self.block_stream = head.stream;
        self.block_end_stream = head.flags & frame::END_STREAM != 0;
        self.continuations = 0;
        self.fragment(fragment, head.flags & frame::END_HEADERS != 0, out, each, fed)
    }

    /// A piece of the header block; at its end, the block is decoded and acted on.
    fn fragment<F: FnMut(Request<'_>, &mut Vec<u8>) -> Answer>(
        &mut self,
        fragment: &[u8],
        end: bool,
        out: &mut Vec<u8>,
        each: &mut F,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        if self.block.len() + fragment.len() > MAX_BLOCK {
            return Err(Code::EnhanceYourCalm);
        }
        self.block.extend_from_slice(fragment);
        self.expecting_continuation = !end;
        if !end {
            return Ok(());
        }
        let id = self.block_stream;
        let mut f = Fields::default();
        let block = std::mem::take(&mut self.block);
        let path = &mut self.path;
        path.clear();
        let decoded = self
            .decoder
            .decode(&block, MAX_DECODED, &mut |name, value| field(&mut f, path, name, value));
        self.block = block;
        decoded.map_err(|e| match e {
            hpack::BadBlock::TooLarge => Code::EnhanceYourCalm,
            hpack::BadBlock::Invalid => Code::Compression,
        })?;
        let existing = self.find(id);
        if let Some(problem) = self.block_problem {
            let code = match problem {
                Problem::Malformed => Code::Protocol,
                Problem::StreamClosed => Code::StreamClosed,
            };
            if id > self.last_id {
                self.last_id = id;
            }
            self.reset(out, id, code, fed);
            return Ok(());
        }
        if let Some(i) = existing {
            // Trailers: no pseudo-headers, and they end the request.
            if f.method.is_some() || f.scheme || f.path || f.authority || f.malformed {
                self.reset(out, id, Code::Protocol, fed);
            } else {
                self.end_request(i, out, fed);
                if let Some(i) = self.find(id) {
                    self.flush_stream(i, out);
                }
            }
            return Ok(());
        }
        self.last_id = id;
        if self.peer_gone {
            fed.streams.refused += 1;
            self.remember(id, Closed::ResetByUs);
            frame::rst_stream(out, id, Code::RefusedStream);
            return Ok(());
        }
        if self.streams.len() >= self.limits.max_streams as usize {
            fed.streams.refused += 1;
            self.remember(id, Closed::ResetByUs);
            frame::rst_stream(out, id, Code::RefusedStream);
            return Ok(());
        }
        fed.streams.opened += 1;
        let mut s = self.spare.pop().unwrap_or_else(|| Stream {
            id,
            recv_window: 0,
            send_window: 0,
            recv_owed: 0,
            pending: Vec::new(),
            method: Method::Other,
            ended_in: false,
            abort_in: false,
            end_out: false,
            done_out: false,
            expect_len: None,
            got_len: 0,
        });
        s.open(id, self.peer_initial_window);
        self.streams.push(s);
        let i = self.streams.len() - 1;
        let whole = if f.connect {
            f.authority && !f.scheme && !f.path
        } else {
            f.scheme && f.path
        };
        let Some(method) = f.method.filter(|_| whole && !f.malformed) else {
            self.reset(out, id, Code::Protocol, fed);
            return Ok(());
        };
        self.streams[i].method = method;
        self.streams[i].expect_len = f.content_length;
        if self.block_end_stream {
            if f.content_length.is_some_and(|n| n != 0) {
                // Its content-length promised a body that will not come.
                self.reset(out, id, Code::Protocol, fed);
                return Ok(());
            }
            self.streams[i].ended_in = true;
        }
        // The answer, after the request's work.
        let status: &[u8] = if f.list_size > MAX_HEAD {
            b"431"
        } else if method == Method::Other {
            b"405"
        } else if method == Method::Echo && f.content_length.is_some_and(|n| n > self.limits.max_body as u64) {
            b"413"
        } else if each(Request { target: &self.path }, out) == Answer::Refuse {
            b"400"
        } else {
            b"200"
        };
        fed.requests += 1;
        let s = &mut self.streams[i];
        if status != b"200" {
            // Refused with a status and a short body; a body still coming is not wanted.
            s.method = Method::Other;
            s.pending.extend_from_slice(refusal_body(status));
            self.held += s.pending.len();
            s.end_out = true;
            response_head(out, id, status, None, s.pending.len(), false);
            s.abort_in = !s.ended_in;
            self.flush_stream(i, out);
            return Ok(());
        }
        match method {
            Method::Get => {
                s.pending.extend_from_slice(BODY);
                self.held += BODY.len();
                s.end_out = true;
                response_head(out, id, b"200", Some(b"text/html"), BODY.len(), false);
            }
            Method::Head => {
                s.end_out = true;
                s.done_out = true;
                response_head(out, id, b"200", Some(b"text/html"), BODY.len(), true);
            }
            Method::Echo => {
                let len = f.content_length.map_or(usize::MAX, |n| n as usize);
                response_head(out, id, b"200", Some(b"application/octet-stream"), len, false);
                s.end_out = s.ended_in;
            }
            Method::Other => unreachable!("refused above"),
        }
        self.flush_stream(i, out);
        Ok(())
    }

    /// Sends what window allows of every stream's pending body, and ends the streams that are
    /// done.
    fn flush(&mut self, out: &mut Vec<u8>) {
        let mut i = 0;
        while i < self.streams.len() {
            if self.flush_stream(i, out) {
                continue; // stream i was closed: another moved into its place
            }
            i += 1;
        }
    }

    /// Flushes stream `i`; `true` if it is done and was removed.
    fn flush_stream(&mut self, i: usize, out: &mut Vec<u8>) -> bool {
        let max_frame = self.peer_max_frame;
        let s = &mut self.streams[i];
        while !s.pending.is_empty() {
            let n = (s.pending.len() as i64)
                .min(s.send_window)
                .min(self.send_window)
                .min(max_frame as i64);
            if n <= 0 {
                return false;
            }
            let n = n as usize;
            let last = n == s.pending.len() && s.end_out;
            frame::head(out, n, frame::DATA, if last { frame::END_STREAM } else { 0 }, s.id);
            out.extend_from_slice(&s.pending[..n]);
            s.pending.drain(..n);
            if s.pending.is_empty() && s.pending.capacity() > KEEP_BUFFER {
                s.pending = Vec::new();
            }
            s.send_window -= n as i64;
            self.send_window -= n as i64;
            self.held -= n;
            if last {
                s.done_out = true;
            }
        }
        if s.end_out && !s.done_out {
            frame::head(out, 0, frame::DATA, frame::END_STREAM, s.id);
            s.done_out = true;
        }
        if s.done_out && s.abort_in {
            frame::rst_stream(out, s.id, Code::NoError);
            self.close(i, Closed::ResetByUs);
            return true;
        }
        if s.done_out && s.ended_in {
            self.close(i, Closed::Finished);
            return true;
        }
        false
    }

    /// Grants back the window the client's DATA used, on the connection and on stream `only`
    /// (every stream: `None`), while the held output is under `max_output`.
    fn grant(&mut self, out: &mut Vec<u8>, only: Option<u32>) {
        if self.held >= self.limits.max_output {
            return;
        }
        if self.recv_owed > 0 {
            frame::window_update(out, 0, self.recv_owed);
            self.recv_window += i64::from(self.recv_owed);
            self.recv_owed = 0;
        }
        for s in &mut self.streams {
            if only.is_none_or(|id| id == s.id) && s.recv_owed > 0 && !s.ended_in {
                frame::window_update(out, s.id, s.recv_owed);
                s.recv_window += i64::from(s.recv_owed);
                s.recv_owed = 0;
            }
        }
    }

    /// A stream error: RST_STREAM with `code`; the stream, if open, is dropped.
    fn reset(&mut self, out: &mut Vec<u8>, id: u32, code: Code, fed: &mut Fed) {
        frame::rst_stream(out, id, code);
        fed.streams.reset += 1;
        match self.find(id) {
            Some(i) => self.close(i, Closed::ResetByUs),
            None => self.remember(id, Closed::ResetByUs),
        }
    }

    fn find(&self, id: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == id)
    }

    fn close(&mut self, i: usize, how: Closed) {
        let mut s = self.streams.swap_remove(i);
        self.held -= s.pending.len();
        if s.pending.capacity() > KEEP_BUFFER {
            s.pending = Vec::new();
        }
        self.remember(s.id, how);
        self.spare.push(s);
    }

    fn remember(&mut self, id: u32, how: Closed) {
        self.closed[self.closed_next] = (id, how);
        self.closed_next = (self.closed_next + 1) % self.closed.len();
    }

    fn was_closed(&self, id: u32) -> Option<Closed> {
        self.closed
            .iter()
            .find(|(i, _)| *i == id && id != 0)
            .map(|&(_, how)| how)
    }
}

/// The payload of a DATA or HEADERS frame without its padding.
fn unpad(head: Head, payload: &[u8]) -> Result<&[u8], Code> {
    if head.flags & frame::PADDED == 0 {
        return Ok(payload);
    }
    let (&pad, rest) = payload.split_first().ok_or(Code::FrameSize)?;
    let pad = usize::from(pad);
    if pad >= payload.len() {
        return Err(Code::Protocol);
    }
    Ok(&rest[..rest.len() - pad])
}

/// The stream a PRIORITY block depends on.
fn dependency(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff
}

/// One decoded request field, checked (RFC 9113 8.2 and 8.3).
fn field(f: &mut Fields, path: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    f.list_size += name.len() + value.len() + 32;
    // RFC 9113 8.2.1: a name is lowercase token characters (a pseudo-header's after its
    // colon); a value holds no NUL, CR or LF and neither starts nor ends with whitespace.
    let token = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || b"!#$%&'*+-.^_`|~".contains(c);
    let bare = name.strip_prefix(b":").unwrap_or(name);
    let bad_value = value.iter().any(|c| matches!(c, 0 | b'\r' | b'\n'))
        || value.first().is_some_and(|c| matches!(c, b' ' | b'\t'))
        || value.last().is_some_and(|c| matches!(c, b' ' | b'\t'));
    if bare.is_empty() || !bare.iter().all(token) || bad_value {
        f.malformed = true;
        return;
    }
    if name[0] == b':' {
        if f.regular_seen {
            f.malformed = true;
            return;
        }
        match name {
            b":method" if f.method.is_none() => {
                f.method = Some(match value {
                    b"GET" => Method::Get,
                    b"HEAD" => Method::Head,
                    b"POST" | b"PUT" => Method::Echo,
                    _ => Method::Other,
                });
                f.connect = value == b"CONNECT";
            }
            b":scheme" if !f.scheme => f.scheme = true,
            b":path" if !f.path && !value.is_empty() => {
                f.path = true;
                path.extend_from_slice(value);
            }
            b":authority" if !f.authority => f.authority = true,
            _ => f.malformed = true,
        }
        return;
    }
    f.regular_seen = true;
    match name {
        b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade" => f.malformed = true,
        b"te" if value != b"trailers" => f.malformed = true,
        b"content-length" => {
            let n = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u64>().ok());
            match (n, f.content_length) {
                (Some(n), None) => f.content_length = Some(n),
                (Some(n), Some(m)) if n == m => {}
                _ => f.malformed = true,
            }
        }
        _ => {}
    }
}

/// The one-line body of a refusal.
fn refusal_body(status: &[u8]) -> &'static [u8] {
    match status {
        b"400" => b"bad request\n",
        b"405" => b"method not allowed\n",
        b"413" => b"request body over the limit\n",
        _ => b"request head over 8 KiB\n",
    }
}

/// Appends a response's HEADERS frame: status, server, content type and length (`usize::MAX`:
/// none), END_STREAM when the response has no body.
fn response_head(out: &mut Vec<u8>, id: u32, status: &[u8], ctype: Option<&[u8]>, len: usize, end: bool) {
    let at = out.len();
    frame::head(
        out,
        0,
        frame::HEADERS,
        frame::END_HEADERS | if end { frame::END_STREAM } else { 0 },
        id,
    );
    let start = out.len();
    if status == b"200" {
        hpack::put_indexed(out, hpack::STATUS);
    } else {
        hpack::put_literal(out, hpack::STATUS, status);
    }
    hpack::put_literal(out, hpack::SERVER, b"muxlab");
    if let Some(t) = ctype {
        hpack::put_literal(out, hpack::CONTENT_TYPE, t);
    }
    if len != usize::MAX {
        let mut digits = [0u8; 20];
        let mut n = len;
        let mut k = digits.len();
        loop {
            k -= 1;
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        hpack::put_literal(out, hpack::CONTENT_LENGTH, &digits[k..]);
    }
    let l = ((out.len() - start) as u32).to_be_bytes();
    out[at..at + 3].copy_from_slice(&l[1..]);
}

#[cfg(test)]
mod tests;
