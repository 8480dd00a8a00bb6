//! A connection's table of streams: those open or half-closed, the closed ones kept for their
//! buffers, and the identifiers of recently closed ones with how they closed (to tell a frame
//! on a closed stream from one on a stream never opened). An open stream is found by its
//! identifier in O(1) (at most [`LINEAR`] compares, or [`IdIndex`] past that), so a DATA frame
//! costs the same on a connection with one stream open or a thousand. A closed one is looked for in a ring of fixed size, only for a
//! frame on a stream that is not open.

use crate::proto::h2::stream::{Closed, Stream};
use crate::proto::Later;

/// Where each open stream is in the table, by its identifier: open addressing over a table of
/// at least twice the streams that may be open (a load under a half), probed linearly from the
/// identifier's place (`id >> 1`: identifiers are odd), emptied by shifting back. A few
/// instructions a lookup; identifiers a client picks to collide cost at worst a probe over
/// `--max-streams` entries, the linear search there was before.
#[derive(Debug, Default)]
struct IdIndex {
    /// Identifiers (0: empty) and their places in the table; allocated at the first stream.
    ids: Vec<u32>,
    places: Vec<u32>,
    /// Slots for `max` streams open at once.
    max: usize,
}

impl IdIndex {
    fn new(max: usize) -> IdIndex {
        IdIndex {
            max,
            ..IdIndex::default()
        }
    }

    fn mask(&self) -> usize {
        self.ids.len() - 1
    }

    fn home(&self, id: u32) -> usize {
        (id >> 1) as usize & self.mask()
    }

    /// The slot holding `id`, or the empty one where it would go.
    fn slot(&self, id: u32) -> usize {
        let mut i = self.home(id);
        while self.ids[i] != 0 && self.ids[i] != id {
            i = (i + 1) & self.mask();
        }
        i
    }

    fn get(&self, id: u32) -> Option<usize> {
        if self.ids.is_empty() {
            return None;
        }
        let i = self.slot(id);
        (self.ids[i] == id).then(|| self.places[i] as usize)
    }

    fn set(&mut self, id: u32, place: usize) {
        if self.ids.is_empty() {
            let n = (2 * self.max.max(8)).next_power_of_two();
            self.ids = vec![0; n];
            self.places = vec![0; n];
        }
        let i = self.slot(id);
        self.ids[i] = id;
        self.places[i] = place as u32;
    }

    /// Forgets every identifier (keeping the table).
    fn clear(&mut self) {
        self.ids.iter_mut().for_each(|i| *i = 0);
    }

    fn remove(&mut self, id: u32) {
        if self.ids.is_empty() {
            return;
        }
        let mut hole = self.slot(id);
        if self.ids[hole] != id {
            return;
        }
        // Shift back the entries after the hole whose probe passed through it.
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask();
            if self.ids[j] == 0 {
                break;
            }
            let home = self.home(self.ids[j]);
            let passes = if hole <= j {
                home <= hole || home > j
            } else {
                home <= hole && home > j
            };
            if passes {
                self.ids[hole] = self.ids[j];
                self.places[hole] = self.places[j];
                hole = j;
            }
        }
        self.ids[hole] = 0;
    }
}

/// Up to this many open streams are found by looking at each (a handful of compares, fewer
/// instructions than keeping an index); past it by the index.
const LINEAR: usize = 16;

/// A stream's pending-body buffer larger than this is given back when it closes (a spare
/// stream keeps at most this much).
pub(super) const KEEP_BUFFER: usize = 16 * 1024;
/// Closed streams' buffers kept for the next streams: a few, not one per stream a burst had
/// open.
const SPARE_BUFFERS: usize = 4;
/// What an idle connection keeps of them: small buffers only.
const IDLE_BUFFER: usize = 1024;

#[derive(Debug)]
pub(super) struct Streams {
    open: Vec<Stream>,
    /// Where each open stream is in `open`, kept while more than [`LINEAR`] are open (fewer
    /// are found faster by looking at each).
    index: IdIndex,
    indexed: bool,
    /// Closed streams' body buffers, emptied, for the next streams.
    spare: Vec<Vec<u8>>,
    /// The highest stream identifier the client used.
    last_id: u32,
    /// A ring of recently closed streams.
    closed: Vec<(u32, Closed)>,
    closed_next: usize,
    /// The window each new stream grants the client (our SETTINGS_INITIAL_WINDOW_SIZE).
    recv_window: u32,
    /// Open streams that owe a response later (an event stream, or one waiting for its
    /// work), kept where a stream takes, settles or drops what it owes: with none, the
    /// session's `due` and `owes` answer without looking at the streams (every drive asks).
    owing: usize,
}

