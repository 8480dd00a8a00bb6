//! Receiving: reading a connection's bytes, framing responses (HTTP) or verifying echoed bytes
//! (echo, packet), and recording each completed request.

use std::io;
use std::time::Instant;

use super::conn::Sent;
use super::Engine;
use crate::load::{ErrorClass, Kind, Pacing, Read};
use crate::sys;

/// The most reads of one connection in one turn of the loop (of the engine's 256 KiB buffer).
pub(super) const READS_PER_TURN: usize = 4;

/// Receiving responses.
impl Engine<'_> {
    pub(super) fn on_readable(&mut self, i: usize, mut now: Instant, to_eof: bool) {
        if self.conns[i].tls().is_some() {
            return self.tls_readable(i, now);
        }
        let mut first = true;
        for reads in 0.. {
            // A server that keeps every read full would hold the loop here: after a few reads
            // the connection waits for the next turn, which looks at the window, the timeouts
            // and the signals first (edge-triggered: no new event would come for it).
            if reads == READS_PER_TURN {
                return self.again.push(i);
            }
            // A later read may hold responses to requests sent after the first: a fresh clock.
            if !std::mem::take(&mut first) {
                now = Instant::now();
            }
            let r = match self.conns[i].fd() {
                Some(fd) => sys::fd::read(fd, &mut self.buf),
                None => return,
            };
            match r {
                Ok(0) => return self.on_eof(i, now),
                Ok(n) => {
                    self.tally.bytes_in += n as u64;
                    if !self.consume(i, n, now) || (n < self.buf.len() && !to_eof) {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.fail(i, ErrorClass::of(&e), now),
            }
        }
    }

    /// Handles `n` bytes in `self.buf`; `false` when the connection was closed meanwhile.
    pub(super) fn consume(&mut self, i: usize, n: usize, now: Instant) -> bool {
        match self.spec.target().kind {
            Kind::Http if self.conns[i].h2.is_some() => {
                if !self.h2_consume(i, n, now) {
                    return false;
                }
            }
            Kind::Http => {
                self.conns[i].http.push(&self.buf[..n]);
                loop {
                    let read = self.conns[i].http.next_response();
                    self.stream_events(i, now);
                    match read {
                        Read::Done { status, close } => {
                            if close {
                                self.conns[i].server_closes();
                            }
                            self.end_stream(i, Some(0), now, false);
                            if !self.complete(i, 0, status, now) {
                                return false;
                            }
                        }
                        Read::More => break,
                        Read::Bad => {
                            self.fail(i, ErrorClass::BadResponse, now);
                            return false;
                        }
                        Read::Mismatch => {
                            self.fail(i, ErrorClass::EchoMismatch, now);
                            return false;
                        }
                    }
                }
            }
            Kind::Resp | Kind::Memcache => {
                if !self.keyed_consume(i, n, now) {
                    return false;
                }
            }
            Kind::Echo | Kind::Packet => {
                let c = &mut self.conns[i];
                match c.echo.push(c.slot, &self.buf[..n]) {
                    Ok(k) => {
                        for _ in 0..k {
                            if !self.complete(i, 0, 200, now) {
                                return false;
                            }
                        }
                    }
                    Err(_) => {
                        self.fail(i, ErrorClass::EchoMismatch, now);
                        return false;
                    }
                }
            }
        }
        self.after_responses(i, now)
    }

    /// The events of connection `i`'s HTTP/1.1 event stream that this read brought.
    pub(super) fn stream_events(&mut self, i: usize, now: Instant) {
        let bytes = self.conns[i].http.stream_bytes();
        if !bytes.is_empty() || !self.conns[i].sse.is_empty() {
            self.stream_bytes(i, 0, &bytes, now);
        }
        self.conns[i].http.give_back(bytes);
    }

    /// Body bytes of event stream `id` (HTTP/2's stream; 0 for HTTP/1.1) of connection `i`
    /// that arrived at `now`: time to first event, gaps, ids.
    pub(super) fn stream_bytes(&mut self, i: usize, id: u32, bytes: &[u8], now: Instant) {
        let c = &mut self.conns[i];
        let k = match c.sse.iter().position(|(s, _)| *s == id) {
            Some(k) => k,
            None => {
                let sent = c.inflight.iter().find(|r| id == 0 || r.stream == id);
                let intended = sent.map_or(now, |r| r.intended);
                c.sse.push((id, crate::load::SseStream::new(intended)));
                self.open_streams += 1;
                c.sse.len() - 1
            }
        };
        let inside = self.window.inside(now);
        let t = sse_tally(inside, &mut self.tally.sse, &mut self.sse_spill);
        let before = t.events;
        c.sse[k].1.feed(bytes, now, t);
        let got = t.events - before;
        if inside && got > 0 {
            let per = &mut self.tally.per_conn_events;
            if per.is_empty() {
                per.resize(self.conns.len(), 0);
            }
            per[i] += got;
        }
    }

    /// Event stream `id` of connection `i` ended (`cut`: before its end; `None`: all of its
    /// streams): its totals are counted.
    pub(super) fn end_stream(&mut self, i: usize, id: Option<u32>, now: Instant, cut: bool) {
        let c = &mut self.conns[i];
        while let Some(k) = c.sse.iter().position(|(s, _)| id.is_none_or(|id| *s == id)) {
            let (_, stream) = c.sse.swap_remove(k);
            self.open_streams -= 1;
            stream.end(
                now,
                cut,
                sse_tally(self.window.inside(now), &mut self.tally.sse, &mut self.sse_spill),
            );
        }
    }

    /// Records the response to the request at `pos` in flight (HTTP/1.1 and echo: the
    /// oldest, 0); `false` if it was unsolicited (the connection is then closed).
    pub(super) fn complete(&mut self, i: usize, pos: usize, status: u16, now: Instant) -> bool {
        self.settle(i, pos, status, now).is_some()
    }

    /// A request that will not complete (`r`, no longer in flight): settled, lost to an open
    /// loop's window, and counted as an error of `class` (and of its request class).
    pub(super) fn abandon(&mut self, r: Sent, class: ErrorClass, now: Instant) {
        self.budget.settled(1);
        if self.given_up_in_drain(r.class) {
            return;
        }
        if let Some(s) = self.schedule.as_mut() {
            s.lose(r.intended, r.class);
        }
        if self.window.inside(now) {
            self.tally.error(class);
            if let Some(c) = self.tally.classes.get_mut(usize::from(r.class)) {
                c.errors += 1;
            }
        }
    }

    /// [`Engine::complete`], saying whether the response counts in the run's figures
    /// (`None`: unsolicited, the connection closed).
    pub(super) fn settle(&mut self, i: usize, pos: usize, status: u16, now: Instant) -> Option<bool> {
        let Some(Sent {
            intended,
            at: sent,
            class,
            lane,
            ..
        }) = self.conns[i].inflight.remove(pos)
        else {
            self.fail(i, ErrorClass::BadResponse, now);
            return None;
        };
        let lanes = self.spec.pipeline();
        if self.conns[i].h2.is_some() {
            self.conns[i].lanes.push_back(lane);
        }
        self.budget.settled(1);
        if self.drain.is_some() {
            // Answered after the window: not counted (the schedule was closed with it).
            return Some(false);
        }
        let in_window = self.window.inside(now);
        // Open loop over a duration: the window's requests are those it scheduled; one answered
        // after the close is counted there, as not completed.
        let scheduled = self.schedule.as_ref().map(|s| s.counts(intended));
        let counts = match scheduled {
            Some(true) if !in_window => {
                if let Some(s) = self.schedule.as_mut() {
                    s.lose(intended, class);
                }
                false
            }
            Some(true) => true,
            _ => in_window && !self.counted_window(),
        };
        if counts {
            let t = &mut self.tally;
            t.requests += 1;
            t.per_conn[i] += 1;
            if let Some(h) = t.h2.as_mut() {
                h.per_lane[i * lanes + usize::from(lane)] += 1;
                h.stream_ns += now.duration_since(sent).as_nanos() as u64;
            }
            let sec = now.duration_since(self.window.from()).as_secs() as usize;
            if t.per_second.len() <= sec {
                t.per_second.resize(sec + 1, 0);
            }
            t.per_second[sec] += 1;
            let ns = now.duration_since(intended).as_nanos() as u64;
            t.latency.record_ns(ns);
            if let Some(iv) = t.interval(now) {
                iv.completed += 1;
                iv.latency.record_ns(ns);
            }
            if let Some(c) = t.classes.get_mut(class as usize) {
                c.requests += 1;
                c.latency.record_ns(ns);
            }
            // In closed loop intended == sent: a second histogram would be a copy.
            if self.schedule.is_some() {
                t.uncorrected.record_ns(now.duration_since(sent).as_nanos() as u64);
            }
            if self.spec.target().kind == Kind::Http {
                match status {
                    100..=599 => t.status[status as usize / 100 - 1] += 1,
                    _ => t.error(ErrorClass::BadResponse),
                }
                if !(200..400).contains(&status) {
                    if let Some(c) = t.classes.get_mut(class as usize) {
                        c.non_2xx_3xx += 1;
                    }
                }
            }
        }
        Some(counts)
    }

    /// Decides what a connection does once its responses are processed.
    pub(super) fn after_responses(&mut self, i: usize, now: Instant) -> bool {
        let c = &self.conns[i];
        let socket_done = c.server_closing()
            || self.per_socket().is_some_and(|k| c.on_socket() >= k)
            || (self.per_socket().is_some() && c.tickets.left() == 0 && self.schedule.is_none());
        if socket_done {
            if c.inflight.is_empty() {
                self.recycle(i, now);
                return false;
            }
            return true;
        }
        match self.spec.pacing {
            Pacing::Think(d) if c.inflight.is_empty() && !c.wake.is_set() => self.set_timer(i, now + d),
            Pacing::Think(_) => {}
            Pacing::Closed => self.fill(i, now),
            Pacing::Rate(_) => {
                self.send_retries(i, now);
                self.mark_free(i);
                self.schedule(now);
            }
        }
        true
    }

    pub(super) fn on_eof(&mut self, i: usize, now: Instant) {
        // A response delimited by the close (HTTP/1.0, or no length) is complete now.
        match self.conns[i].http.at_close() {
            Some(Read::Done { status, .. }) => {
                self.conns[i].server_closes();
                self.stream_events(i, now);
                self.end_stream(i, Some(0), now, false);
                if !self.complete(i, 0, status, now) {
                    return;
                }
            }
            Some(Read::Mismatch) => return self.fail(i, ErrorClass::EchoMismatch, now),
            _ => {}
        }
        let c = &self.conns[i];
        if !c.sse.is_empty() {
            // An event stream the server ended before its end: an error of its own, its
            // events counted (in `fail`).
            self.fail(i, ErrorClass::StreamCut, now);
        } else if !c.inflight.is_empty()
            || c.http.mid_response()
            || c.echo.mid_message()
            || c.keyed.as_ref().is_some_and(|k| k.mid_reply())
        {
            self.fail(i, ErrorClass::UnexpectedClose, now);
        } else {
            // The server closed an idle keep-alive connection: open a new one.
            self.recycle(i, now);
        }
    }
}

/// Where event-stream figures taken inside the window go (the run's tally), and those of the
/// warm-up (kept apart, never reported).
fn sse_tally<'a>(
    inside: bool,
    tally: &'a mut Option<crate::load::SseTally>,
    spill: &'a mut Option<Box<crate::load::SseTally>>,
) -> &'a mut crate::load::SseTally {
    match inside {
        true => tally.get_or_insert_with(Default::default),
        false => spill.get_or_insert_with(Default::default),
    }
}
