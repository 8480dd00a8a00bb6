//! HPACK's dynamic table (RFC 7541 2.3.2, 4): entries oldest first in one byte buffer that is
//! compacted in place, evicted to the table's size.

use std::collections::VecDeque;

/// The dynamic table size we allow (SETTINGS_HEADER_TABLE_SIZE, left at its default).
pub const TABLE_SIZE: usize = 4096;
/// Bytes an entry costs beyond its name and value (RFC 7541 4.1).
pub const ENTRY_OVERHEAD: usize = 32;

/// One dynamic table entry: where its name and value lie in the table's buffer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    at: usize,
    name: usize,
    value: usize,
}

impl Entry {
    pub(super) fn size(&self) -> usize {
        self.name + self.value + ENTRY_OVERHEAD
    }
}

/// The dynamic table: entries oldest first (index 62 is the newest), bytes in one buffer.
#[derive(Debug)]
pub(super) struct Table {
    pub(super) bytes: Vec<u8>,
    pub(super) entries: VecDeque<Entry>,
    pub(super) size: usize,
    pub(super) max: usize,
}

impl Table {
    pub(super) fn new() -> Table {
        // Allocated at the first entry: a client that never indexes a field costs nothing here.
        Table {
            bytes: Vec::new(),
            entries: VecDeque::new(),
            size: 0,
            max: TABLE_SIZE,
        }
    }

    pub(super) fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let e = self.entries.get(self.entries.len().checked_sub(i + 1)?)?;
        let name = &self.bytes[e.at..e.at + e.name];
        Some((name, &self.bytes[e.at + e.name..e.at + e.name + e.value]))
    }

    pub(super) fn evict_to(&mut self, max: usize) {
        while self.size > max {
            let e = self.entries.pop_front().expect("a table over its size holds entries");
            self.size -= e.size();
        }
        if self.entries.is_empty() {
            self.bytes.clear();
        }
    }

    /// Adds `name: value` (RFC 7541 4.4: an entry larger than the table empties it).
    pub(super) fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = name.len() + value.len() + ENTRY_OVERHEAD;
        if size > self.max {
            self.evict_to(0);
            return;
        }
        self.evict_to(self.max - size);
        if self.bytes.capacity() == 0 {
            self.bytes.reserve_exact(2 * TABLE_SIZE);
            self.entries.reserve_exact(TABLE_SIZE / ENTRY_OVERHEAD);
        }
        let n = name.len() + value.len();
        if self.bytes.len() + n > self.bytes.capacity() {
            // Compact: the live entries move to the front (no allocation: they fit).
            let from = self.entries.front().map_or(self.bytes.len(), |e| e.at);
            self.bytes.drain(..from);
            for e in self.entries.iter_mut() {
                e.at -= from;
            }
        }
        let at = self.bytes.len();
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
        self.entries.push_back(Entry {
            at,
            name: name.len(),
            value: value.len(),
        });
        self.size += size;
    }
}
