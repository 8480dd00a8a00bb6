//! Shared anonymous memory: one mapping made before any fork, seen by every process.

use std::io;
use std::sync::atomic::AtomicU64;

/// Maps `n` zeroed 64-bit atomic words, shared with every child forked afterwards. The mapping
/// is page-aligned (so 8-word blocks are cache-line aligned) and lives until the process exits.
pub fn shared_words(n: usize) -> io::Result<&'static [AtomicU64]> {
    let len = n.max(1) * std::mem::size_of::<AtomicU64>();
    let p = super::map_anonymous(len, true)?;
    // SAFETY: the mapping is len bytes, zero-filled (a valid AtomicU64 is any bit pattern),
    // page-aligned, and never unmapped, so a 'static slice over it is sound.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<AtomicU64>(), n.max(1)) })
}
