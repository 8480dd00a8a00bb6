//! After the window: the requests still in flight at its close are waited for, up to
//! `--timeout` after it, with nothing new sent or connected and each connection closed once
//! nothing of it is awaited (so a server that serves one connection at a time reaches the
//! others). One not answered by then, or lost to a failure meanwhile, is an error of its own,
//! `unanswered`; an answer that comes in the drain is counted nowhere else (it came after the
//! window). A run stopped by a signal does not wait: what it had in flight is unanswered.
//! Event streams are not awaited (they are counted as of the close, see `close_streams`).

use std::time::Instant;

use super::window::Drain;
use super::Engine;
use crate::load::ErrorClass;

impl Engine<'_> {
    /// The window closed at `now` (or the run was `stopped`): from here only what is in flight
    /// is waited for.
    pub(super) fn begin_drain(&mut self, now: Instant, stopped: bool) {
        let closed = self.window.end().map_or(now, |e| e.min(now));
        let until = match stopped {
            true => now,
            false => now + self.spec.timeout(),
        };
        self.drain = Some(Drain::new(closed, until));
        self.close_idle();
    }

    /// Whether the drain is over: its time is up, or nothing is awaited.
    pub(super) fn drain_over(&mut self, now: Instant) -> bool {
        let Some(d) = self.drain else { return false };
        self.close_idle();
        d.over(now) || (0..self.conns.len()).all(|i| self.awaited(i).is_empty())
    }

    /// At the drain's end: what is still awaited is unanswered.
    pub(super) fn end_drain(&mut self) {
        for i in 0..self.conns.len() {
            self.unanswered(i);
        }
    }

    /// The request classes of connection `i`'s requests that are awaited: sent and not
    /// answered (in flight, or waiting to be sent again), not event streams.
    fn awaited(&self, i: usize) -> Vec<u8> {
        let c = &self.conns[i];
        if self.spec.sse() {
            return Vec::new();
        }
        let front_streams = c.h2.is_none() && c.http.event_stream();
        c.inflight
            .iter()
            .enumerate()
            .filter(|(k, r)| {
                let streaming = (front_streams && *k == 0) || c.sse.iter().any(|(s, _)| *s == r.stream);
                !streaming
            })
            .map(|(_, r)| r)
            .chain(&c.retry)
            .map(|r| r.class)
            .collect()
    }

    /// Connection `i` failed or the drain ended: each request of it still awaited is
    /// `unanswered` (and its class's error), and the socket is closed, not connected again.
    pub(super) fn unanswered(&mut self, i: usize) {
        let Some(d) = self.drain else { return };
        for class in self.awaited(i) {
            Self::count_unanswered(&mut self.tally, d, class);
        }
        self.conns[i].retry.clear();
        let _ = self.conns[i].close_socket();
    }

    /// A request of `class` given up in the drain (a stream the server reset, say) is
    /// unanswered; `false` outside the drain.
    pub(super) fn given_up_in_drain(&mut self, class: u8) -> bool {
        let Some(d) = self.drain else { return false };
        Self::count_unanswered(&mut self.tally, d, class);
        true
    }

    /// One unanswered request of `class`, in the series' last interval.
    fn count_unanswered(tally: &mut crate::load::Tally, d: Drain, class: u8) {
        tally.error_at(ErrorClass::Unanswered, d.last_instant());
        if let Some(c) = tally.classes.get_mut(usize::from(class)) {
            c.errors += 1;
        }
    }

    /// Closes each connection with nothing awaited (its socket only: the window's figures are
    /// closed already); what waits on a closed one to be sent again (HTTP/2, after a GOAWAY)
    /// will not be, and is unanswered.
    fn close_idle(&mut self) {
        for i in 0..self.conns.len() {
            match (self.conns[i].fd().is_some(), self.awaited(i).is_empty()) {
                (true, true) => drop(self.conns[i].close_socket()),
                (false, false) => self.unanswered(i),
                _ => {}
            }
        }
    }
}
