//! Issuing requests: which connection sends what, and when, under the run's pacing.

use std::time::Instant;

use super::engine::{Engine, State};
use super::request::{append_body, pattern, Kind, Payload};

/// Issuing requests: which connection sends what, and when.
impl Engine<'_> {
    /// `true` if one more request may be committed at `now`.
    pub(super) fn may_issue(&self, now: Instant) -> bool {
        if self.end.is_some_and(|e| now >= e) {
            return false;
        }
        match self.plan.quota {
            Some(q) if self.counting(now) => self.issued + (self.backlog.len() as u64) < q,
            _ => true,
        }
    }

    /// Rate mode: moves sends whose time has come into the backlog, then hands them out.
    pub(super) fn schedule(&mut self, now: Instant) {
        let interval = self.interval.expect("rate mode");
        while self.next_intended <= now && self.may_issue(self.next_intended) {
            if self.scheduled_in_window(self.next_intended) {
                self.scheduled += 1;
            }
            self.backlog.push_back(self.next_intended);
            self.next_intended += interval;
        }
        while !self.backlog.is_empty() {
            let Some(i) = self.free.pop_front() else {
                break;
            };
            self.conns[i].in_free = false;
            self.fill(i, now);
        }
    }

    pub(super) fn mark_free(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if self.interval.is_some() && !c.in_free && c.state == State::Up && c.inflight.len() < self.spec.pipeline() {
            c.in_free = true;
            self.free.push_back(i);
        }
    }

    /// Requests one socket may carry: 1 with `--close`, K with `--requests-per-conn K`.
    pub(super) fn per_socket(&self) -> Option<u64> {
        if self.spec.close() {
            Some(1)
        } else {
            self.spec.requests_per_conn()
        }
    }

    /// Sends as many requests as the pacing allows on connection `i`.
    pub(super) fn fill(&mut self, i: usize, now: Instant) {
        loop {
            let c = &self.conns[i];
            if c.state != State::Up || c.server_closing || c.inflight.len() >= self.spec.pipeline() {
                break;
            }
            let intended = if self.interval.is_some() {
                if self.per_socket().is_some_and(|k| c.on_socket >= k) {
                    break;
                }
                match self.backlog.pop_front() {
                    Some(t) => t,
                    None => break,
                }
            } else if c.tickets > 0 {
                // ab-style: with --close the request's clock starts at connect.
                if self.spec.close() {
                    c.started
                } else {
                    now
                }
            } else if self.per_socket().is_none() && self.may_issue(now) {
                now
            } else {
                break;
            };
            self.enqueue(i, intended, now);
        }
        if self.flush(i).is_ok() {
            self.mark_free(i);
        }
    }

    /// Counts one request against the quota (and as sent, inside the window).
    pub(super) fn count_issue(&mut self, now: Instant) {
        if now >= self.measure_from {
            self.issued += 1;
            self.tally.sent += 1;
        }
    }

    pub(super) fn enqueue(&mut self, i: usize, intended: Instant, now: Instant) {
        let sent = if self.spec.close() && self.interval.is_none() {
            intended
        } else {
            now
        };
        let c = &mut self.conns[i];
        if c.tickets > 0 {
            c.tickets -= 1;
            self.reserved -= 1;
            if c.counted > 0 {
                // Counted against the quota when the socket reserved it.
                c.counted -= 1;
                if now >= self.measure_from {
                    self.tally.sent += 1;
                }
            } else {
                self.count_issue(now);
            }
        } else {
            self.count_issue(now);
        }
        if self.interval.is_some() && now >= self.measure_from {
            self.tally
                .send_lag
                .record_ns(now.saturating_duration_since(intended).as_nanos() as u64);
        }
        let c = &mut self.conns[i];
        match self.spec.target().kind {
            Kind::Http => {
                c.out.extend_from_slice(&self.request);
                if let Payload::Generated(size) = self.spec.payload {
                    let (slot, seq) = (c.slot, c.send_seq);
                    append_body(&mut c.out, size, self.spec.chunked(), |off, piece| {
                        pattern(slot, seq, off, piece)
                    });
                }
                c.send_seq += 1;
            }
            Kind::Echo | Kind::Packet => {
                let start = c.out.len();
                c.out.resize(start + self.spec.size(), 0);
                pattern(c.slot, c.send_seq, 0, &mut c.out[start..]);
                c.send_seq += 1;
            }
        }
        c.inflight.push_back((intended, sent));
        c.on_socket += 1;
        self.inflight += 1;
    }
}
