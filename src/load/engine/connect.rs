//! Connection lifecycle of the load engine: connect (with --connect-rate and --bind), connected,
//! closed, recycled after its requests, failed (counted by class, back-off before reconnecting),
//! timed out.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::OwnedFd;
use std::time::Instant;

use super::conn::State;
use super::Engine;
use crate::load::ErrorClass;
use crate::sys;
use crate::sys::epoll::{ET, IN, OUT, RDHUP};

impl Engine<'_> {
    pub(super) fn start_connect(&mut self, i: usize, now: Instant) {
        if self.drain.is_some() {
            return;
        }
        let open_loop = self.schedule.is_some();
        // Past the quota a slot still connects for what it holds: requests to send again
        // (HTTP/2), or tickets its last socket did not use (the server closed it early).
        let c = &self.conns[i];
        if !self.may_issue(now) && !open_loop && c.retry.is_empty() && c.tickets.left() == 0 {
            return;
        }
        // Requests sent again (HTTP/2) had their ticket when they were first sent.
        if let (Some(k), false, true) = (self.per_socket(), open_loop, self.conns[i].retry.is_empty()) {
            if self.conns[i].tickets.left() == 0 {
                let Some((tickets, counted)) = self.budget.reserve(k, self.counting(now)) else {
                    return;
                };
                self.conns[i].tickets.reserve(tickets, counted);
            }
        }
        // --connect-rate: take the next free connect time; a slot woken at the time it took
        // connects then (others have moved the next free time on meanwhile).
        let booked = self.conns[i].take_booking();
        if let Some(at) = self.ramp.when(now, booked) {
            self.conns[i].book();
            return self.set_timer(i, at);
        }
        let target = self.spec.target().addr;
        let result = (|| -> io::Result<OwnedFd> {
            let fd = sys::socket::tcp_socket(&target, true)?;
            let sources = self.spec.sources();
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
            Ok(fd) => self.conns[i].connecting(fd, now),
            Err(e) => self.fail(i, ErrorClass::of(&e), now),
        }
    }

    /// Opens the gate requests wait behind: every connection that is up starts sending.
    pub(super) fn start_sending(&mut self, now: Instant) {
        self.ramp.open_gate();
        let open_loop = self.schedule.is_some();
        for i in 0..self.conns.len() {
            if self.conns[i].is_up() {
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
        let c = &mut self.conns[i];
        let took = c.connected(now);
        // Nagle only delays a second small write: keep-alive and pipelined sockets need it off,
        // and so does a TLS handshake (several small writes each way).
        if !self.spec.close() || self.spec.tls.is_some() {
            if let Some(fd) = c.fd() {
                let _ = sys::socket::set_nodelay(fd);
            }
        }
        if counting {
            self.tally.connect.record_ns(took.as_nanos() as u64);
            self.tally.connects += 1;
        }
        if self.spec.tls.is_some() {
            // https: the handshake comes first (see `tls`), then `when_up`.
            return self.start_tls(i, now);
        }
        self.conns[i].up();
        self.when_up(i, now);
    }

    /// The connection can carry requests: send, or wait for the others (`--connect-first`).
    pub(super) fn when_up(&mut self, i: usize, now: Instant) {
        if self.conns[i].h2.is_some() && !self.h2_up(i, now) {
            return;
        }
        if !self.ramp.sending() {
            // Connecting is not over (or, with --connect-first, not every connection is up):
            // the first requests wait (see `Engine::run`).
            if self.conns[i].up_before_sending() {
                self.ramp.up_early();
            }
            return;
        }
        if self.schedule.is_some() {
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
        let lost = self.conns[i].close_socket();
        self.budget.settled(lost.len());
        if let Some(s) = self.schedule.as_mut() {
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
        if self.drain.is_some() {
            // After the window a failure is not counted as such: what it took is unanswered.
            return self.unanswered(i);
        }
        self.tally.error(class);
        self.end_stream(i, None, now, true);
        // The failure is the oldest request's in flight, and its class's.
        if let Some(r) = self.conns[i].inflight.front() {
            if let Some(c) = self.tally.classes.get_mut(r.class as usize) {
                c.errors += 1;
            }
        }
        self.first_try_over(i);
        // HTTP/2 requests waiting to be sent again wait for the next connection (each failure
        // counts as a try: a server that keeps failing cannot keep them forever).
        let waiting: Vec<_> = self.conns[i].retry.drain(..).collect();
        let none_waiting = waiting.is_empty();
        for r in waiting {
            self.again(i, r, now);
        }
        // Requests the socket reserved but never sent go back to the pool.
        let c = &mut self.conns[i];
        let (left, counted) = c.tickets.give_back();
        self.budget.give_back(left, counted);
        if c.inflight.is_empty() && none_waiting {
            // A failed attempt with nothing in flight (or waiting: those are charged a try)
            // still uses up a request, so -n ends.
            self.budget.failed_attempt(self.window.counting(now));
        }
        self.close_socket(i);
        let at = now + self.conns[i].next_backoff();
        self.set_timer(i, at);
    }

    pub(super) fn scan_timeouts(&mut self, now: Instant) {
        let limit = self.spec.timeout();
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            let late = match c.state() {
                State::Connecting | State::Handshaking => c.setting_up_past(now, limit),
                // Nothing in flight but requests to send again that the server leaves no room
                // for (HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS of 0) is stuck as well.
                // An event stream is timed from its last event, not from its request.
                State::Up => {
                    c.inflight
                        .front()
                        .or(c.retry.front().filter(|_| c.inflight.is_empty()))
                        .is_some_and(|r| {
                            let streaming = c.sse.iter().find(|(id, _)| *id == r.stream || *id == 0);
                            let since = streaming.and_then(|(_, s)| s.last()).unwrap_or(r.at);
                            now.duration_since(since.max(r.at)) > limit
                        })
                        || c.stalled_past(now, limit)
                }
                State::Down => false,
            };
            if late {
                self.fail(i, ErrorClass::Timeout, now);
            }
        }
    }
}