impl Streams {
    /// A table of up to `max_open` streams open at once, each granting the client
    /// `recv_window`, remembering the last `remember` closed ones.
    pub(super) fn new(max_open: usize, remember: usize, recv_window: u32) -> Streams {
        Streams {
            open: Vec::new(),
            index: IdIndex::new(max_open),
            indexed: false,
            spare: Vec::new(),
            last_id: 0,
            closed: vec![(0, Closed::Finished); remember.max(1)],
            closed_next: 0,
            recv_window,
            owing: 0,
        }
    }

    /// Some open stream owes a response later.
    pub(super) fn owes(&self) -> bool {
        self.owing > 0
    }

    /// The stream at `i` owes `later` (it owed nothing).
    pub(super) fn defer(&mut self, i: usize, later: Later) {
        let before = self.open[i].swap_later(Some(later));
        debug_assert!(before.is_none(), "a stream owes one response");
        self.owing += usize::from(before.is_none());
    }

    /// The stream at `i` owes nothing later any more (its work is done, its events all sent,
    /// or the server ends them): what it owed.
    pub(super) fn settle(&mut self, i: usize) -> Option<Later> {
        let owed = self.open[i].swap_later(None);
        self.owing -= usize::from(owed.is_some());
        owed
    }

    /// Where the stream whose response waits for `ticket` is.
    pub(super) fn find_ticket(&self, ticket: u64) -> Option<usize> {
        self.open.iter().position(|s| s.ticket() == Some(ticket))
    }

    /// The tickets open streams wait for.
    pub(super) fn tickets(&self) -> Vec<u64> {
        self.open.iter().filter_map(Stream::ticket).collect()
    }

    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// The highest stream identifier the client used.
    pub(super) fn last_id(&self) -> u32 {
        self.last_id
    }

    /// The client used stream `id` (the last one processed, for GOAWAY).
    pub(super) fn seen(&mut self, id: u32) {
        self.last_id = self.last_id.max(id);
    }

    /// Where stream `id` is in the table.
    pub(super) fn find(&self, id: u32) -> Option<usize> {
        match self.indexed {
            true => self.index.get(id),
            false => self.open.iter().position(|s| s.id == id),
        }
    }

    pub(super) fn get(&self, i: usize) -> &Stream {
        &self.open[i]
    }

    pub(super) fn at(&mut self, i: usize) -> &mut Stream {
        &mut self.open[i]
    }

    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Stream> {
        self.open.iter_mut()
    }

    /// Opens stream `id`, allowed to send `send_window`; its place in the table.
    pub(super) fn open(&mut self, id: u32, send_window: i64) -> usize {
        let buffer = self.spare.pop().unwrap_or_default();
        self.open.push(Stream::new(id, send_window, self.recv_window, buffer));
        let i = self.open.len() - 1;
        if self.indexed {
            self.index.set(id, i);
        } else if self.open.len() > LINEAR {
            for (k, s) in self.open.iter().enumerate() {
                self.index.set(s.id, k);
            }
            self.indexed = true;
        }
        i
    }

    /// Closes the stream at `i` (`how`, remembered): the response bytes it still held, and
    /// what it owed later.
    pub(super) fn close(&mut self, i: usize, how: Closed) -> (usize, Option<Later>) {
        let owed = self.settle(i);
        let s = self.open.swap_remove(i);
        if self.indexed && self.open.len() <= LINEAR / 2 {
            self.index.clear();
            self.indexed = false;
        } else if self.indexed {
            self.index.remove(s.id);
            if let Some(moved) = self.open.get(i) {
                self.index.set(moved.id, i);
            }
        }
        let held = s.pending.len();
        self.remember(s.id, how);
        if s.pending.capacity() <= KEEP_BUFFER && self.spare.len() < SPARE_BUFFERS {
            let mut buffer = s.pending;
            buffer.clear();
            self.spare.push(buffer);
        }
        (held, owed)
    }

