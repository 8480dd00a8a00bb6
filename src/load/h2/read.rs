//! The server's side of a connection as the client reads it: frames parsed out of any split
//! of the bytes, SETTINGS and PING answered, windows kept open, each response's head and body
//! checked, and what the engine must act on raised as [`Event`]s.

use super::conn::{Event, Fault, H2Conn, LAST_ID, MAX_ACKS_WAITING, MAX_HEADER_LIST};
use crate::load::pattern;
use crate::proto::h2::frame::{self, Frame, Head, ReadError};

impl From<ReadError> for Fault {
    fn from(e: ReadError) -> Fault {
        Fault::Bad(match e {
            ReadError::FrameTooLarge => "a frame larger than SETTINGS_MAX_FRAME_SIZE",
            ReadError::StreamZero => "HEADERS on stream 0",
            ReadError::Padding(_) => "bad padding",
            ReadError::ShortPriority => "a HEADERS frame too short for its priority",
            ReadError::ContinuationExpected => "a header block not followed by its CONTINUATION",
            ReadError::ContinuationElsewhere => "a CONTINUATION on another stream",
            ReadError::StrayContinuation => "a CONTINUATION without a header block",
            ReadError::BlockTooLarge => "a response header block over 64 KiB",
            ReadError::TooManyContinuations => "a response header block in more than 64 CONTINUATION frames",
        })
    }
}

impl H2Conn {
    /// Reads the server's bytes: what must be answered goes to `out`, what the engine must act
    /// on to `events`.
    pub fn push(&mut self, data: &[u8], out: &mut Vec<u8>, events: &mut Vec<Event>) -> Result<(), Fault> {
        if !self.settings_seen && !data.is_empty() {
            self.preface(data)?;
        }
        if out.is_empty() {
            // The server took everything we had for it, acknowledgements included.
            self.acks_waiting = 0;
        }
        self.streamed.clear();
        let mut reader = std::mem::take(&mut self.reader);
        let before = reader.frames();
        let read = reader.read(data, &mut |f| self.frame(f, out, events));
        self.counts.frames_in += reader.frames() - before;
        self.reader = reader;
        read?;
        self.pump(out);
        Ok(())
    }

    /// The server's first bytes (with those an earlier read left): its preface is a SETTINGS
    /// frame, anything else is not HTTP/2.
    fn preface(&self, data: &[u8]) -> Result<(), Fault> {
        let b: Vec<u8> = self.reader.buffered().iter().chain(data).take(5).copied().collect();
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
        Ok(())
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

    fn frame(&mut self, f: Frame<'_>, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Result<(), Fault> {
        let (h, p) = match f {
            Frame::Headers(b) => return self.head(b.stream(), b.fragment, b.ends_stream(), out, events),
            // Read once whole.
            Frame::Opening(_) => return Ok(()),
            Frame::Single(h, p) => (h, p),
        };
        match h.kind {
            frame::DATA => self.data(h, p, out, events),
            frame::RST_STREAM => self.rst_stream(h, p, events),
            frame::SETTINGS => self.settings(h, p, out),
            frame::PING => {
                if p.len() != 8 || h.stream != 0 {
                    return Err(Fault::Bad("a malformed PING"));
                }
                if h.flags & frame::ACK == 0 {
                    self.ack(17)?;
                    frame::head(out, 8, frame::PING, frame::ACK, 0);
                    out.extend_from_slice(p);
                    self.counts.frames_out += 1;
                }
                Ok(())
            }
            frame::GOAWAY => self.goaway(h, p, events),
            frame::WINDOW_UPDATE => self.window_update(h, p),
            frame::PUSH_PROMISE => Err(Fault::Bad("PUSH_PROMISE, though this client disabled push")),
            // PRIORITY, and frame types this client does not know, are ignored (RFC 9113 5.5).
            _ => Ok(()),
        }
    }

    fn rst_stream(&mut self, h: Head, p: &[u8], events: &mut Vec<Event>) -> Result<(), Fault> {
        if p.len() != 4 || h.stream == 0 {
            return Err(Fault::Bad("a malformed RST_STREAM"));
        }
        let code = u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
        let Some(k) = self.find(h.stream) else {
            return self.unknown(h.stream);
        };
        self.streams.remove(k);
        events.push(match code {
            c if c == frame::Code::RefusedStream as u32 => Event::Refused { id: h.stream },
            code => Event::Reset { id: h.stream, code },
        });
        Ok(())
    }

    fn goaway(&mut self, h: Head, p: &[u8], events: &mut Vec<Event>) -> Result<(), Fault> {
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

    fn window_update(&mut self, h: Head, p: &[u8]) -> Result<(), Fault> {
        if p.len() != 4 {
            return Err(Fault::Bad("a malformed WINDOW_UPDATE"));
        }
        let inc = u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & LAST_ID;
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
        window
            .grant(inc)
            .map_err(|_| Fault::Bad("a window opened past 2^31 - 1"))?;
        self.blocked = true;
        Ok(())
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
                        s.window.shift(delta).map_err(|_| {
                            Fault::Bad("a stream window moved past 2^31 - 1 by SETTINGS_INITIAL_WINDOW_SIZE")
                        })?;
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
        self.ack(9)?;
        frame::head(out, 0, frame::SETTINGS, frame::ACK, 0);
        self.counts.frames_out += 1;
        Ok(())
    }

    /// One more acknowledgement of `len` bytes to queue: a fault once those queued since the
    /// server last took our output are past [`MAX_ACKS_WAITING`] (a server that sends PING or
    /// SETTINGS and never reads would grow the client without end).
    fn ack(&mut self, len: usize) -> Result<(), Fault> {
        self.acks_waiting += len;
        match self.acks_waiting > MAX_ACKS_WAITING {
            true => Err(Fault::Bad(
                "the server sends PING or SETTINGS faster than it reads their acknowledgements (over 512 KiB waiting)",
            )),
            false => Ok(()),
        }
    }

    fn data(&mut self, h: Head, p: &[u8], out: &mut Vec<u8>, events: &mut Vec<Event>) -> Result<(), Fault> {
        if h.stream == 0 {
            return Err(Fault::Bad("DATA on stream 0"));
        }
        // Flow control counts the whole payload, padding too.
        if self.recv.consume(h.len).is_err() {
            return Err(Fault::Bad("DATA past the connection window the client granted"));
        }
        if let Some(inc) = self.recv.release() {
            frame::window_update(out, 0, inc);
            self.counts.frames_out += 1;
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
        if s.recv.consume(h.len).is_err() {
            return Err(Fault::Bad("DATA past the stream window the client granted"));
        }
        if s.event_stream && !body.is_empty() {
            let from = self.streamed.len() as u32;
            self.streamed.extend_from_slice(body);
            events.push(Event::Data {
                id: s.id,
                from,
                to: self.streamed.len() as u32,
            });
        }
        if h.flags & frame::END_STREAM != 0 {
            return self.finish(k, out, events);
        }
        if let Some(inc) = s.recv.release() {
            frame::window_update(out, s.id, inc);
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
        let mut event_stream = false;
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
                    b"content-type" => event_stream = v.starts_with(b"text/event-stream"),
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
                    s.event_stream = st == 200 && (event_stream || self.plan.sse) && !self.plan.head_only;
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
