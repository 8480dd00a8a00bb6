//! Self-describing values: every value a SET writes says which key it belongs to, which
//! connection slot wrote it in which run, its sequence number among that slot's writes, its
//! length, and a checksum of all its bytes. Any GET can check a value's integrity (its key, its
//! length, its checksum) without knowing who wrote it; the slot that owns a key also knows which
//! write the value must be.
//!
//! Layout (little-endian): `0..4` length, `4..8` run, `8..16` key, `16..20` writer, `20..24`
//! sequence, `24..32` checksum (of every other byte), then filler made from (run, writer,
//! sequence).

use crate::load::pattern;

/// The header's bytes: the least a value may be when values are checked.
pub const HEADER: usize = 32;

/// Who wrote a value, and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub run: u32,
    pub key: u64,
    pub writer: u32,
    /// The writer's sequence number (0: the prefill's).
    pub seq: u32,
}

/// Why a value is not what it says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broken {
    /// Shorter than a header, or its length field differs from its length.
    Length,
    /// It belongs to another key.
    OtherKey,
    /// Its checksum does not match its bytes.
    Checksum,
}

impl Broken {
    pub fn describe(&self) -> &'static str {
        match self {
            Broken::Length => "a value of another length than it says",
            Broken::OtherKey => "another key's value",
            Broken::Checksum => "a value whose checksum does not match its bytes",
        }
    }
}

/// Appends a value of `len` bytes (at least [`HEADER`]) stamped `s`.
pub fn write(out: &mut Vec<u8>, len: usize, s: Stamp) {
    debug_assert!(len >= HEADER);
    let start = out.len();
    out.resize(start + len, 0);
    let v = &mut out[start..];
    v[0..4].copy_from_slice(&(len as u32).to_le_bytes());
    v[4..8].copy_from_slice(&s.run.to_le_bytes());
    v[8..16].copy_from_slice(&s.key.to_le_bytes());
    v[16..20].copy_from_slice(&s.writer.to_le_bytes());
    v[20..24].copy_from_slice(&s.seq.to_le_bytes());
    let source = (u64::from(s.run) << 32) | u64::from(s.writer);
    pattern(source, u64::from(s.seq), 0, &mut v[HEADER..]);
    let sum = checksum(v);
    v[24..32].copy_from_slice(&sum.to_le_bytes());
}

/// Appends a value of `len` bytes: stamped `s` when it is long enough to be, else filler
/// (`--no-verify` values under [`HEADER`] bytes, which nothing checks).
pub fn write_any(out: &mut Vec<u8>, len: usize, s: Stamp) {
    match len >= HEADER {
        true => write(out, len, s),
        false => out.resize(out.len() + len, b'x'),
    }
}

/// Checks that `v` is an intact value of key `key`: its stamp.
pub fn read(v: &[u8], key: u64) -> Result<Stamp, Broken> {
    if v.len() < HEADER || u32::from_le_bytes(v[0..4].try_into().unwrap()) as usize != v.len() {
        return Err(Broken::Length);
    }
    let word = |at: usize| u64::from_le_bytes(v[at..at + 8].try_into().unwrap());
    if checksum(v) != word(24) {
        return Err(Broken::Checksum);
    }
    let s = Stamp {
        run: u32::from_le_bytes(v[4..8].try_into().unwrap()),
        key: word(8),
        writer: u32::from_le_bytes(v[16..20].try_into().unwrap()),
        seq: u32::from_le_bytes(v[20..24].try_into().unwrap()),
    };
    match s.key == key {
        true => Ok(s),
        false => Err(Broken::OtherKey),
    }
}

/// A 64-bit checksum of a value's bytes other than its checksum field (24..32), eight bytes at
/// a time.
fn checksum(v: &[u8]) -> u64 {
    let mut h = 0x243F_6A88_85A3_08D3u64 ^ v.len() as u64;
    let mut mix = |w: u64| {
        h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 31;
    };
    let (head, rest) = v.split_at(24);
    for c in head.chunks_exact(8) {
        mix(u64::from_le_bytes(c.try_into().unwrap()));
    }
    let body = &rest[8..];
    let mut words = body.chunks_exact(8);
    for c in &mut words {
        mix(u64::from_le_bytes(c.try_into().unwrap()));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        mix(u64::from_le_bytes(last));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_reads_back_as_its_stamp_and_any_changed_byte_or_other_key_is_caught() {
        let s = Stamp {
            run: 9,
            key: 1234,
            writer: 7,
            seq: 42,
        };
        for len in [HEADER, HEADER + 1, 100, 4099] {
            let mut v = Vec::new();
            write(&mut v, len, s);
            assert_eq!(v.len(), len);
            assert_eq!(read(&v, 1234), Ok(s));
            assert_eq!(read(&v, 1235), Err(Broken::OtherKey), "another key's value");
            for at in [0, 5, 12, 17, 22, 26, len - 1] {
                let mut bad = v.clone();
                bad[at] ^= 0x10;
                assert!(read(&bad, 1234).is_err(), "len {len}: byte {at} changed");
            }
            assert_eq!(read(&v[..len - 1], 1234), Err(Broken::Length), "cut short");
        }
        assert_eq!(read(b"short", 1), Err(Broken::Length));
    }
}
