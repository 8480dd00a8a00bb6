//! The decoder a server needs for request headers (RFC 7541): indexed and literal fields
//! against the static and dynamic tables, Huffman strings, table size updates.

use super::huffman;
use super::static_table::STATIC;
use super::table::{Table, ENTRY_OVERHEAD, TABLE_SIZE};

/// A header block that does not decode (the connection's COMPRESSION_ERROR), or decodes to
/// more than the caller allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadBlock {
    Invalid,
    TooLarge,
}

/// A connection's request-header decoder.
#[derive(Debug)]
pub struct Decoder {
    pub(super) table: Table,
    /// The current field's name and value, decoded.
    field: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

/// Reads an integer with an `n`-bit prefix at `b[*i]` (RFC 7541 5.1).
pub(super) fn integer(b: &[u8], i: &mut usize, n: u32) -> Result<usize, BadBlock> {
    let mask = (1usize << n) - 1;
    let mut v = usize::from(*b.get(*i).ok_or(BadBlock::Invalid)?) & mask;
    *i += 1;
    if v < mask {
        return Ok(v);
    }
    let mut shift = 0;
    loop {
        let byte = *b.get(*i).ok_or(BadBlock::Invalid)?;
        *i += 1;
        if shift > 21 {
            // Past 2^28: no header block of ours needs it.
            return Err(BadBlock::Invalid);
        }
        v += usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
}

/// Appends the string literal at `b[*i]` (RFC 7541 5.2) to `out`.
fn string(b: &[u8], i: &mut usize, out: &mut Vec<u8>) -> Result<(), BadBlock> {
    let huff = *b.get(*i).ok_or(BadBlock::Invalid)? & 0x80 != 0;
    let len = integer(b, i, 7)?;
    let s = b.get(*i..*i + len).ok_or(BadBlock::Invalid)?;
    *i += len;
    if huff {
        huffman::decode(s, out).map_err(|_| BadBlock::Invalid)
    } else {
        out.extend_from_slice(s);
        Ok(())
    }
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder {
            table: Table::new(),
            field: Vec::with_capacity(256),
        }
    }

    /// Appends the name and value of table entry `i` (static 1..=61, then dynamic) to
    /// `self.field`; returns the name's length.
    fn entry(&mut self, i: usize, with_value: bool) -> Result<usize, BadBlock> {
        let (name, value) = match i {
            0 => return Err(BadBlock::Invalid),
            1..=61 => {
                let (n, v) = STATIC[i - 1];
                (n.as_bytes(), v.as_bytes())
            }
            _ => self.table.get(i - 62).ok_or(BadBlock::Invalid)?,
        };
        self.field.extend_from_slice(name);
        if with_value {
            self.field.extend_from_slice(value);
        }
        Ok(name.len())
    }

    /// Gives up what a large field grew: the bytes given up.
    pub fn trim(&mut self) -> usize {
        self.field.clear();
        match self.field.capacity() {
            n if n > 4 * 1024 => {
                self.field = Vec::with_capacity(256);
                n - 256
            }
            _ => 0,
        }
    }

    /// Decodes a whole header block, calling `each(name, value)` for every field in order;
    /// past `limit` bytes of decoded list (name + value + 32 per field) it stops with
    /// `TooLarge`. An error leaves the table out of step with the peer's: the connection must
    /// end.
    pub fn decode(&mut self, b: &[u8], limit: usize, each: &mut dyn FnMut(&[u8], &[u8])) -> Result<(), BadBlock> {
        let mut i = 0;
        let mut fields = 0;
        let mut size = 0;
        while i < b.len() {
            let first = b[i];
            self.field.clear();
            let (name_len, index) = if first & 0x80 != 0 {
                let idx = integer(b, &mut i, 7)?;
                (self.entry(idx, true)?, false)
            } else if first & 0xe0 == 0x20 {
                // A dynamic table size update: only before the block's first field.
                let max = integer(b, &mut i, 5)?;
                if fields > 0 || max > TABLE_SIZE {
                    return Err(BadBlock::Invalid);
                }
                self.table.max = max;
                self.table.evict_to(max);
                continue;
            } else {
                let (prefix, index) = if first & 0xc0 == 0x40 { (6, true) } else { (4, false) };
                let idx = integer(b, &mut i, prefix)?;
                let name_len = if idx == 0 {
                    string(b, &mut i, &mut self.field)?;
                    self.field.len()
                } else {
                    self.entry(idx, false)?
                };
                string(b, &mut i, &mut self.field)?;
                (name_len, index)
            };
            size += self.field.len() + ENTRY_OVERHEAD;
            if size > limit {
                return Err(BadBlock::TooLarge);
            }
            let (name, value) = self.field.split_at(name_len);
            each(name, value);
            if index {
                self.table.insert(name, value);
            }
            fields += 1;
        }
        Ok(())
    }
}
