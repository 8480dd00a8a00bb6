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

mod flow;
pub mod frame;
mod headers;
pub(crate) mod hpack;
pub(crate) mod huffman;
mod message;
mod stream;
pub mod wire;

use frame::{dependency, unpad, Code, Head};
use message::{field, refusal_body, response_head, Fields, Method};
use stream::{Closed, Stream};

use super::{Answer, Each, Fed, Limits, Request};
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

/// A stream error found while a header block was read; applied once the block is decoded
/// (the HPACK state must follow every block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Problem {
    Malformed,
    StreamClosed,
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
    pub fn feed<F: Each>(&mut self, mut input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
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
    fn frames<F: Each>(&mut self, b: &[u8], out: &mut Vec<u8>, each: &mut F, fed: &mut Fed) -> usize {
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
    fn frame<F: Each>(
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

#[cfg(test)]
mod tests;
