//! Receiving: reading a connection's bytes and handing them to its client connection (which
//! frames and checks them and settles each request through the engine's books), then pacing
//! what it sends next.

use std::io;
use std::time::{Duration, Instant};

use super::Engine;
use crate::load::client::Next;
use crate::load::{ErrorClass, Pacing};
use crate::sys;

/// The most reads of one connection in one turn of the loop (of the engine's 256 KiB buffer).
pub(super) const READS_PER_TURN: usize = 4;

/// Held connections one engine thread opens again per second, on average, after the server
/// closed them (`--active`): at 32 threads, 16,000 a second. A server closing 297,000 idle
/// connections at once accepts more slowly than it did at the start: reopening them at 1,000
/// a thread (32,000 a second) had 5,118 connects time out behind full listen backlogs, at
/// once 327,535 (issue 80's note).
const REOPENS_PER_S: f64 = 500.0;

/// Receiving responses.
impl Engine<'_> {
    pub(super) fn on_readable(&mut self, i: usize, mut now: Instant, to_eof: bool) {
        if self.slots[i].tls().is_some() {
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
            let r = match self.slots[i].fd() {
                Some(fd) => sys::fd::read(fd, &mut self.buf),
                None => return,
            };
            match r {
                Ok(0) => return self.on_eof(i, now),
                Ok(n) => {
                    self.ledger.tally.bytes_in += n as u64;
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
        let (conn, books) = (self.slots[i].conn_mut(), &mut self.ledger);
        if let Err(class) = conn.input(&self.buf[..n], now, books) {
            self.fail(i, class, now);
            return false;
        }
        // What the protocol says back (HTTP/2's acknowledgements, window updates and bodies the
        // windows let go).
        if self.slots[i].conn().next() == Next::Send && self.flush(i).is_err() {
            return false;
        }
        self.after_responses(i, now)
    }

    /// Decides what a connection does once its responses are processed.
    pub(super) fn after_responses(&mut self, i: usize, now: Instant) -> bool {
        let c = self.slots[i].conn();
        // Done with its socket and nothing in flight: closed, whatever it had left to write.
        if c.next() == Next::Close {
            self.recycle(i, now);
            return false;
        }
        if c.finishing() {
            // The socket takes no new request: what is in flight on it is awaited.
            return true;
        }
        match self.pace.pacing {
            Pacing::Think(d) if c.idle() && !self.slots[i].wake_set() => self.set_timer(i, now + d),
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

    /// The server closed connection `i`: what the close cut fails it, else it is opened again.
    pub(super) fn on_eof(&mut self, i: usize, now: Instant) {
        let (conn, books) = self.split(i);
        match conn.closed(now, books) {
            Err(class) => self.fail(i, class, now),
            // A held connection the server closed (its idle timeout, shorter than the run's
            // hold): counted, and opened again at a time drawn over a spread that grows with
            // what this thread holds, since the server closes them all together and a storm of
            // connects would overflow its backlog (and time out).
            Ok(()) if self.slots[i].holds() => {
                self.ledger.tally.held_closed += 1;
                self.close_socket(i);
                let spread = (self.holding as f64 / REOPENS_PER_S).max(0.001);
                let at = now + Duration::from_secs_f64(self.rng.uniform() * spread);
                self.set_timer(i, at);
            }
            // The server closed an idle keep-alive connection: open a new one.
            Ok(()) => self.recycle(i, now),
        }
    }
}
