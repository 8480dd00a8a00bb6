//! HPACK (RFC 7541): the decoder a server needs for request headers (static and dynamic table,
//! Huffman strings, table size updates) and the few encodings its responses use. The dynamic
//! table lives in one byte buffer that is compacted in place, so a decoder that has warmed up
//! allocates nothing.

use super::huffman;

mod encode;
mod table;

pub use encode::{put_indexed, put_integer, put_literal, put_string, static_index};
use table::Table;

/// The static table (RFC 7541 Appendix A), index 1 first.
const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// Static table indices the responses use.
pub const STATUS: usize = 8;
pub const CONTENT_LENGTH: usize = 28;
pub const CONTENT_TYPE: usize = 31;
pub const SERVER: usize = 54;

/// The dynamic table size we allow (SETTINGS_HEADER_TABLE_SIZE, left at its default).
pub const TABLE_SIZE: usize = 4096;
/// Bytes an entry costs beyond its name and value (RFC 7541 4.1).
pub const ENTRY_OVERHEAD: usize = 32;

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
    table: Table,
    /// The current field's name and value, decoded.
    field: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

/// Reads an integer with an `n`-bit prefix at `b[*i]` (RFC 7541 5.1).
fn integer(b: &[u8], i: &mut usize, n: u32) -> Result<usize, BadBlock> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(d: &mut Decoder, b: &[u8]) -> Result<Vec<(String, String)>, BadBlock> {
        let mut got = Vec::new();
        d.decode(b, usize::MAX, &mut |n, v| {
            got.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))
        })?;
        Ok(got)
    }

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_rfc_request_examples_decode_with_their_table() {
        // RFC 7541 C.3: three requests on one connection, without Huffman.
        let mut d = Decoder::new();
        let first = decode(&mut d, &hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d")).unwrap();
        assert_eq!(
            first,
            pairs(&[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                (":authority", "www.example.com")
            ])
        );
        assert_eq!(d.table.size, 57);
        let second = decode(&mut d, &hex("8286 84be 5808 6e6f 2d63 6163 6865")).unwrap();
        assert_eq!(second[3], (":authority".into(), "www.example.com".into()));
        assert_eq!(second[4], ("cache-control".into(), "no-cache".into()));
        assert_eq!(d.table.size, 110);
        let third = decode(
            &mut d,
            &hex("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"),
        )
        .unwrap();
        assert_eq!(
            third,
            pairs(&[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/index.html"),
                (":authority", "www.example.com"),
                ("custom-key", "custom-value")
            ])
        );
        assert_eq!(d.table.size, 164);
        // C.4.1: the first request again, Huffman-coded.
        let mut d = Decoder::new();
        let huff = decode(&mut d, &hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")).unwrap();
        assert_eq!(huff, first);
    }

    #[test]
    fn the_table_evicts_oldest_first_and_compacts_in_place() {
        let mut d = Decoder::new();
        assert_eq!(
            d.table.bytes.capacity(),
            0,
            "a table nothing was added to takes no memory"
        );
        let cap = 2 * TABLE_SIZE;
        // 200 insertions of 100-byte fields: the table holds the newest that fit in 4096.
        for k in 0..200 {
            let value = format!("{k:0>90}");
            let mut block = vec![0x40, 10];
            block.extend_from_slice(b"x-custom-0");
            put_integer(&mut block, 0, 7, value.len());
            block.extend_from_slice(value.as_bytes());
            decode(&mut d, &block).unwrap();
            assert!(d.table.size <= TABLE_SIZE);
        }
        assert_eq!(d.table.bytes.capacity(), cap, "the table's buffer grew");
        let newest = decode(&mut d, &[0x80 | 62]).unwrap();
        assert_eq!(newest[0].1, format!("{:0>90}", 199));
        let n = d.table.entries.len();
        assert_eq!(n, TABLE_SIZE / 132);
        assert!(decode(&mut d, &[0x80 | (62 + n as u8)]).is_err(), "past the table");
    }

    #[test]
    fn bad_blocks_are_errors() {
        let mut d = Decoder::new();
        assert_eq!(decode(&mut d, &[0x80]), Err(BadBlock::Invalid), "index 0");
        assert_eq!(
            decode(&mut d, &[0x80 | 70]),
            Err(BadBlock::Invalid),
            "past an empty dynamic table"
        );
        assert_eq!(
            decode(&mut d, &[0x3f, 0xe2, 0x1f]),
            Err(BadBlock::Invalid),
            "a size update over the limit"
        );
        assert_eq!(
            decode(&mut d, &[0x82, 0x20]),
            Err(BadBlock::Invalid),
            "a size update after a field"
        );
        assert_eq!(
            decode(&mut d, &[0x04, 0x05, b'/']),
            Err(BadBlock::Invalid),
            "a string past the block"
        );
        assert_eq!(
            decode(&mut d, &[0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
            Err(BadBlock::Invalid),
            "a huge integer"
        );
        assert!(decode(&mut d, &[0x20, 0x82]).is_ok(), "a size update first is fine");
        assert_eq!(d.table.max, 0);
    }

    #[test]
    fn integers_round_trip_at_every_prefix() {
        for n in 1..=8 {
            for v in [0usize, 1, 14, 15, 16, 126, 127, 128, 1337, 1 << 20] {
                let mut b = Vec::new();
                put_integer(&mut b, 0, n, v);
                let mut i = 0;
                assert_eq!(integer(&b, &mut i, n), Ok(v), "prefix {n}, value {v}");
                assert_eq!(i, b.len());
            }
        }
    }
}
