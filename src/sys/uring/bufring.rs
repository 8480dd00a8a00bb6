//! The provided-buffer ring of a [`super::Ring`]: buffers the kernel picks from for receives
//! (Linux 5.19+), lent to the caller by a completion and given back when consumed.

use std::io;

use io_uring::types::BufRingEntry;

/// Buffer group id of the provided-buffer ring.
pub(super) const BGID: u16 = 0;

/// The provided-buffer ring: `entries` descriptors in a page-aligned mapping shared with the
/// kernel, pointing into one heap block of `entries * size` bytes that the kernel writes into.
pub(super) struct BufRing {
    pub(super) ring: *mut BufRingEntry,
    ring_len: usize,
    pub(super) entries: u16,
    pub(super) size: usize,
    /// The buffers, as a raw block: the kernel writes into the parts it owns while we read the
    /// parts lent to us, so no Rust reference ever covers the whole block.
    data: *mut u8,
    tail: u16,
    /// Which buffers are lent to the caller (delivered, not yet recycled).
    lent: Vec<bool>,
}

impl BufRing {
    pub(super) fn new(entries: u16, size: usize) -> io::Result<BufRing> {
        let ring_len = entries as usize * std::mem::size_of::<BufRingEntry>();
        let p = super::super::map_anonymous(ring_len, false)?;
        // Touched now, page by page: the buffers are a fixed cost of the ring, paid at start,
        // not memory that grows as connections send.
        let mut block = vec![0u8; entries as usize * size].into_boxed_slice();
        block.iter_mut().step_by(4096).for_each(|b| *b = 1);
        let data = Box::into_raw(block).cast::<u8>();
        let mut br = BufRing {
            ring: p.cast(),
            ring_len,
            entries,
            size,
            data,
            tail: 0,
            lent: vec![true; entries as usize],
        };
        for bid in 0..entries {
            br.push(bid);
        }
        br.publish();
        Ok(br)
    }

    /// Hands buffer `bid` to the kernel at the tail (visible after `publish`).
    pub(super) fn push(&mut self, bid: u16) {
        assert!(
            std::mem::replace(&mut self.lent[bid as usize], false),
            "buffer {bid} given back twice"
        );
        let slot = (self.tail & (self.entries - 1)) as usize;
        // SAFETY: slot < entries, inside the mapping.
        let e = unsafe { &mut *self.ring.add(slot) };
        // SAFETY: bid < entries, so the offset stays inside the block of entries * size bytes.
        e.set_addr(unsafe { self.data.add(bid as usize * self.size) } as u64);
        e.set_len(self.size as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes queued buffers visible to the kernel (a release store of the tail).
    pub(super) fn publish(&self) {
        // SAFETY: ring points at the first entry of a valid, initialised buffer ring; the tail
        // field is a u16 the kernel reads with acquire semantics.
        unsafe {
            let tail = BufRingEntry::tail(self.ring) as *const std::sync::atomic::AtomicU16;
            (*tail).store(self.tail, std::sync::atomic::Ordering::Release);
        }
    }

    /// Marks buffer `bid` as delivered to us by a completion.
    pub(super) fn lend(&mut self, bid: u16, len: usize) -> RecvBuf {
        assert!(
            !std::mem::replace(&mut self.lent[bid as usize], true),
            "buffer {bid} delivered twice"
        );
        RecvBuf {
            bid,
            len: len.min(self.size),
        }
    }

    pub(super) fn bytes(&self, buf: &RecvBuf) -> &[u8] {
        assert!(self.lent[buf.bid as usize], "buffer {} is not lent", buf.bid);
        // SAFETY: the buffer is lent to us (the kernel does not write it until it is pushed
        // back, which needs `&mut self`), lies inside the block, and len <= size.
        unsafe { std::slice::from_raw_parts(self.data.add(buf.bid as usize * self.size), buf.len) }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: the mapping and the block were made in new() with these sizes; the Ring drops
        // a BufRing only when no operation can still write into it (see Ring's Drop).
        unsafe {
            libc::munmap(self.ring.cast(), self.ring_len);
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.data,
                self.entries as usize * self.size,
            )));
        }
    }
}

/// Received bytes in a provided buffer, lent to the caller until [`Ring::recycle`].
#[derive(Debug)]
pub struct RecvBuf {
    pub(super) bid: u16,
    pub(super) len: usize,
}
