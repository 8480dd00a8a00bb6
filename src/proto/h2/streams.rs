//! A connection's table of streams: those open or half-closed, the closed ones kept for their
//! buffers, and the identifiers of recently closed ones with how they closed (to tell a frame
//! on a closed stream from one on a stream never opened). A stream is found by its identifier
//! in O(1), whatever the number open or remembered: a DATA frame costs the same on a
//! connection with one stream or a thousand.

use std::collections::{HashMap, VecDeque};

use super::stream::{Closed, Stream};

/// A stream's pending-body buffer larger than this is given back when it closes (a spare
/// stream keeps at most this much).
pub(super) const KEEP_BUFFER: usize = 16 * 1024;

#[derive(Debug)]
pub(super) struct Streams {
    open: Vec<Stream>,
    /// Where each open stream is in `open`.
    index: HashMap<u32, usize>,
    spare: Vec<Stream>,
    /// The highest stream identifier the client used.
    last_id: u32,
    /// Recently closed streams, how each closed, and the order they closed in (the oldest is
    /// forgotten past `remember`).
    closed: HashMap<u32, Closed>,
    closed_order: VecDeque<u32>,
    remember: usize,
}

impl Streams {
    /// A table remembering the last `remember` closed streams.
    pub(super) fn new(remember: usize) -> Streams {
        Streams {
            open: Vec::new(),
            index: HashMap::new(),
            spare: Vec::new(),
            last_id: 0,
            closed: HashMap::new(),
            closed_order: VecDeque::new(),
            remember: remember.max(1),
        }
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
        self.index.get(&id).copied()
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
        let s = Stream::new(id, send_window, self.spare.pop());
        self.open.push(s);
        let i = self.open.len() - 1;
        self.index.insert(id, i);
        i
    }

    /// Closes the stream at `i` (`how`, remembered); the response bytes it still held.
    pub(super) fn close(&mut self, i: usize, how: Closed) -> usize {
        let mut s = self.open.swap_remove(i);
        self.index.remove(&s.id);
        if let Some(moved) = self.open.get(i) {
            self.index.insert(moved.id, i);
        }
        let held = s.pending.len();
        if s.pending.capacity() > KEEP_BUFFER {
            s.pending = Vec::new();
        }
        self.remember(s.id, how);
        self.spare.push(s);
        held
    }

    /// Remembers that stream `id` closed `how`.
    pub(super) fn remember(&mut self, id: u32, how: Closed) {
        if self.closed.insert(id, how).is_none() {
            self.closed_order.push_back(id);
        }
        if self.closed_order.len() > self.remember {
            if let Some(old) = self.closed_order.pop_front() {
                self.closed.remove(&old);
            }
        }
    }

    /// How stream `id` closed, if it is one of those remembered.
    pub(super) fn was_closed(&self, id: u32) -> Option<Closed> {
        self.closed.get(&id).copied()
    }
}
