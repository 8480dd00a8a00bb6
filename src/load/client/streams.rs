//! [`Streams`]: the event streams one connection is receiving, by HTTP/2 stream (HTTP/1.1's,
//! the oldest request's response, is 0): each one's time to first event, gaps and ids, counted
//! in the window's figures or the warm-up's.

use std::time::Instant;

use super::{Books, Ctx, Sent};
use crate::load::{SseStream, SseTally};

/// A connection's event streams.
#[derive(Debug, Default)]
pub struct Streams {
    open: Vec<(u32, SseStream)>,
}

impl Streams {
    /// Body bytes of event stream `id` that arrived at `now`. A stream first seen is timed
    /// from its request's intended time.
    pub fn feed<B: Books + ?Sized>(&mut self, id: u32, bytes: &[u8], now: Instant, cx: &mut Ctx<B>) {
        let k = match self.open.iter().position(|(s, _)| *s == id) {
            Some(k) => k,
            None => {
                let sent = cx.inflight.iter().find(|r| id == 0 || r.stream == id);
                let intended = sent.map_or(now, |r| r.intended);
                self.open.push((id, SseStream::new(intended)));
                cx.books.stream_open(true);
                self.open.len() - 1
            }
        };
        let inside = cx.books.inside(now);
        let t = cx.books.events(now).sse.get_or_insert_with(Default::default);
        let before = t.events;
        self.open[k].1.feed(bytes, now, t);
        let got = t.events - before;
        if inside && got > 0 {
            cx.books.events_of(cx.index, got);
        }
    }

    /// Event stream `id` ended (`cut`: before its end; `None`: every stream): its totals are
    /// counted.
    pub fn end<B: Books + ?Sized>(&mut self, id: Option<u32>, now: Instant, cut: bool, books: &mut B) {
        while let Some(k) = self.open.iter().position(|(s, _)| id.is_none_or(|id| *s == id)) {
            let (_, stream) = self.open.swap_remove(k);
            books.stream_open(false);
            stream.end(now, cut, books.events(now).sse.get_or_insert_with(Default::default));
        }
    }

    /// No stream is being received.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Stream `id` is being received.
    pub fn has(&self, id: u32) -> bool {
        self.open.iter().any(|(s, _)| *s == id)
    }

    /// Since when request `r` has been quiet: its stream's last event (HTTP/1.1's stream is
    /// 0), else its send.
    pub fn quiet_since(&self, r: &Sent) -> Instant {
        let streaming = self.open.iter().find(|(id, _)| *id == r.stream || *id == 0);
        streaming.and_then(|(_, s)| s.last()).unwrap_or(r.at).max(r.at)
    }

    /// At the window's close: each stream's open gap counts as of `now`.
    pub fn at_close(&self, now: Instant, t: &mut SseTally) {
        for (_, s) in &self.open {
            s.at_close(now, t);
        }
    }
}
