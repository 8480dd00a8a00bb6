//! HPACK's Huffman code (RFC 7541, Appendix B). The code is canonical: codes of one length are
//! consecutive and ordered by symbol, shorter codes first, so the table below (each symbol's
//! code length, straight from the appendix) determines every code. Decoding walks the bits,
//! checking at each length whether the code read so far is one of that length's codes.

/// Code length in bits of each symbol 0..=255 and of EOS (256), RFC 7541 Appendix B.
const LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28,
    28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12,
    10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6,
    5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22,
    22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20,
    22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28,
    27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28,
    27, 27, 27, 27, 27, 26, 30,
];

/// The end-of-string symbol: never valid inside a string.
const EOS: u16 = 256;
/// The longest code.
const MAX_LEN: usize = 30;

/// The canonical code's tables: symbols in code order, and per length the first code, how
/// many codes there are and where they start among the ordered symbols.
struct Canonical {
    symbols: [u16; 257],
    first: [u32; MAX_LEN + 1],
    count: [u16; MAX_LEN + 1],
    start: [u16; MAX_LEN + 1],
    codes: [u32; 257],
}

const fn canonical() -> Canonical {
    let mut t = Canonical {
        symbols: [0; 257],
        first: [0; MAX_LEN + 1],
        count: [0; MAX_LEN + 1],
        start: [0; MAX_LEN + 1],
        codes: [0; 257],
    };
    let mut n = 0;
    let mut code: u32 = 0;
    let mut len = 1;
    while len <= MAX_LEN {
        t.first[len] = code;
        t.start[len] = n as u16;
        let mut s = 0;
        while s < 257 {
            if LENGTHS[s] as usize == len {
                t.symbols[n] = s as u16;
                t.codes[s] = code;
                n += 1;
                code += 1;
                t.count[len] += 1;
            }
            s += 1;
        }
        code <<= 1;
        len += 1;
    }
    t
}

static TABLE: Canonical = canonical();

/// A Huffman-coded string that is not valid: it holds EOS, a code longer than any, or its
/// padding is longer than 7 bits or not EOS's leading ones (RFC 7541 5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadHuffman;

/// Appends the decoding of `input` to `out`.
pub fn decode(input: &[u8], out: &mut Vec<u8>) -> Result<(), BadHuffman> {
    let t = &TABLE;
    let (mut code, mut len) = (0u32, 0usize);
    for &byte in input {
        for bit in (0..8).rev() {
            code = (code << 1) | u32::from((byte >> bit) & 1);
            len += 1;
            let k = code.wrapping_sub(t.first[len]);
            if k < u32::from(t.count[len]) {
                let sym = t.symbols[usize::from(t.start[len]) + k as usize];
                if sym == EOS {
                    return Err(BadHuffman);
                }
                out.push(sym as u8);
                code = 0;
                len = 0;
            } else if len == MAX_LEN {
                return Err(BadHuffman);
            }
        }
    }
    // What is left is padding: fewer than 8 bits, all ones.
    if len > 7 || code != (1 << len) - 1 {
        return Err(BadHuffman);
    }
    Ok(())
}

/// The length in bytes of `input` Huffman-coded.
pub fn encoded_len(input: &[u8]) -> usize {
    let bits: usize = input.iter().map(|&b| usize::from(LENGTHS[usize::from(b)])).sum();
    bits.div_ceil(8)
}

/// Appends `input` Huffman-coded to `out` (padded with ones).
pub fn encode(input: &[u8], out: &mut Vec<u8>) {
    let (mut acc, mut bits) = (0u64, 0u32);
    for &b in input {
        let len = u32::from(LENGTHS[usize::from(b)]);
        acc = (acc << len) | u64::from(TABLE.codes[usize::from(b)]);
        bits += len;
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        out.push(((acc << (8 - bits)) | ((1 << (8 - bits)) - 1)) as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_codes_are_the_appendix_codes() {
        // A sample of Appendix B: (symbol, code).
        for (sym, code) in [
            (0usize, 0x1ff8u32),
            (1, 0x7fffd8),
            (9, 0xffffea),
            (b' ' as usize, 0x14),
            (b'&' as usize, 0xf8),
            (b'0' as usize, 0x0),
            (b'a' as usize, 0x3),
            (b'z' as usize, 0x7b),
            (255, 0x3ffffee),
            (256, 0x3fffffff),
        ] {
            assert_eq!(TABLE.codes[sym], code, "symbol {sym}");
        }
    }

    #[test]
    fn the_rfc_examples_decode() {
        // RFC 7541 C.4.1: "www.example.com".
        let mut out = Vec::new();
        decode(
            &[0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff],
            &mut out,
        )
        .unwrap();
        assert_eq!(out, b"www.example.com");
        // C.4.2: "no-cache".
        out.clear();
        decode(&[0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf], &mut out).unwrap();
        assert_eq!(out, b"no-cache");
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255u8).collect();
        let mut coded = Vec::new();
        encode(&all, &mut coded);
        assert_eq!(coded.len(), encoded_len(&all));
        let mut back = Vec::new();
        decode(&coded, &mut back).unwrap();
        assert_eq!(back, all);
    }

    #[test]
    fn bad_padding_and_eos_are_refused() {
        // 'a' is 00011: padding of zeros instead of ones.
        assert_eq!(decode(&[0b0001_1000], &mut Vec::new()), Err(BadHuffman));
        // A whole byte of padding (8 bits of ones after a complete symbol).
        assert_eq!(decode(&[0b0001_1111, 0xff], &mut Vec::new()), Err(BadHuffman));
        // EOS itself (30 ones) inside the string.
        assert_eq!(decode(&[0xff, 0xff, 0xff, 0xff], &mut Vec::new()), Err(BadHuffman));
        assert_eq!(decode(&[0b0001_1111], &mut Vec::new()).map(|_| ()), Ok(()));
    }
}
