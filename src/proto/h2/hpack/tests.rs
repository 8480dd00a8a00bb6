//! HPACK against the RFC's examples, and its bounds.

use super::decode::integer;
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
