//! The server's side of a connection as the client reads it: frames parsed out of any split
//! of the bytes, SETTINGS and PING answered, windows kept open, each response's head and body
//! checked, and what the client session must act on raised as [`Event`]s.

use super::conn::{Event, Fault, H2Conn, LAST_ID, MAX_ACKS_WAITING, MAX_HEADER_LIST};
use super::violation::Violation;
use crate::load::pattern;
use crate::proto::h2::frame::{self, Frame, Head};

impl H2Conn {
    /// Reads the server's bytes: what must be answered goes to `out`, what the client session must act
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
            return Err(Fault::Violation(Violation::Http1));
        }
        if b.len() > 3 && b[3] != frame::SETTINGS {
            return Err(Fault::Violation(Violation::FirstNotSettings));
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
            false => Err(Fault::Violation(Violation::NeverOpened)),
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
                    return Err(Fault::Violation(Violation::BadPing));
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
            frame::PUSH_PROMISE => Err(Fault::Violation(Violation::PushPromise)),
            // PRIORITY, and frame types this client does not know, are ignored (RFC 9113 5.5).
            _ => Ok(()),
        }
    }

    fn rst_stream(&mut self, h: Head, p: &[u8], events: &mut Vec<Event>) -> Result<(), Fault> {
        if p.len() != 4 || h.stream == 0 {
            return Err(Fault::Violation(Violation::BadRstStream));
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
            return Err(Fault::Violation(Violation::BadGoAway));
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
            return Err(Fault::Violation(Violation::BadWindowUpdate));
        }
        let inc = u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & LAST_ID;
        if inc == 0 {
            return Err(Fault::Violation(Violation::ZeroWindowUpdate));
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
            .map_err(|_| Fault::Violation(Violation::WindowOverMax))?;
        self.blocked = true;
        Ok(())
    }

    fn settings(&mut self, h: Head, p: &[u8], out: &mut Vec<u8>) -> Result<(), Fault> {
        if h.stream != 0 || !p.len().is_multiple_of(6) {
            return Err(Fault::Violation(Violation::BadSettings));
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
                        return Err(Fault::Violation(Violation::InitialWindowOverMax));
                    }
                    // Every open stream's window moves by the change (RFC 9113 6.9.2).
                    let delta = i64::from(v) - self.initial_window;
                    self.initial_window = i64::from(v);
                    for s in &mut self.streams {
                        s.window
                            .shift(delta)
                            .map_err(|_| Fault::Violation(Violation::StreamWindowShiftedOverMax))?;
                    }
                    self.blocked = true;
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    if !(frame::MAX_FRAME as u32..=0xff_ffff).contains(&v) {
                        return Err(Fault::Violation(Violation::MaxFrameSizeOutOfRange));
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
            true => Err(Fault::Violation(Violation::AckFlood {
                limit: MAX_ACKS_WAITING,
            })),
            false => Ok(()),
        }
    }

    fn data(&mut self, h: Head, p: &[u8], out: &mut Vec<u8>, events: &mut Vec<Event>) -> Result<(), Fault> {
        if h.stream == 0 {
            return Err(Fault::Violation(Violation::DataOnStreamZero));
        }
        // Flow control counts the whole payload, padding too.
        if self.recv.consume(h.len).is_err() {
            return Err(Fault::Violation(Violation::DataOverConnectionWindow));
        }
        if let Some(inc) = self.recv.release() {
            frame::window_update(out, 0, inc);
            self.counts.frames_out += 1;
        }
        let body = frame::unpad(h, p).map_err(|code| Violation::Padding { code })?;
        let Some(k) = self.find(h.stream) else {
            return self.unknown(h.stream);
        };
        let verify = self.plan.verify;
        let s = &mut self.streams[k];
        if s.status == 0 {
            return Err(Fault::Violation(Violation::DataBeforeHeaders));
        }
        if self.plan.head_only && !body.is_empty() {
            return Err(Fault::Violation(Violation::BodyToHead));
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
            return Err(Fault::Violation(Violation::DataOverStreamWindow));
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
            .map_err(Violation::Undecodable)?;
        self.counts.response_block += block.len() as u64;
        // And the blank line that ends an HTTP/1.1 head.
        self.counts.response_text += text + 2;
        let Some(k) = self.find(id) else {
            // Decoded all the same: the table must stay in step with the server's.
            return self.unknown(id);
        };
        if bad {
            return Err(Fault::Violation(Violation::BadStatusOrLength));
        }
        let s = &mut self.streams[k];
        if s.status == 0 {
            match status {
                Some(st) if (100..200).contains(&st) => {
                    // An interim response (100 Continue, 103 Early Hints): the final one follows.
                    if end_stream {
                        return Err(Fault::Violation(Violation::InterimEndsStream));
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
                None => return Err(Fault::Violation(Violation::NoStatus)),
            }
        } else if !end_stream || status.is_some() {
            return Err(Fault::Violation(Violation::SecondHead));
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
                return Err(Fault::Violation(Violation::LengthNotContentLength));
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
