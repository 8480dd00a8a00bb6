//! Connection lifecycle of the load engine: connect (with --connect-rate and --bind), connected,
//! closed, recycled after its requests, failed (counted by class, back-off before reconnecting),
//! timed out.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::OwnedFd;
use std::time::Instant;

use super::engine::{Engine, State, BACKOFF_MAX, BACKOFF_MIN};
use super::tally::ErrorClass;
use crate::sys;
use crate::sys::epoll::{ET, IN, OUT, RDHUP};

impl Engine<'_> {
    pub(super) fn start_connect(&mut self, i: usize, now: Instant) {
        if !self.may_issue(now) && self.interval.is_none() {
            return;
        }
        if let (Some(k), None) = (self.per_socket(), self.interval) {
            if self.conns[i].tickets == 0 {
                let left = match self.plan.quota {
                    Some(q) if self.counting(now) => q.saturating_sub(self.issued),
                    _ => k,
                };
                let r = k.min(left);
                if r == 0 {
                    return;
                }
                let counted = if self.counting(now) { r } else { 0 };
                self.issued += counted;
                self.reserved += r;
                let c = &mut self.conns[i];
                c.tickets = r;
                c.counted = counted;
            }
        }
        // --connect-rate: take the next free connect time; a slot woken at the time it took
        // connects then (others have moved the next free time on meanwhile).
        if let Some(iv) = self.connect_interval {
            if !std::mem::take(&mut self.conns[i].connect_booked) {
                if now < self.next_connect {
                    let at = self.next_connect;
                    self.next_connect += iv;
                    self.conns[i].connect_booked = true;
                    self.set_timer(i, at);
                    return;
                }
                self.next_connect = now.max(self.next_connect) + iv;
            }
        }
        let target = self.spec.target().addr;
        let result = (|| -> io::Result<OwnedFd> {
            let fd = sys::socket::tcp_socket(&target, true)?;
            let sources = self.spec.sources();
            if !sources.is_empty() {
                let src = sources[self.bind_next % sources.len()];
                self.bind_next += 1;
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
            Ok(fd) => {
                let c = &mut self.conns[i];
                c.fd = Some(fd);
                c.state = State::Connecting;
                c.started = now;
            }
            Err(e) => self.fail(i, ErrorClass::of(&e), now),
        }
    }

    /// Opens the gate of `--connect-first`: every connection that is up starts sending.
    pub(super) fn start_sending(&mut self, now: Instant) {
        self.sending = true;
        for i in 0..self.conns.len() {
            if self.conns[i].state == State::Up {
                if self.interval.is_some() {
                    self.mark_free(i);
                } else {
                    self.fill(i, now);
                }
            }
        }
        if self.interval.is_some() {
            self.schedule(now);
        }
    }

    pub(super) fn on_connected(&mut self, i: usize, now: Instant) {
        self.first_try_over(i);
        let counting = self.counting(now);
        let c = &mut self.conns[i];
        c.state = State::Up;
        c.connected_once = true;
        c.backoff = BACKOFF_MIN;
        // Nagle only delays a second small write: keep-alive and pipelined sockets need it off,
        // and so does a TLS handshake (several small writes each way).
        if !self.spec.close() || self.spec.tls.is_some() {
            if let Some(fd) = &c.fd {
                let _ = sys::socket::set_nodelay(fd);
            }
        }
        if counting {
            self.tally
                .connect
                .record_ns(now.duration_since(c.started).as_nanos() as u64);
            self.tally.connects += 1;
        }
        if self.spec.tls.is_some() {
            // https: the handshake comes first (see `tls`), then `when_up`.
            return self.start_tls(i, now);
        }
        self.when_up(i, now);
    }

    /// The connection can carry requests: send, or wait for the others (`--connect-first`).
    pub(super) fn when_up(&mut self, i: usize, now: Instant) {
        if !self.sending {
            // Connecting is not over (or, with --connect-first, not every connection is up):
            // the first requests wait (see `Engine::run`).
            self.up_first += usize::from(!std::mem::replace(&mut self.conns[i].counted_up, true));
            return;
        }
        if self.interval.is_some() {
            self.mark_free(i);
            self.schedule(now);
        } else {
            self.fill(i, now);
        }
    }

    /// Closes the socket of slot `i` and resets its per-socket state.
    pub(super) fn close_socket(&mut self, i: usize) {
        let c = &mut self.conns[i];
        c.tls = None;
        c.fd = None;
        c.state = State::Down;
        self.inflight -= c.inflight.len();
        // Open loop: requests of the window that die with the socket are counted at the close.
        let window = self.counted_window;
        self.lost.extend(
            c.inflight
                .drain(..)
                .map(|(t, _)| t)
                .filter(|&t| super::engine::in_window(window, t)),
        );
        c.on_socket = 0;
        c.out.clear();
        c.out_pos = 0;
        c.http.reset(c.send_seq);
        c.echo.reset(c.send_seq);
        c.server_closing = false;
    }

    /// A finished connection: close it and open the next one at once.
    pub(super) fn recycle(&mut self, i: usize, now: Instant) {
        self.close_socket(i);
        self.start_connect(i, now);
    }

    /// A failure: count it, close, and reconnect after a growing back-off.
    pub(super) fn fail(&mut self, i: usize, class: ErrorClass, now: Instant) {
        self.tally.error(class);
        self.first_try_over(i);
        // Requests the socket reserved but never sent go back to the pool.
        let c = &mut self.conns[i];
        self.issued -= c.counted;
        self.reserved -= c.tickets;
        c.tickets = 0;
        c.counted = 0;
        let c = &self.conns[i];
        if c.inflight.is_empty() && self.counting(now) && self.plan.quota.is_some() {
            // A failed attempt with nothing in flight still uses up a request, so -n ends.
            self.issued += 1;
        }
        self.close_socket(i);
        let c = &mut self.conns[i];
        let at = now + c.backoff;
        c.backoff = (c.backoff * 2).min(BACKOFF_MAX);
        self.set_timer(i, at);
    }

    pub(super) fn scan_timeouts(&mut self, now: Instant) {
        let limit = self.spec.timeout();
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            let late = match c.state {
                State::Connecting => now.duration_since(c.started) > limit,
                State::Handshaking => now.duration_since(c.tls_started) > limit,
                State::Up => c
                    .inflight
                    .front()
                    .is_some_and(|&(_, sent)| now.duration_since(sent) > limit),
                State::Down => false,
            };
            if late {
                self.fail(i, ErrorClass::Timeout, now);
            }
        }
    }
}
