//! The room a connection's output has left, shared with the threads that build its answers
//! (a shard's owner, io-threads' executor): room before work. The connection's thread says
//! how much room its output has left ([`Room::publish`]); a thread answering one of its
//! commands draws each value's bytes from it before it writes them ([`Draw::fits`]), and
//! stops where they do not fit: what it built goes back, and it keeps the rest until the
//! connection asks again once its client has read ([`super::Again`]). So what a connection
//! holds of answers built elsewhere, in flight or waiting in order, stays within its bound on
//! output with the replies it builds itself: `--max-output`, plus the value a read on its own
//! thread takes past it (it stops after the value that crossed it) and the first value of the
//! answer its client reads next, which goes whatever the room (else nothing could move).
//!
//! No lock: the connection's thread writes what others may draw up to, and what it took back;
//! a thread answering takes what is left at once when it begins an answer (one
//! compare-and-swap), builds it within that, and gives back what it did not use. Another
//! thread answering the same connection meanwhile finds less (its answer stops sooner and goes
//! on later), never more.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::Arc;

/// A connection's room for answers built elsewhere. All in bytes, each a running total since
/// the connection began.
#[derive(Debug, Default)]
pub struct Room {
    /// What other threads may have drawn by now: what they had handed back when the
    /// connection last looked, plus the room its output had left then (its thread's).
    limit: Line,
    /// What the connection has taken back of it, in answers (its thread's).
    received: AtomicUsize,
    /// What they have drawn (theirs).
    drawn: Line,
    /// The connection is gone.
    closed: AtomicBool,
}

/// A count on a cache line of its own: one side writes it, the other reads it.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Line(AtomicUsize);

impl Room {
    /// The connection's output has `room` bytes left (it has taken back every answer it
    /// counts as held): what others may draw from now on. Returns the bytes drawn and not yet
    /// taken back (answers being built, or posted and not taken).
    pub(crate) fn publish(&self, room: usize) -> usize {
        let received = self.received.load(Relaxed);
        self.limit.0.store(received.saturating_add(room), Release);
        self.drawn.0.load(Acquire).saturating_sub(received)
    }

    /// Bytes drawn and not yet taken back.
    pub(crate) fn in_flight(&self) -> usize {
        self.drawn.0.load(Acquire).saturating_sub(self.received.load(Relaxed))
    }

    /// The connection is gone: what is held for it may go.
    pub(crate) fn close(&self) {
        self.closed.store(true, Release);
    }

    /// Whether the connection is gone.
    pub fn closed(&self) -> bool {
        self.closed.load(Acquire)
    }

    /// The connection took back an answer of `n` bytes.
    pub(crate) fn received(&self, n: usize) {
        self.received.fetch_add(n, Relaxed);
    }

    /// Takes all that is left to draw: how much.
    fn grab(&self) -> usize {
        let mut drawn = self.drawn.0.load(Acquire);
        loop {
            let left = self.limit.0.load(Acquire).saturating_sub(drawn);
            match self.drawn.0.compare_exchange_weak(drawn, drawn + left, AcqRel, Acquire) {
                Ok(_) => return left,
                Err(now) => drawn = now,
            }
        }
    }

    /// An answer took `grant` bytes and made `made`: what it made is what stays drawn.
    fn settle(&self, grant: usize, made: usize) {
        match made >= grant {
            true => self.drawn.0.fetch_add(made - grant, AcqRel),
            false => self.drawn.0.fetch_sub(grant - made, AcqRel),
        };
    }
}

/// One answer's draws from its connection's room, on the thread that builds it.
#[derive(Debug)]
pub struct Draw {
    room: Arc<Room>,
    /// Its first value goes whatever the room: the answer is the next the client reads, and
    /// was asked while the output had room or once the client had read all before it (else
    /// nothing could move).
    first_anyway: bool,
    /// What it took of the room (once it wrote a value), and what its values used of it.
    grant: Option<usize>,
    used: usize,
}

/// Bytes a value's encoding adds to its length and its key's, at most: RESP's `$N\r\n` and
/// `\r\n`, memcache's `VALUE`, flags, length, CAS and line ends. What a value really made is
/// settled once the answer is built.
const FRAMING: usize = 64;

impl Draw {
    /// Draws for an answer to a connection with `room`; `front`: the answer is the next the
    /// client reads.
    pub fn new(room: Arc<Room>, front: bool) -> Draw {
        Draw {
            room,
            first_anyway: front,
            grant: None,
            used: 0,
        }
    }

    /// Whether the value of `key`, `len` bytes (0: missing), may be written now: its bytes
    /// counted if so.
    pub(crate) fn fits(&mut self, key: &[u8], len: usize) -> bool {
        let n = key.len() + len + FRAMING;
        let grant = *self.grant.get_or_insert_with(|| self.room.grab());
        let ok = self.used + n <= grant || (self.first_anyway && self.used == 0);
        if ok {
            self.used += n;
        }
        ok
    }

    /// The answer is built, `made` bytes: what it took of the room is settled to them.
    pub fn settle(self, made: usize) {
        self.room.settle(self.grant.unwrap_or(0), made);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_drawn_only_within_the_room_published_and_the_front_takes_one_past_it() {
        let room = Arc::new(Room::default());
        assert_eq!(room.publish(1000), 0);
        let mut d = Draw::new(room.clone(), false);
        assert!(d.fits(b"k", 400), "464 of 1000");
        assert!(d.fits(b"k", 400), "928 of 1000");
        assert!(!d.fits(b"k", 400), "past the room");
        d.settle(990);
        assert_eq!(room.in_flight(), 990, "settled to what it made");
        // The room is spent: an answer not at the front gets nothing, the front one value.
        let mut behind = Draw::new(room.clone(), false);
        assert!(!behind.fits(b"k", 10));
        let mut front = Draw::new(room.clone(), true);
        assert!(front.fits(b"k", 5000), "the front's first value goes anyway");
        assert!(!front.fits(b"k", 1), "but no second");
        front.settle(5010);
        behind.settle(0);
        assert_eq!(room.in_flight(), 6000);
        room.received(6000);
        assert_eq!(room.in_flight(), 0);
        // The connection now holds what it took back: it publishes what its output has left.
        assert_eq!(room.publish(100), 0);
        assert!(Draw::new(room.clone(), false).fits(b"k", 30));
        assert!(!Draw::new(room, false).fits(b"k", 30), "100 bytes took one draw of 95");
    }
}
