//! After the window: the requests still in flight at its close are waited for, up to
//! `--timeout` after it, with nothing new sent or connected and each connection closed once
//! nothing of it is awaited (so a server that serves one connection at a time reaches the
//! others). One not answered by then, or lost to a failure meanwhile, is an error of its own,
//! `unanswered`; an answer that comes in the drain is counted nowhere else (it came after the
//! window). A run stopped by a signal does not wait: what it had in flight is unanswered.
//! Event streams are not awaited (they are counted as of the close, see `close_streams`).
//! The window's close is here too: what an open loop's schedule did not get done by it, and
//! the event streams still going.

use std::time::{Duration, Instant};

use super::classes;
use super::thread::SCAN;
use super::window::Drain;
use super::Engine;
use crate::load::ErrorClass;
use crate::sys::epoll::Events;

impl Engine<'_> {
    /// Open loop over a duration: what the schedule called for inside the window and did not
    /// get done by its close is counted and enters the corrected histogram (see
    /// [`Schedule::close`]).
    pub(super) fn close_window(&mut self, now: Instant) {
        self.close_streams(now);
        let Some(s) = self.schedule.as_mut() else { return };
        let inflight = self
            .conns
            .iter()
            .flat_map(|c| c.inflight.iter().chain(&c.retry).map(|r| (r.intended, r.class)));
        let (cumulative, rng) = (&self.cumulative, &mut self.rng);
        let Some((scheduled, not_completed, lost)) = s.close(now, inflight, || classes::pick(cumulative, rng)) else {
            return;
        };
        for &(d, class, n) in &lost {
            let ns = d.as_nanos() as u64;
            self.tally.latency.record_n_ns(ns, n);
            if let Some(c) = self.tally.classes.get_mut(class as usize) {
                c.latency.record_n_ns(ns, n);
            }
        }
        self.tally.scheduled = Some(scheduled);
        self.tally.not_completed = Some(not_completed);
    }

    /// The event streams still going at the close: a first event not come yet, or the gap
    /// open since the last, counts as of the close (coordinated-omission-correct).
    fn close_streams(&mut self, now: Instant) {
        let forced = self.spec.sse();
        let mut pending = Vec::new();
        for c in &self.conns {
            for r in &c.inflight {
                let id = if c.h2.is_some() { r.stream } else { 0 };
                let going = c.sse.iter().any(|(s, _)| *s == id);
                // A response known to be a stream (`--sse`, or a head that said so, HTTP/1.1's
                // or an HTTP/2 stream's) whose first event has not come.
                let head_said = match c.h2.as_ref() {
                    Some(h) => h.is_event_stream(id),
                    None => c.http.event_stream() && c.inflight.front().is_some_and(|f| f.at == r.at),
                };
                if !going && (forced || head_said) {
                    pending.push(r.intended);
                }
            }
        }
        let open = self.conns.iter().any(|c| !c.sse.is_empty());
        if pending.is_empty() && !open {
            return;
        }
        let t = self.tally.sse.get_or_insert_with(Default::default);
        for c in &self.conns {
            for (_, s) in &c.sse {
                s.at_close(now, t);
            }
        }
        for intended in pending {
            crate::load::SseStream::new(intended).at_close(now, t);
        }
    }

    /// One turn of the drain: timeouts looked at, events waited for and handled; `false`
    /// when the loop cannot wait.
    pub(super) fn drain_turn(&mut self, events: &mut Events, next_scan: &mut Instant, now: Instant) -> bool {
        let Some(d) = self.drain else { return false };
        if now >= *next_scan {
            self.scan_timeouts(now);
            *next_scan = now + SCAN;
        }
        let wait = match self.again.is_empty() {
            true => d.wait(now, *next_scan),
            // Connections stopped at their reads' limit with more to read: no new edge comes.
            false => Duration::ZERO,
        };
        if self.ep.wait_precise(events, wait).is_err() {
            return false;
        }
        self.dispatch(events, Instant::now());
        true
    }

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
                let streaming = (front_streams && *k == 0)
                    || c.sse.iter().any(|(s, _)| *s == r.stream)
                    || c.h2.as_ref().is_some_and(|h| h.is_event_stream(r.stream));
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
