//! The HTTP/2 client session: it starts when the connection is up (over TLS, once ALPN picked
//! h2) with its preface; each request opens a stream on a lane of the connection's
//! `--streams`; what the session reads out of the server's frames is acted on here: responses
//! complete in any order, a refused stream and those above a GOAWAY's last stream are sent
//! again (keeping when they were meant to go), a reset stream is an error of its own, and an
//! event stream's body feeds its stream's figures.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{Books, ClientProtocol, Ctx, Link, Sent, Streams};
use crate::load::h2::{Event, Fault, H2Conn};
use crate::load::ErrorClass;

/// Set once a protocol failure has been explained on stderr.
static SAID: AtomicBool = AtomicBool::new(false);

/// An HTTP/2 connection's session.
#[derive(Debug)]
pub struct H2 {
    conn: H2Conn,
    /// Lanes free for a new stream, the one freed longest ago first (so each lane is a closed
    /// loop of its own, and an open loop's requests take them in turn).
    lanes: VecDeque<u16>,
    /// The connection's lanes (`--streams`).
    width: usize,
    streams: Streams,
    /// The events one read raised.
    events: Vec<Event>,
    /// The server's name, as a failure says it.
    host: std::sync::Arc<str>,
}

impl H2 {
    /// Over `conn`, with `width` lanes, to `host`.
    pub fn new(conn: H2Conn, width: usize, host: std::sync::Arc<str>) -> H2 {
        H2 {
            conn,
            lanes: (0..width as u16).collect(),
            width,
            streams: Streams::default(),
            events: Vec::new(),
            host,
        }
    }

    /// Says once what went wrong with a server's HTTP/2 (every connection would say the same).
    fn say(&self, what: impl std::fmt::Display) {
        if !SAID.swap(true, Ordering::Relaxed) {
            eprintln!("muxlab: HTTP/2 with {}: {what}", self.host);
        }
    }

    /// Takes the request of stream `id` out of those in flight, its lane free again.
    fn take<B: Books + ?Sized>(&mut self, id: u32, cx: &mut Ctx<B>) -> Option<Sent> {
        let r = cx.take_stream(id)?;
        self.lanes.push_back(r.lane);
        Some(r)
    }

    /// Acts on what one read's frames raised; an error where the connection cannot go on.
    fn on_events<B: Books + ?Sized>(
        &mut self,
        events: &mut Vec<Event>,
        now: Instant,
        cx: &mut Ctx<B>,
    ) -> Result<(), ErrorClass> {
        let inside = cx.books.inside(now);
        for e in events.drain(..) {
            match e {
                Event::Data { id, from, to } => {
                    let bytes = &self.conn.streamed[from as usize..to as usize];
                    self.streams.feed(id, bytes, now, cx);
                }
                Event::Done { id, status } => {
                    let pos = cx.position(id).ok_or(ErrorClass::BadResponse)?;
                    self.streams.end(Some(id), now, false, cx.books);
                    let (r, counts) = cx.complete(pos, Some(status), now)?;
                    self.lanes.push_back(r.lane);
                    if let (true, Some(t)) = (counts, cx.books.tally().h2.as_mut()) {
                        t.per_lane[cx.index * self.width + usize::from(r.lane)] += 1;
                        t.stream_ns += now.duration_since(r.at).as_nanos() as u64;
                    }
                }
                Event::Refused { id } => {
                    if let Some(r) = self.take(id, cx) {
                        if let (true, Some(t)) = (inside, cx.books.tally().h2.as_mut()) {
                            t.refused += 1;
                        }
                        cx.again(r, now);
                    }
                }
                Event::Reset { id, .. } => {
                    self.streams.end(Some(id), now, true, cx.books);
                    if let Some(r) = self.take(id, cx) {
                        if let (true, Some(t)) = (inside, cx.books.tally().h2.as_mut()) {
                            t.reset += 1;
                        }
                        cx.abandon(r, ErrorClass::StreamReset, now);
                    }
                }
                Event::GoAway { last, .. } => {
                    cx.server_closes();
                    let above = cx.take_above(last);
                    self.lanes.extend(above.iter().map(|r| r.lane));
                    if let (true, Some(t)) = (inside, cx.books.tally().h2.as_mut()) {
                        t.goaway += 1;
                    }
                    for r in above {
                        cx.again(r, now);
                    }
                }
            }
        }
        Ok(())
    }
}

impl ClientProtocol for H2 {
    fn start(&mut self, link: Link, out: &mut Vec<u8>) -> Result<(), ErrorClass> {
        if let Link::Tls { alpn } = link {
            if alpn != Some(b"h2") {
                self.say("the server did not pick h2 in the TLS handshake (ALPN)");
                return Err(ErrorClass::Tls);
            }
        }
        self.conn.start(out);
        Ok(())
    }

    fn room(&self) -> usize {
        self.conn.room()
    }

    fn closing(&self) -> bool {
        self.conn.closing()
    }

    fn write<B: Books + ?Sized>(
        &mut self,
        class: u8,
        seq: &mut u64,
        retried: bool,
        now: Instant,
        cx: &mut Ctx<B>,
    ) -> (u32, u16) {
        let lane = self.lanes.pop_front().unwrap_or(0);
        let s = *seq;
        *seq += 1;
        let id = self.conn.open(cx.out, class, s);
        let open = self.conn.open_streams() as u64;
        if let (true, Some(t)) = (cx.books.inside(now), cx.books.tally().h2.as_mut()) {
            t.streams += 1;
            t.in_flight_max = t.in_flight_max.max(open);
            t.retried += u64::from(retried);
        }
        (id, lane)
    }

    fn sent<B: Books + ?Sized>(&mut self, now: Instant, books: &mut B) {
        let counts = std::mem::take(&mut self.conn.counts);
        if let (true, Some(t)) = (books.inside(now), books.tally().h2.as_mut()) {
            t.counts.add(&counts);
        }
    }

    fn input<B: Books + ?Sized>(&mut self, bytes: &[u8], now: Instant, cx: &mut Ctx<B>) -> Result<(), ErrorClass> {
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        let read = self.conn.push(bytes, cx.out, &mut events);
        if self.conn.closing() {
            cx.server_closes();
        }
        self.sent(now, cx.books);
        // What the server completed before a fault is counted first.
        let acted = self.on_events(&mut events, now, cx);
        self.events = events;
        acted?;
        match read {
            Ok(()) => Ok(()),
            Err(Fault::Mismatch) => Err(ErrorClass::EchoMismatch),
            Err(broke @ (Fault::Frame(_) | Fault::Violation(_))) => {
                self.say(broke);
                Err(ErrorClass::BadResponse)
            }
        }
    }

    fn closed<B: Books + ?Sized>(&mut self, _: Instant, _: &mut Ctx<B>) -> Result<(), ErrorClass> {
        Ok(())
    }

    fn mid_message(&self) -> bool {
        false
    }

    fn reset(&mut self, _: u64, lost: &[Sent]) {
        self.conn.reset();
        self.lanes.extend(lost.iter().map(|r| r.lane));
    }

    fn streams(&self) -> Option<&Streams> {
        Some(&self.streams)
    }

    fn streams_mut(&mut self) -> Option<&mut Streams> {
        Some(&mut self.streams)
    }

    fn streaming(&self, _: usize, r: &Sent) -> bool {
        self.streams.has(r.stream) || self.conn.is_event_stream(r.stream)
    }

    fn unstarted_stream(&self, _: usize, r: &Sent, forced: bool) -> bool {
        !self.streams.has(r.stream) && (forced || self.conn.is_event_stream(r.stream))
    }
}
