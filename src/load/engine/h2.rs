//! The engine's side of HTTP/2 targets: a connection's session starts when it is up (after
//! TLS, whose ALPN must have picked h2), each request opens a stream, and what the session
//! reads out of the server's frames is acted on here: responses complete in any order, a
//! refused stream and those above a GOAWAY's last stream are sent again (keeping when they
//! were meant to go), a reset stream is an error of its own.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::conn::Sent;
use super::Engine;
use crate::load::h2::{Event, Fault};
use crate::load::ErrorClass;

/// Set once a protocol failure has been explained on stderr.
static SAID: AtomicBool = AtomicBool::new(false);

/// Times a request is sent again before it counts as failed (`stream_reset`): a server that
/// refuses every stream must not keep the client resending forever.
pub(super) const MAX_TRIES: u8 = 3;

impl Engine<'_> {
    /// The connection is up: checks ALPN (TLS) and writes the preface. `false` if it failed.
    pub(super) fn h2_up(&mut self, i: usize, now: Instant) -> bool {
        let c = &mut self.conns[i];
        if let Some(tls) = c.tls() {
            if tls.alpn_protocol() != Some(b"h2") {
                self.say("the server did not pick h2 in the TLS handshake (ALPN)");
                self.fail(i, ErrorClass::Tls, now);
                return false;
            }
        }
        if let Some(h) = c.h2.as_mut() {
            h.start(c.out.queue());
        }
        self.flush(i).is_ok()
    }

    /// Opens a stream for the next request of `class` on connection `i` (its HEADERS, and what
    /// the windows allow of its body, go to the connection's output); returns the stream and
    /// the lane it took.
    pub(super) fn h2_open(&mut self, i: usize, class: u8, now: Instant) -> (u32, u16) {
        let c = &mut self.conns[i];
        let lane = c.lanes.pop_front().unwrap_or(0);
        if c.h2.is_none() {
            return (0, lane);
        }
        let seq = c.next_seq();
        let h = c.h2.as_mut().expect("checked above");
        let id = h.open(c.out.queue(), class, seq);
        let open = h.open_streams() as u64;
        if let (true, Some(t)) = (self.window.inside(now), self.tally.h2.as_mut()) {
            t.streams += 1;
            t.in_flight_max = t.in_flight_max.max(open);
        }
        (id, lane)
    }

    /// Sends again a request the server did not process, as it was meant to go.
    pub(super) fn resend(&mut self, i: usize, r: Sent, now: Instant) {
        let (stream, lane) = self.h2_open(i, r.class, now);
        if let (true, Some(t)) = (self.window.inside(now), self.tally.h2.as_mut()) {
            t.retried += 1;
        }
        let c = &mut self.conns[i];
        c.inflight.push_back(Sent {
            at: now,
            stream,
            lane,
            tries: r.tries,
            ..r
        });
        c.sent_one();
    }

    /// Adds what connection `i`'s session counted to the window's figures.
    pub(super) fn harvest(&mut self, i: usize, now: Instant) {
        let Some(h) = self.conns[i].h2.as_mut() else { return };
        let counts = std::mem::take(&mut h.counts);
        if let (true, Some(t)) = (self.window.inside(now), self.tally.h2.as_mut()) {
            t.counts.add(&counts);
        }
    }

    /// Takes the request of stream `id` out of those in flight on connection `i`.
    fn take(&mut self, i: usize, id: u32) -> Option<Sent> {
        let c = &mut self.conns[i];
        let pos = c.inflight.iter().position(|r| r.stream == id)?;
        let r = c.inflight.remove(pos)?;
        c.lanes.push_back(r.lane);
        Some(r)
    }

    /// Request `r`, which the server did not process, is to be sent again: on this connection
    /// or the next, keeping its intended time; after [`MAX_TRIES`] it fails instead.
    pub(super) fn again(&mut self, i: usize, mut r: Sent, now: Instant) {
        r.tries += 1;
        if r.tries <= MAX_TRIES {
            self.conns[i].retry.push_back(r);
            return;
        }
        self.abandon(r, ErrorClass::StreamReset, now);
    }

    /// Sends what waits to be sent again on connection `i`, where pacing would not call
    /// `fill` by itself (an open loop offers a connection only while sends are due).
    pub(super) fn send_retries(&mut self, i: usize, now: Instant) {
        if !self.conns[i].retry.is_empty() {
            self.fill(i, now);
        }
    }

    /// Bytes of `self.buf` for connection `i`'s session; `false` when the connection was
    /// closed meanwhile.
    pub(super) fn h2_consume(&mut self, i: usize, n: usize, now: Instant) -> bool {
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        let c = &mut self.conns[i];
        let Some(h) = c.h2.as_mut() else { return false };
        let r = h.push(&self.buf[..n], c.out.queue(), &mut events);
        if h.closing() {
            c.server_closes();
        }
        self.harvest(i, now);
        // What the server completed before a fault is counted first.
        let ok = self.h2_events(i, &mut events, now)
            && match r {
                Ok(()) => true,
                Err(Fault::Mismatch) => {
                    self.fail(i, ErrorClass::EchoMismatch, now);
                    false
                }
                Err(broke @ (Fault::Frame(_) | Fault::Violation(_))) => {
                    self.say(broke);
                    self.fail(i, ErrorClass::BadResponse, now);
                    false
                }
            };
        self.events = events;
        // Acknowledgements, window updates and bodies the windows let go.
        ok && (self.conns[i].out.is_empty() || self.flush(i).is_ok())
    }

    fn h2_events(&mut self, i: usize, events: &mut Vec<Event>, now: Instant) -> bool {
        let inside = self.window.inside(now);
        for e in events.drain(..) {
            match e {
                Event::Data { id, from, to } => {
                    let bytes = std::mem::take(&mut self.conns[i].h2.as_mut().expect("an h2 connection").streamed);
                    self.stream_bytes(i, id, &bytes[from as usize..to as usize], now);
                    if let Some(h) = self.conns[i].h2.as_mut() {
                        h.streamed = bytes;
                    }
                }
                Event::Done { id, status } => {
                    let Some(pos) = self.conns[i].inflight.iter().position(|r| r.stream == id) else {
                        self.fail(i, ErrorClass::BadResponse, now);
                        return false;
                    };
                    self.end_stream(i, Some(id), now, false);
                    if !self.complete(i, pos, status, now) {
                        return false;
                    }
                }
                Event::Refused { id } => {
                    if let Some(r) = self.take(i, id) {
                        if let (true, Some(t)) = (inside, self.tally.h2.as_mut()) {
                            t.refused += 1;
                        }
                        self.again(i, r, now);
                    }
                }
                Event::Reset { id, .. } => {
                    self.end_stream(i, Some(id), now, true);
                    if let Some(r) = self.take(i, id) {
                        if let (true, Some(t)) = (inside, self.tally.h2.as_mut()) {
                            t.reset += 1;
                        }
                        self.abandon(r, ErrorClass::StreamReset, now);
                    }
                }
                Event::GoAway { last, .. } => {
                    self.conns[i].server_closes();
                    let c = &mut self.conns[i];
                    let (keep, above): (Vec<Sent>, Vec<Sent>) = c.inflight.drain(..).partition(|r| r.stream <= last);
                    c.inflight.extend(keep);
                    c.lanes.extend(above.iter().map(|r| r.lane));
                    if let (true, Some(t)) = (inside, self.tally.h2.as_mut()) {
                        t.goaway += 1;
                    }
                    for r in above {
                        self.again(i, r, now);
                    }
                }
            }
        }
        true
    }

    /// Says once what went wrong with a server's HTTP/2 (every connection would say the same).
    fn say(&self, what: impl std::fmt::Display) {
        if !SAID.swap(true, Ordering::Relaxed) {
            eprintln!("muxlab: HTTP/2 with {}: {what}", self.spec.target().host);
        }
    }
}
