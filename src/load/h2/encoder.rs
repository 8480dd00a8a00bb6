//! HPACK's encoder side for the client's requests.

use super::H2Class;
use crate::proto::h2::hpack;

/// HPACK's encoder side for requests: each field the first time as a literal the server adds
/// to its table (while the table has room), later as one index. A class's block is kept once
/// it no longer changes the table, so a warm connection copies a few bytes per request.
#[derive(Debug)]
pub(super) struct Encoder {
    /// Entries we added to the server's table, oldest first: (class, field).
    table: Vec<(u8, u8)>,
    size: usize,
    /// The table size the server allows (SETTINGS_HEADER_TABLE_SIZE, at most our 4096).
    max: usize,
    /// A size update the next block must start with.
    resize: Option<usize>,
    /// Each class's block, once it no longer changes the table.
    cached: Vec<Vec<u8>>,
}

impl Encoder {
    pub(super) fn new(classes: usize) -> Encoder {
        Encoder {
            table: Vec::new(),
            size: 0,
            max: hpack::TABLE_SIZE,
            resize: None,
            cached: vec![Vec::new(); classes],
        }
    }

    /// The server's table size changed: it is emptied, and the next block says so.
    pub(super) fn resize(&mut self, server: usize) {
        let max = server.min(hpack::TABLE_SIZE);
        if max == self.max && self.resize.is_none() {
            return;
        }
        self.max = max;
        self.resize = Some(max);
        self.table.clear();
        self.size = 0;
        self.cached.iter_mut().for_each(Vec::clear);
    }

    pub(super) fn encode(&mut self, classes: &[H2Class], class: u8, out: &mut Vec<u8>) {
        if let Some(max) = self.resize.take() {
            // Evict everything, then set the new limit (RFC 7541 4.2).
            hpack::put_integer(out, 0x20, 5, 0);
            hpack::put_integer(out, 0x20, 5, max);
        }
        let cached = &self.cached[usize::from(class)];
        if !cached.is_empty() {
            out.extend_from_slice(cached);
            return;
        }
        let start = out.len();
        let mut added = false;
        for (f, (name, value)) in classes[usize::from(class)].fields.iter().enumerate() {
            let (whole, by_name) = hpack::static_index(name, value);
            if let Some(i) = whole {
                hpack::put_indexed(out, i);
                continue;
            }
            let same = |&(c, g): &(u8, u8)| {
                let (n, v) = &classes[usize::from(c)].fields[usize::from(g)];
                n == name && v == value
            };
            if let Some(pos) = self.table.iter().position(same) {
                hpack::put_indexed(out, 62 + self.table.len() - 1 - pos);
                continue;
            }
            let size = name.len() + value.len() + hpack::ENTRY_OVERHEAD;
            let index = self.size + size <= self.max && f < 256;
            let (first, bits) = if index { (0x40, 6) } else { (0x00, 4) };
            match by_name {
                Some(n) => hpack::put_integer(out, first, bits, n),
                None => {
                    out.push(first);
                    hpack::put_string(out, name);
                }
            }
            hpack::put_string(out, value);
            if index {
                self.table.push((class, f as u8));
                self.size += size;
                added = true;
            }
        }
        if added {
            // Indices moved: every kept block is stale.
            self.cached.iter_mut().for_each(Vec::clear);
        } else {
            self.cached[usize::from(class)] = out[start..].to_vec();
        }
    }
}
