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
//! One lock per connection, taken by its thread at each check of the bound and by another
//! thread once per value it answers: uncontended unless both touch the same connection at
//! once.

use std::sync::{Arc, Mutex};

use crate::sync::lock;

/// A connection's room for answers built elsewhere.
#[derive(Debug, Default)]
pub struct Room(Mutex<Ledger>);

/// All in bytes, each a running total since the connection began.
#[derive(Debug, Default)]
struct Ledger {
    /// What other threads may have drawn by now: what they had handed back when the
    /// connection last looked, plus the room its output had left then.
    limit: usize,
    /// What they have drawn.
    drawn: usize,
    /// What the connection has taken back of it, in answers.
    received: usize,
    /// The connection is gone.
    closed: bool,
}

impl Room {
    /// The connection's output has `room` bytes left (it has taken back every answer it
    /// counts as held): what others may draw from now on. Returns the bytes drawn and not yet
    /// taken back (answers being built, or posted and not taken).
    pub(crate) fn publish(&self, room: usize) -> usize {
        let mut l = lock(&self.0);
        l.limit = l.received.saturating_add(room);
        l.drawn - l.received
    }

    /// Bytes drawn and not yet taken back.
    pub(crate) fn in_flight(&self) -> usize {
        let l = lock(&self.0);
        l.drawn - l.received
    }

    /// The connection is gone: what is held for it may go.
    pub(crate) fn close(&self) {
        lock(&self.0).closed = true;
    }

    /// Whether the connection is gone.
    pub fn closed(&self) -> bool {
        lock(&self.0).closed
    }

    /// The connection took back an answer of `n` bytes.
    pub(crate) fn received(&self, n: usize) {
        lock(&self.0).received += n;
    }

    /// Draws `n` bytes if they fit, or `anyway`.
    fn draw(&self, n: usize, anyway: bool) -> bool {
        let mut l = lock(&self.0);
        let fits = anyway || l.drawn.saturating_add(n) <= l.limit;
        if fits {
            l.drawn += n;
        }
        fits
    }

    /// An answer drew `drawn` bytes and made `made`: the difference is given back (or, for
    /// what no value was drawn for — a count, an `OK` — taken).
    fn settle(&self, drawn: usize, made: usize) {
        let mut l = lock(&self.0);
        l.drawn = l.drawn - drawn + made;
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
    drawn: usize,
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
            drawn: 0,
        }
    }

    /// Whether the value of `key`, `len` bytes (0: missing), may be written now: its bytes
    /// drawn if so.
    pub(crate) fn fits(&mut self, key: &[u8], len: usize) -> bool {
        let n = key.len() + len + FRAMING;
        let ok = self.room.draw(n, self.first_anyway && self.drawn == 0);
        if ok {
            self.drawn += n;
        }
        ok
    }

    /// The answer is built, `made` bytes: what was drawn is settled to them.
    pub fn settle(self, made: usize) {
        self.room.settle(self.drawn, made);
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
