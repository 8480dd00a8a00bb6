//! Connection lifecycle of the load engine: connect (with --connect-rate and --bind), connected,
//! closed, recycled after its requests, failed (counted by class, back-off before reconnecting),
//! timed out.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::OwnedFd;
use std::time::Instant;

use super::Engine;
use crate::load::client::Next;
use crate::load::ErrorClass;
use crate::sys;
use crate::sys::epoll::{ET, IN, OUT, RDHUP};

impl Engine<'_> {
    pub(super) fn start_connect(&mut self, i: usize, now: Instant) {
        if self.ledger.drain.is_some() {
            return;
        }
        let open_loop = self.ledger.schedule.is_some();
        // Past the quota a slot still connects for what it holds: requests to send again
        // (HTTP/2), or tickets its last socket did not use (the server closed it early).
        let c = self.slots[i].conn();
        if !self.may_issue(now) && !open_loop && !c.resends_waiting() && c.tickets_left() == 0 {
            return;
        }
        // Requests sent again (HTTP/2) had their ticket when they were first sent.
        if let (Some(k), false, false) = (self.per_socket(), open_loop, c.resends_waiting()) {
            if c.tickets_left() == 0 {
                let Some((tickets, counted)) = self.ledger.budget.reserve(k, self.counting(now)) else {
                    return;
                };
                self.slots[i].conn_mut().tickets().reserve(tickets, counted);
            }
        }
        // --connect-rate: take the next free connect time; a slot woken at the time it took
        // connects then (others have moved the next free time on meanwhile).
        let booked = self.slots[i].take_booking();
        if let Some(at) = self.ramp.when(now, booked) {
            self.slots[i].book();
            return self.set_timer(i, at);
        }
        let target = self.reach.addr;
        let result = (|| -> io::Result<OwnedFd> {
            let fd = sys::socket::tcp_socket(&target, true)?;
            let sources = &self.reach.sources;
            if !sources.is_empty() {
                let src = self.ramp.source(sources);
                sys::socket::set_bind_no_port(&fd)?;
                sys::socket::bind(&fd, &SocketAddr::new(IpAddr::V4(src), 0))?;
            }
            match sys::socket::connect(&fd, &target) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
                Err(e) => return Err(e),
            }
            self.ep.add(&fd, i as u64, IN | OUT | RDHUP | ET)?;
            Ok(fd)
        })();
        match result {
            Ok(fd) => self.slots[i].connecting(fd, now),
            Err(e) => self.fail(i, ErrorClass::of(&e), now),
        }
    }

    /// Opens the gate requests wait behind: every connection that is up starts sending.
    pub(super) fn start_sending(&mut self, now: Instant) {
        self.ramp.open_gate();
        let open_loop = self.ledger.schedule.is_some();
        for i in 0..self.slots.len() {
            if self.slots[i].conn().is_up() {
                if open_loop {
                    self.mark_free(i);
                } else {
                    self.fill(i, now);
                }
            }
        }
        if open_loop {
            self.schedule(now);
        }
    }

    pub(super) fn on_connected(&mut self, i: usize, now: Instant) {
        self.first_try_over(i);
        let counting = self.counting(now);
        let took = self.slots[i].conn_mut().connected(now);
        // Nagle only delays a second small write: keep-alive and pipelined sockets need it off,
        // and so does a TLS handshake (several small writes each way).
        if !self.pace.close || self.reach.tls.is_some() {
            if let Some(fd) = self.slots[i].fd() {
                let _ = sys::socket::set_nodelay(fd);
            }
        }
        if counting {
            self.ledger.tally.connect.record_ns(took.as_nanos() as u64);
            self.ledger.tally.connects += 1;
        }
        if self.reach.tls.is_some() {
            // https: the handshake comes first (see `tls`), then `when_up`.
            return self.start_tls(i, now);
        }
        self.when_up(i, now);
    }

    /// The connection is up (its protocol says what it says first): send, or wait for the
    /// others (`--connect-first`).
    pub(super) fn when_up(&mut self, i: usize, now: Instant) {
        if let Err(class) = self.slots[i].go_up() {
            return self.fail(i, class, now);
        }
        if self.slots[i].conn().next() == Next::Send && self.flush(i).is_err() {
            return;
        }
        if !self.ramp.sending() {
            // Connecting is not over (or, with --connect-first, not every connection is up):
            // the first requests wait (see `Engine::run`).
            if self.slots[i].up_before_sending() {
                self.ramp.up_early();
            }
            return;
        }
        if self.ledger.schedule.is_some() {
            self.send_retries(i, now);
            self.mark_free(i);
            self.schedule(now);
        } else {
            self.fill(i, now);
        }
    }

    /// Closes the socket of slot `i`: requests in flight on it are no longer, and those of an
    /// open loop's window will not complete in it.
    pub(super) fn close_socket(&mut self, i: usize) {
        let lost = self.slots[i].close();
        self.ledger.budget.settled(lost.len());
        if let Some(s) = self.ledger.schedule.as_mut() {
            for r in lost {
                s.lose(r.intended, r.class);
            }
        }
    }

    /// A finished connection: close it and open the next one at once.
    pub(super) fn recycle(&mut self, i: usize, now: Instant) {
        self.close_socket(i);
        self.start_connect(i, now);
    }

    /// A failure: count it, close, and reconnect after a growing back-off.
    pub(super) fn fail(&mut self, i: usize, class: ErrorClass, now: Instant) {
        if self.ledger.drain.is_some() {
            // After the window a failure is not counted as such: what it took is unanswered.
            return self.unanswered(i);
        }
        self.ledger.tally.error(class);
        let (conn, books) = self.split(i);
        let failed = conn.fail(now, books);
        // The failure is the oldest request's in flight, and its class's.
        if let Some(c) = failed
            .class
            .and_then(|k| self.ledger.tally.classes.get_mut(usize::from(k)))
        {
            c.errors += 1;
        }
        self.first_try_over(i);
        // Requests the socket reserved but never sent go back to the pool.
        let (left, counted) = failed.unused;
        self.ledger.budget.give_back(left, counted);
        if failed.idle {
            // A failed attempt with nothing in flight (or waiting: those were charged a try)
            // still uses up a request, so -n ends.
            self.ledger.budget.failed_attempt(self.ledger.window.counting(now));
        }
        self.close_socket(i);
        // Reconnect after a growing back-off.
        self.slots[i].conn_mut().back_off(now);
        if let Next::Wait(at) = self.slots[i].conn().next() {
            self.set_timer(i, at);
        }
    }

    /// Fails the connections whose connect or oldest request took longer than the timeout:
    /// the senders at each scan, every slot once a [`super::thread::SCAN_HELD`].
    pub(super) fn scan_timeouts(&mut self, now: Instant) {
        let limit = self.limits.timeout;
        let all = self.holding == 0 || now >= self.held_scan;
        if all {
            self.held_scan = now + super::thread::SCAN_HELD;
        }
        let count = if all { self.slots.len() } else { self.senders.len() };
        for k in 0..count {
            let i = if all { k } else { self.senders[k] };
            if self.slots[i].conn().late(now, limit) {
                self.fail(i, ErrorClass::Timeout, now);
            }
        }
    }
}