    /// Gives up what a burst of streams grew, once none is open: the spare buffers but small
    /// ones, the room for many open streams and their index. The bytes given up.
    pub(super) fn trim(&mut self) -> usize {
        if !self.open.is_empty() {
            return 0;
        }
        let mut n = 0;
        self.spare.retain(|b| {
            let keep = b.capacity() <= IDLE_BUFFER;
            n += if keep { 0 } else { b.capacity() };
            keep
        });
        if self.open.capacity() > LINEAR {
            n += self.open.capacity() * std::mem::size_of::<Stream>();
            self.open = Vec::new();
        }
        if !self.index.ids.is_empty() {
            n += self.index.ids.capacity() * 8;
            self.index = IdIndex::new(self.index.max);
        }
        n
    }

    /// Remembers that stream `id` closed `how`.
    pub(super) fn remember(&mut self, id: u32, how: Closed) {
        self.closed[self.closed_next] = (id, how);
        self.closed_next = (self.closed_next + 1) % self.closed.len();
    }

    /// How stream `id` closed, if it is one of those remembered (the most recent word on it).
    pub(super) fn was_closed(&self, id: u32) -> Option<Closed> {
        let n = self.closed.len();
        (1..=n)
            .map(|k| self.closed[(self.closed_next + n - k) % n])
            .find(|(i, _)| *i == id && id != 0)
            .map(|(_, how)| how)
    }
}

#[cfg(test)]
mod tests {
    use crate::proto::h2::streams::*;

    #[test]
    fn the_index_finds_every_open_stream_through_collisions_and_removals() {
        // Identifiers 32 apart share a home in a table of 32 slots: runs of collisions
        // (checked below), with two more between them.
        let ids: Vec<u32> = (0..8).map(|k| 1 + 32 * k).chain([3, 5]).collect();
        let mut x = IdIndex::new(16);
        for (p, &id) in ids.iter().enumerate() {
            x.set(id, p);
        }
        for (p, &id) in ids.iter().enumerate() {
            assert_eq!(x.get(id), Some(p), "{id}");
        }
        assert!(ids.iter().any(|&id| x.ids[x.home(id)] != id), "no collision to test");
        // Out of the middle of the run, then the rest still found; a removed one is gone.
        for &gone in &[33, 1, 129] {
            x.remove(gone);
            assert_eq!(x.get(gone), None);
        }
        for (p, &id) in ids.iter().enumerate().filter(|(_, id)| ![33, 1, 129].contains(*id)) {
            assert_eq!(x.get(id), Some(p), "{id} after removals");
        }
        assert_eq!(x.get(7), None, "never opened");
    }

    #[test]
    fn streams_are_found_by_looking_or_by_the_index_as_their_number_rises_and_falls() {
        let mut t = Streams::new(100, 64, 65_535);
        let ids: Vec<u32> = (0..40).map(|k| 1 + 2 * k).collect();
        for &id in &ids {
            t.open(id, 100);
        }
        assert!(t.indexed, "past {LINEAR} open");
        let check = |t: &Streams| {
            for (k, s) in t.open.iter().enumerate() {
                assert_eq!(t.find(s.id), Some(k), "{}", s.id);
            }
        };
        check(&t);
        while t.len() > 3 {
            let i = t.find(t.open[t.len() / 2].id).unwrap();
            t.close(i, Closed::Finished);
            check(&t);
        }
        assert!(!t.indexed, "back to looking");
        assert_eq!(t.find(ids[0] + 1000), None);
    }

    #[test]
    fn the_count_of_streams_that_owe_follows_each_deferral_settlement_and_close() {
        let mut t = Streams::new(100, 64, 65_535);
        for id in [1, 3, 5] {
            t.open(id, 100);
        }
        assert!(!t.owes());
        t.defer(0, Later::Pending(7));
        t.defer(2, Later::Pending(9));
        assert!(t.owes());
        assert_eq!(t.tickets(), vec![7, 9]);
        assert_eq!(t.find_ticket(9), Some(2));
        let (_, owed) = t.close(0, Closed::ResetByUs);
        assert!(
            matches!(owed, Some(Later::Pending(7))),
            "a closed stream hands back what it owed"
        );
        assert!(t.owes(), "stream 5 still owes");
        let i = t.find_ticket(9).expect("moved, still found");
        assert!(matches!(t.settle(i), Some(Later::Pending(9))));
        assert!(t.settle(i).is_none(), "settled once");
        assert!(!t.owes() && t.tickets().is_empty());
        let (_, owed) = t.close(i, Closed::Finished);
        assert!(owed.is_none());
        assert!(!t.owes(), "a stream that owed nothing closes without moving the count");
    }
}
