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

use super::books::count_unanswered;
use super::classes;
use super::thread::SCAN;
use super::window::Drain;
use super::Engine;
use crate::sys::epoll::Events;

impl Engine<'_> {
    /// Open loop over a duration: what the schedule called for inside the window and did not
    /// get done by its close is counted and enters the corrected histogram (see
    /// [`Schedule::close`]).
    pub(super) fn close_window(&mut self, now: Instant) {
        self.close_streams(now);
        let Some(s) = self.ledger.schedule.as_mut() else { return };
        let inflight = self
            .slots
            .iter()
            .flat_map(|s| s.conn().pending().map(|r| (r.intended, r.class)));
        let (cumulative, rng) = (&self.cumulative, &mut self.rng);
        let Some((scheduled, not_completed, lost)) = s.close(now, inflight, || classes::pick(cumulative, rng)) else {
            return;
        };
        for &(d, class, n) in &lost {
            let ns = d.as_nanos() as u64;
            self.ledger.tally.latency.record_n_ns(ns, n);
            if let Some(live) = &mut self.ledger.live {
                live.observe(ns, n);
            }
            if let Some(c) = self.ledger.tally.classes.get_mut(class as usize) {
                c.latency.record_n_ns(ns, n);
            }
        }
        self.ledger.tally.scheduled = Some(scheduled);
        self.ledger.tally.not_completed = Some(not_completed);
    }

    /// The event streams still going at the close: a first event not come yet, or the gap
    /// open since the last, counts as of the close (coordinated-omission-correct).
    fn close_streams(&mut self, now: Instant) {
        for s in &self.slots {
            s.conn().streams_at_close(now, &mut self.ledger.tally);
        }
    }

    /// One turn of the drain: timeouts looked at, events waited for and handled; `false`
    /// when the loop cannot wait.
    pub(super) fn drain_turn(&mut self, events: &mut Events, next_scan: &mut Instant, now: Instant) -> bool {
        let Some(d) = self.ledger.drain else { return false };
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
        let closed = self.ledger.window.end().map_or(now, |e| e.min(now));
        let until = match stopped {
            true => now,
            false => now + self.limits.timeout,
        };
        self.count_open();
        self.ledger.drain = Some(Drain::new(closed, until));
        self.close_idle();
    }

    /// Whether the drain is over: its time is up, or nothing is awaited.
    pub(super) fn drain_over(&mut self, now: Instant) -> bool {
        let Some(d) = self.ledger.drain else { return false };
        self.close_idle();
        d.over(now) || (0..self.slots.len()).all(|i| self.awaited(i).is_empty())
    }

    /// At the drain's end: what is still awaited is unanswered.
    pub(super) fn end_drain(&mut self) {
        for i in 0..self.slots.len() {
            self.unanswered(i);
        }
    }

    /// The request classes of connection `i`'s requests that are awaited: sent and not
    /// answered (in flight, or waiting to be sent again), not event streams.
    fn awaited(&self, i: usize) -> Vec<u8> {
        self.slots[i].conn().awaited()
    }

    /// Connection `i` failed or the drain ended: each request of it still awaited is
    /// `unanswered` (and its class's error), and the socket is closed, not connected again.
    pub(super) fn unanswered(&mut self, i: usize) {
        let Some(d) = self.ledger.drain else { return };
        for class in self.awaited(i) {
            count_unanswered(&mut self.ledger.tally, d, class);
        }
        self.slots[i].conn_mut().forget_resends();
        let _ = self.slots[i].close();
    }

    /// Closes each connection with nothing awaited (its socket only: the window's figures are
    /// closed already); what waits on a closed one to be sent again (HTTP/2, after a GOAWAY)
    /// will not be, and is unanswered.
    fn close_idle(&mut self) {
        for i in 0..self.slots.len() {
            match (self.slots[i].fd().is_some(), self.awaited(i).is_empty()) {
                (true, true) => drop(self.slots[i].close()),
                (false, false) => self.unanswered(i),
                _ => {}
            }
        }
    }
}
