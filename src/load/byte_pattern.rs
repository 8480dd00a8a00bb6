//! The byte pattern of every generated message: echo and packet messages, generated HTTP
//! bodies and keyed values are made of it, so what comes back is verified byte for byte.

/// Fills `out` with bytes `start..start + out.len()` of message `seq` of connection `conn`.
/// The pattern depends on all three, so a flipped, lost, duplicated or reordered byte is caught.
/// It is made a 64-bit word at a time: one mix per 8 bytes.
pub fn pattern(conn: u64, seq: u64, start: usize, out: &mut [u8]) {
    let base = conn.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seq.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let word = |k: u64| {
        let mut x = base ^ k.wrapping_mul(0x1656_67B1_9E37_79F9);
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (x ^ (x >> 32)).to_le_bytes()
    };
    let mut pos = start;
    let mut i = 0;
    while i < out.len() {
        let w = word((pos / 8) as u64);
        let from = pos % 8;
        let n = (8 - from).min(out.len() - i);
        out[i..i + n].copy_from_slice(&w[from..from + n]);
        i += n;
        pos += n;
    }
}
