//! HPACK's encoding side: integers and string literals (Huffman-coded where shorter), fields
//! indexed or literal, and where the static table already holds a field.

use super::huffman;
use super::static_table::STATIC;

/// The static entry holding `name: value` whole, if one does, and the first entry holding
/// `name` (RFC 7541 Appendix A): what an encoder can refer to instead of sending the bytes.
pub fn static_index(name: &[u8], value: &[u8]) -> (Option<usize>, Option<usize>) {
    let mut by_name = None;
    for (i, (n, v)) in STATIC.iter().enumerate() {
        if n.as_bytes() == name {
            if v.as_bytes() == value {
                return (Some(i + 1), Some(i + 1));
            }
            by_name.get_or_insert(i + 1);
        }
    }
    (None, by_name)
}

/// Appends a string literal (RFC 7541 5.2), Huffman-coded where that is shorter.
pub fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    let h = huffman::encoded_len(s);
    if h < s.len() {
        put_integer(out, 0x80, 7, h);
        huffman::encode(s, out);
    } else {
        put_integer(out, 0x00, 7, s.len());
        out.extend_from_slice(s);
    }
}

/// Appends an integer with an `n`-bit prefix whose other bits are `first` (RFC 7541 5.1).
pub fn put_integer(out: &mut Vec<u8>, first: u8, n: u32, mut v: usize) {
    let mask = (1usize << n) - 1;
    if v < mask {
        out.push(first | v as u8);
        return;
    }
    out.push(first | mask as u8);
    v -= mask;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a field that is static entry `index` in full (RFC 7541 6.1).
pub fn put_indexed(out: &mut Vec<u8>, index: usize) {
    put_integer(out, 0x80, 7, index);
}

/// Appends a literal field without indexing whose name is static entry `name` (RFC 7541
/// 6.2.2), its value a plain string.
pub fn put_literal(out: &mut Vec<u8>, name: usize, value: &[u8]) {
    put_integer(out, 0x00, 4, name);
    put_integer(out, 0x00, 7, value.len());
    out.extend_from_slice(value);
}
