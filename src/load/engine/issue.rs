//! Issuing requests: which connection sends what, and when, under the run's pacing.

use std::time::Instant;

use super::Engine;

impl Engine<'_> {
    /// `true` if one more request may be committed at `now`.
    pub(super) fn may_issue(&self, now: Instant) -> bool {
        if self.ledger.window.over(now) {
            return false;
        }
        let waiting = self.ledger.schedule.as_ref().map_or(0, |s| s.waiting());
        self.ledger.budget.allows(self.counting(now), waiting)
    }

    /// Rate mode: moves sends whose time has come into the backlog, then hands them out.
    pub(super) fn schedule(&mut self, now: Instant) {
        // Not before sending starts and the window is known: the schedule starts from the
        // window's `t0` (an HTTP/2 connection reads its server's SETTINGS before that, and
        // what it reads must not schedule sends).
        if !(self.ramp.sending() && self.ledger.window.known()) {
            return;
        }
        let (window, budget) = (self.ledger.window, &self.ledger.budget);
        let (cumulative, rng) = (&self.cumulative, &mut self.rng);
        let Some(s) = self.ledger.schedule.as_mut() else { return };
        s.due(
            now,
            |t, waiting| !window.over(t) && budget.allows(window.counting(t), waiting),
            || super::classes::pick(cumulative, rng),
        );
        while let Some(i) = self.ledger.schedule.as_mut().and_then(|s| s.take_free()) {
            self.slots[i].taken();
            self.fill(i, now);
        }
    }

    /// Rate mode: connection `i` is offered to the schedule if it can take a request.
    pub(super) fn mark_free(&mut self, i: usize) {
        let room = self.has_room(i) && self.batch_room(i) > 0 && !self.slots[i].holds();
        let slot = &mut self.slots[i];
        if let Some(s) = self.ledger.schedule.as_mut() {
            if room && slot.offer() {
                s.offer(i);
            }
        }
    }

    /// Requests one socket may carry: 1 with `--close`, K with `--requests-per-conn K`.
    pub(super) fn per_socket(&self) -> Option<u64> {
        self.pace.per_socket
    }

    /// Whether connection `i` may have one more request in flight (`--pipeline`, or
    /// `--streams` within the server's limit).
    pub(super) fn has_room(&self, i: usize) -> bool {
        self.slots[i].conn().has_room(self.pace.pipeline)
    }

    /// Requests connection `i` may start now as one batch: a keyed target's `--pipeline` N
    /// once all of the last batch is answered (and none before); elsewhere no limit but
    /// [`Engine::has_room`].
    pub(super) fn batch_room(&self, i: usize) -> usize {
        match self.pace.batch {
            1 => usize::MAX,
            n if self.slots[i].conn().idle() => n,
            _ => 0,
        }
    }

    /// Sends as many requests as the pacing allows on connection `i`.
    pub(super) fn fill(&mut self, i: usize, now: Instant) {
        if self.ledger.drain.is_some() {
            // After the window nothing is sent: not a socket's tickets, not a request to send
            // again; what is owed still goes out.
            let _ = self.flush(i);
            return;
        }
        if !self.ramp.sending() || self.slots[i].holds() {
            // Connecting is not over (or the connection holds, sending nothing): an HTTP/2 connection may read its server's SETTINGS
            // meanwhile, but no request goes before the others' (see `Engine::run`).
            let _ = self.flush(i);
            return;
        }
        let mut batch = self.batch_room(i);
        loop {
            let c = self.slots[i].conn();
            if !c.is_up() || c.server_closing() || !self.has_room(i) || batch == 0 {
                break;
            }
            batch -= 1;
            if c.resends_waiting() {
                let (conn, books) = self.split(i);
                conn.resend(now, books);
                continue;
            }
            let (intended, class, noticed) = if self.ledger.schedule.is_some() {
                if c.used_up() {
                    break;
                }
                match self.ledger.schedule.as_mut().and_then(|s| s.take_due()) {
                    Some((t, class, noticed)) => (t, class, Some(noticed)),
                    None => break,
                }
            } else if c.tickets_left() > 0 {
                // ab-style: with --close the request's clock starts at connect.
                let t = if self.pace.close { c.started() } else { now };
                (t, super::classes::pick(&self.cumulative, &mut self.rng), None)
            } else if self.per_socket().is_none() && self.may_issue(now) {
                (now, super::classes::pick(&self.cumulative, &mut self.rng), None)
            } else {
                break;
            };
            self.enqueue(i, intended, class, noticed, now);
        }
        let (conn, books) = self.split(i);
        conn.sends_done(now, books);
        if self.flush(i).is_ok() {
            self.mark_free(i);
        }
    }

    /// Counts one request against the quota (and as sent, inside the window).
    pub(super) fn count_issue(&mut self, now: Instant) {
        let inside = self.ledger.window.started(now);
        self.ledger.budget.commit(inside);
        if inside {
            self.ledger.tally.sent += 1;
            if let Some(iv) = self.ledger.tally.interval(now) {
                iv.sent += 1;
            }
        }
    }

    /// Sends request `class` on connection `i`, intended at `intended`; in an open loop
    /// `noticed` is when the client saw it was due.
    pub(super) fn enqueue(&mut self, i: usize, intended: Instant, class: u8, noticed: Option<Instant>, now: Instant) {
        let open_loop = self.ledger.schedule.is_some();
        let sent = if self.pace.close && !open_loop { intended } else { now };
        match self.slots[i].conn_mut().tickets().take() {
            // Counted against the quota when the socket reserved it.
            Some(true) => {
                self.ledger.budget.spend();
                if self.ledger.window.started(now) {
                    self.ledger.tally.sent += 1;
                    if let Some(iv) = self.ledger.tally.interval(now) {
                        iv.sent += 1;
                    }
                }
            }
            Some(false) => {
                self.ledger.budget.spend();
                self.count_issue(now);
            }
            None => self.count_issue(now),
        }
        if let (Some(noticed), true) = (noticed, self.ledger.window.started(now)) {
            // The client's own lateness: how long after its time it noticed the request was
            // due. A request sent later than that found every connection busy with the server
            // and waited for one: counted apart.
            if now > noticed {
                self.ledger.tally.waited_for_connection += 1;
            }
            self.ledger
                .tally
                .send_lag
                .record_ns(noticed.saturating_duration_since(intended).as_nanos() as u64);
        }
        let (conn, books) = self.split(i);
        conn.send(intended, sent, class, now, books);
        self.ledger.budget.sent();
    }

    /// Sends what waits to be sent again on connection `i`, where pacing would not call
    /// `fill` by itself (an open loop offers a connection only while sends are due).
    pub(super) fn send_retries(&mut self, i: usize, now: Instant) {
        if self.slots[i].conn().resends_waiting() {
            self.fill(i, now);
        }
    }
}
