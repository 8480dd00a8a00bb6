//! What a client connection holds of its requests: each one sent and not answered yet
//! ([`Sent`]), what it has yet to write ([`Outbox`]: bytes go on at the end, leave from the
//! front), and the requests reserved for its socket ([`Tickets`]: never more counted than
//! held).

use std::time::Instant;

/// A request sent and not answered yet.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    /// When it was meant to go (open loop: its scheduled time).
    pub intended: Instant,
    /// When it went.
    pub at: Instant,
    /// Its class (`--mix`; 0 without).
    pub class: u8,
    /// HTTP/2: its stream, and the lane (of the connection's `--streams`) it took.
    pub stream: u32,
    pub lane: u16,
    /// HTTP/2: times it was sent again (refused, above a GOAWAY's last stream, or waiting when
    /// its connection failed).
    pub tries: u8,
}

/// What a connection has yet to write: requests go on at the end, the socket takes from the
/// front, and once it has taken all the buffer is empty again.
#[derive(Debug, Default)]
pub struct Outbox {
    buf: Vec<u8>,
    sent: usize,
}

impl Outbox {
    /// Where the next request is written: after everything waiting (append only).
    pub fn queue(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// What the socket has not taken yet.
    pub fn unsent(&self) -> &[u8] {
        &self.buf[self.sent.min(self.buf.len())..]
    }

    /// The socket took `n` more bytes.
    pub fn took(&mut self, n: usize) {
        self.sent += n;
        debug_assert!(self.sent <= self.buf.len(), "took more than was queued");
        if self.sent >= self.buf.len() {
            self.clear();
        }
    }

    /// Nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.sent >= self.buf.len()
    }

    /// Everything queued is dropped (the socket is gone).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.sent = 0;
    }
}

/// The requests reserved for a socket when it opened, with a per-socket limit (`--close`,
/// `--requests-per-conn`), and how many of them were counted against the quota then (never
/// more than it holds).
#[derive(Debug, Default, Clone, Copy)]
pub struct Tickets {
    left: u64,
    counted: u64,
}

impl Tickets {
    /// `left` reserved, `counted` of them counted already.
    pub fn reserve(&mut self, left: u64, counted: u64) {
        debug_assert!(counted <= left);
        *self = Tickets { left, counted };
    }

    /// Reserved and not used yet.
    pub fn left(&self) -> u64 {
        self.left
    }

    /// One is used: `Some(true)` when it had been counted against the quota at reservation,
    /// `None` when none was left.
    pub fn take(&mut self) -> Option<bool> {
        self.left = self.left.checked_sub(1)?;
        let counted = self.counted > 0;
        self.counted -= u64::from(counted);
        Some(counted)
    }

    /// The socket is done with them: those unused (and how many of them were counted) go
    /// back; none are left.
    pub fn give_back(&mut self) -> (u64, u64) {
        let Tickets { left, counted } = std::mem::take(self);
        (left, counted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outbox_gives_the_socket_what_was_queued_in_order_and_is_empty_once_all_is_taken() {
        let mut o = Outbox::default();
        assert!(o.is_empty());
        o.queue().extend_from_slice(b"GET /a");
        o.took(4);
        o.queue().extend_from_slice(b"GET /b");
        assert_eq!(o.unsent(), b"/aGET /b", "what the socket took does not come again");
        o.took(8);
        assert!(o.is_empty() && o.unsent().is_empty());
        o.queue().extend_from_slice(b"x");
        assert_eq!(o.unsent(), b"x", "emptied, it starts over at the front");
    }

    #[test]
    fn tickets_never_count_more_than_they_hold_and_what_is_unused_goes_back() {
        let mut t = Tickets::default();
        assert_eq!(t.take(), None, "none reserved");
        t.reserve(3, 2);
        assert_eq!((t.take(), t.take(), t.left()), (Some(true), Some(true), 1));
        assert_eq!(t.take(), Some(false), "the third was not counted at reservation");
        assert_eq!(t.take(), None);
        t.reserve(5, 1);
        t.take();
        assert_eq!(t.give_back(), (4, 0), "four unused, none of them counted");
        assert_eq!((t.left(), t.take()), (0, None), "given back: none left");
    }
}
