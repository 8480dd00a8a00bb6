//! The HTTP/1.1 client session: each class's request bytes (made once for the run), a
//! generated body where the run sends one, responses framed in order (a response delimited by
//! the close completes at the close), and the event stream the oldest request's response may
//! be.

use std::sync::Arc;
use std::time::Instant;

use super::{Books, ClientProtocol, Ctx, Link, Sent, Streams};
use crate::load::{append_body, pattern, ErrorClass, HttpReader, Read};

/// An HTTP/1.1 connection's session.
#[derive(Debug)]
pub struct Http1 {
    reader: HttpReader,
    /// Each class's request head (and fixed body).
    requests: Arc<Vec<Vec<u8>>>,
    /// A generated body of this many bytes (`--size`), chunked or not.
    body: Option<(usize, bool)>,
    streams: Streams,
}

impl Http1 {
    /// Sends `requests` (by class), each followed by a generated `body`; reads with `reader`.
    pub fn new(reader: HttpReader, requests: Arc<Vec<Vec<u8>>>, body: Option<(usize, bool)>) -> Http1 {
        Http1 {
            reader,
            requests,
            body,
            streams: Streams::default(),
        }
    }

    /// The bytes of the oldest response's event stream that this read brought.
    fn stream_events<B: Books + ?Sized>(&mut self, now: Instant, cx: &mut Ctx<B>) {
        let bytes = self.reader.stream_bytes();
        if !bytes.is_empty() || !self.streams.is_empty() {
            self.streams.feed(0, &bytes, now, cx);
        }
        self.reader.give_back(bytes);
    }

    /// A whole response of `status` (`close`: the server closes after it).
    fn done<B: Books + ?Sized>(
        &mut self,
        status: u16,
        close: bool,
        now: Instant,
        cx: &mut Ctx<B>,
    ) -> Result<(), ErrorClass> {
        if close {
            cx.server_closes();
        }
        self.streams.end(Some(0), now, false, cx.books);
        cx.complete(0, Some(status), now).map(drop)
    }
}

impl ClientProtocol for Http1 {
    fn start(&mut self, _: Link, _: &mut Vec<u8>) -> Result<(), ErrorClass> {
        Ok(())
    }

    fn room(&self) -> usize {
        usize::MAX
    }

    fn closing(&self) -> bool {
        false
    }

    fn write<B: Books + ?Sized>(
        &mut self,
        class: u8,
        seq: &mut u64,
        _: bool,
        _: Instant,
        cx: &mut Ctx<B>,
    ) -> (u32, u16) {
        let s = *seq;
        *seq += 1;
        cx.out.extend_from_slice(&self.requests[usize::from(class)]);
        if let Some((size, chunked)) = self.body {
            let slot = cx.slot;
            append_body(cx.out, size, chunked, |off, piece| pattern(slot, s, off, piece));
        }
        (0, 0)
    }

    fn sent<B: Books + ?Sized>(&mut self, _: Instant, _: &mut B) {}

    fn input<B: Books + ?Sized>(&mut self, bytes: &[u8], now: Instant, cx: &mut Ctx<B>) -> Result<(), ErrorClass> {
        self.reader.push(bytes);
        loop {
            let read = self.reader.next_response();
            self.stream_events(now, cx);
            match read {
                Read::Done { status, close } => self.done(status, close, now, cx)?,
                Read::More => return Ok(()),
                Read::Bad => return Err(ErrorClass::BadResponse),
                Read::Mismatch => return Err(ErrorClass::EchoMismatch),
            }
        }
    }

    fn closed<B: Books + ?Sized>(&mut self, now: Instant, cx: &mut Ctx<B>) -> Result<(), ErrorClass> {
        match self.reader.at_close() {
            Some(Read::Done { status, .. }) => {
                self.stream_events(now, cx);
                self.done(status, true, now, cx)
            }
            Some(Read::Mismatch) => Err(ErrorClass::EchoMismatch),
            _ => Ok(()),
        }
    }

    fn mid_message(&self) -> bool {
        self.reader.mid_response()
    }

    fn reset(&mut self, next_seq: u64, _: &[Sent]) {
        self.reader.reset(next_seq);
    }

    fn streams(&self) -> Option<&Streams> {
        Some(&self.streams)
    }

    fn streams_mut(&mut self) -> Option<&mut Streams> {
        Some(&mut self.streams)
    }

    fn streaming(&self, pos: usize, r: &Sent) -> bool {
        (self.reader.event_stream() && pos == 0) || self.streams.has(r.stream)
    }

    fn unstarted_stream(&self, pos: usize, _: &Sent, forced: bool) -> bool {
        // The oldest request's response is the one whose head was read.
        !self.streams.has(0) && (forced || (self.reader.event_stream() && pos == 0))
    }
}
