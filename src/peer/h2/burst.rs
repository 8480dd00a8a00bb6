//! A client's burst of concurrent echoed streams, sans I/O, for tests and tools (the memory
//! probes): `streams` POSTs of `body` bytes each, opened at once, their DATA sent as the
//! server's connection window allows, until every echo has come back. The caller moves the
//! bytes: [`Burst::start`] first, then [`Burst::input`] with whatever the server sent, until
//! [`Burst::done`].

use crate::peer::h2::wire::{self, Coding};
use crate::proto::h2::frame::{self, Frame, ReadError, Reader};

/// One connection's burst.
#[derive(Debug)]
pub struct Burst {
    streams: u32,
    body: usize,
    /// Body bytes sent so far, over all streams (stream `k` gets them in order).
    sent: usize,
    /// What the server's connection window still lets us send.
    window: i64,
    /// Echoed bytes received, and streams the server ended.
    echoed: usize,
    ended: u32,
    reader: Reader,
}

/// What went wrong with a burst: the server reset a stream, said GOAWAY, or sent bad frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BurstError {
    /// The server reset `stream` (RST_STREAM).
    #[error("the server sent frame type {} on stream {stream}", frame::RST_STREAM)]
    Reset { stream: u32 },
    /// The server said GOAWAY (on `stream`, which is 0 from a server that keeps the rules).
    #[error("the server sent frame type {} on stream {stream}", frame::GOAWAY)]
    GoAway { stream: u32 },
    /// The server's bytes that do not read as frames.
    #[error("the server's frames: {0:?}")]
    Frames(ReadError),
}

impl Burst {
    /// A burst of `streams` streams (at most 1,000) echoing `body` bytes each (at most one
    /// initial stream window, 65,535).
    pub fn new(streams: u32, body: usize) -> Burst {
        assert!(streams <= 1000 && body as i64 <= frame::INITIAL_WINDOW);
        Burst {
            streams,
            body,
            sent: 0,
            window: frame::INITIAL_WINDOW,
            echoed: 0,
            ended: 0,
            reader: Reader::new(64 * 1024, 64),
        }
    }

    /// The preface, a window for every echo, every stream's HEADERS, and what DATA the
    /// server's initial window takes.
    pub fn start(&mut self, out: &mut Vec<u8>) {
        wire::preface(out);
        wire::window_update(
            out,
            0,
            (self.streams as usize * self.body).clamp(1, i32::MAX as usize) as u32,
        );
        let len = self.body.to_string();
        let block = wire::request_block("POST", "/", &[("content-length", &len)], Coding::Plain);
        for k in 0..self.streams {
            wire::headers(out, 1 + 2 * k, &block, self.body == 0);
        }
        self.send_data(out);
    }

    /// What the server sent; what to send back (DATA the window now allows, SETTINGS ACKs).
    pub fn input(&mut self, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), BurstError> {
        let (mut granted, mut acks) = (0i64, 0);
        let (echoed, ended) = (&mut self.echoed, &mut self.ended);
        let read = self.reader.read(bytes, &mut |f| {
            let Frame::Single(h, p) = f else {
                if let Frame::Headers(b) = f {
                    *ended += u32::from(b.ends_stream());
                }
                return Ok(());
            };
            match h.kind {
                frame::DATA => {
                    *echoed += p.len();
                    *ended += u32::from(h.flags & frame::END_STREAM != 0);
                }
                frame::SETTINGS if h.flags & frame::ACK == 0 => acks += 1,
                frame::WINDOW_UPDATE if h.stream == 0 && p.len() == 4 => {
                    granted += i64::from(u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & 0x7fff_ffff);
                }
                frame::RST_STREAM => return Err(BurstError::Reset { stream: h.stream }),
                frame::GOAWAY => return Err(BurstError::GoAway { stream: h.stream }),
                _ => {}
            }
            Ok(())
        });
        read.map_err(|e: BurstError| e)?;
        for _ in 0..acks {
            wire::frame(out, frame::SETTINGS, frame::ACK, 0, &[]);
        }
        self.window += granted;
        self.send_data(out);
        Ok(())
    }

    /// Every stream was echoed whole and ended.
    pub fn done(&self) -> bool {
        self.ended == self.streams && self.echoed == self.streams as usize * self.body
    }

    /// DATA in order of streams, as much as the window allows, frames of 16 KiB at most.
    fn send_data(&mut self, out: &mut Vec<u8>) {
        let total = self.streams as usize * self.body;
        while self.sent < total && self.window > 0 {
            let (k, at) = (self.sent / self.body, self.sent % self.body);
            let n = (self.body - at).min(frame::MAX_FRAME).min(self.window as usize);
            let payload = vec![b'a' + (k % 26) as u8; n];
            wire::data(out, 1 + 2 * k as u32, &payload, at + n == self.body);
            self.sent += n;
            self.window -= n as i64;
        }
    }
}

impl From<ReadError> for BurstError {
    fn from(e: ReadError) -> BurstError {
        BurstError::Frames(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a burst makes of the server's `bytes`.
    fn after(bytes: &[u8]) -> Result<(), BurstError> {
        let mut b = Burst::new(2, 10);
        b.start(&mut Vec::new());
        b.input(bytes, &mut Vec::new())
    }

    #[test]
    fn a_reset_a_goaway_and_bad_frames_are_each_their_fault() {
        let mut rst = Vec::new();
        wire::frame(&mut rst, frame::RST_STREAM, 0, 3, &[0, 0, 0, 8]);
        let e = after(&rst).unwrap_err();
        assert_eq!(e, BurstError::Reset { stream: 3 });
        assert_eq!(e.to_string(), "the server sent frame type 3 on stream 3");
        let mut goaway = Vec::new();
        wire::frame(&mut goaway, frame::GOAWAY, 0, 0, &[0; 8]);
        let e = after(&goaway).unwrap_err();
        assert_eq!(e, BurstError::GoAway { stream: 0 });
        assert_eq!(e.to_string(), "the server sent frame type 7 on stream 0");
        // HEADERS on stream 0: not a frame a reader takes.
        let mut headers = Vec::new();
        wire::frame(&mut headers, frame::HEADERS, frame::END_HEADERS, 0, &[0x88]);
        let e = after(&headers).unwrap_err();
        assert!(matches!(e, BurstError::Frames(_)), "{e:?}");
        assert!(e.to_string().starts_with("the server's frames: "), "{e}");
    }
}
