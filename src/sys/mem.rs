//! Memory given back to the kernel, so that what an idle connection no longer uses shows as
//! freed in the process's resident size, not only in the allocator's free lists.
//!
//! - [`Pages`]: a buffer whose whole pages [`Pages::release`] hands back while the buffer
//!   stays usable: a blocking worker's read buffer, released when its connection goes idle
//!   (in the heap: a mapping of its own per connection would cost a thread server a fifth of
//!   its connections under `vm.max_map_count`).
//! - [`large_blocks_from_the_kernel`]: large buffers are mappings of their own, resident only
//!   where written and gone when freed.
//! - [`released`] and [`give_back`]: glibc keeps freed heap blocks for reuse, so buffers an idle
//!   connection drops do not leave the process by themselves. Code that drops large buffers says
//!   so with [`released`]; at its next tick a worker calls [`give_back`], which trims the
//!   allocator (`malloc_trim`: free pages anywhere in the heap go back) once a mebibyte or more
//!   was released, at most four times a second across the process.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Bytes of buffers dropped since the last trim.
static RELEASED: AtomicUsize = AtomicUsize::new(0);
/// When the last trim ran (milliseconds since the epoch).
static TRIMMED_AT: AtomicU64 = AtomicU64::new(0);
/// Released bytes that make a trim worth its cost.
const TRIM_FROM: usize = 1024 * 1024;
/// The least time between two trims.
const TRIM_EVERY_MS: u64 = 250;

/// `bytes` of heap buffers were dropped (a connection gone idle gave them up).
pub fn released(bytes: usize) {
    RELEASED.fetch_add(bytes, Ordering::Relaxed);
}

/// Trims the allocator when a mebibyte or more was [`released`] since the last trim and the last
/// trim was a quarter of a second or more ago (any thread: the first to see it due does it).
/// Every worker calls it at each of its ticks. `true` when it trimmed.
pub fn give_back() -> bool {
    if RELEASED.load(Ordering::Relaxed) < TRIM_FROM {
        return false;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let last = TRIMMED_AT.load(Ordering::Relaxed);
    if now < last + TRIM_EVERY_MS
        || TRIMMED_AT
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return false;
    }
    RELEASED.store(0, Ordering::Relaxed);
    trim();
    true
}

#[cfg(target_env = "gnu")]
fn trim() {
    // SAFETY: malloc_trim only walks the allocator's own free lists (under its locks) and
    // advises the kernel about pages no allocation uses; it touches no memory of ours.
    unsafe { libc::malloc_trim(0) };
    super::count();
}

#[cfg(not(target_env = "gnu"))]
fn trim() {}

/// Makes every allocation of 128 KiB or more a mapping of its own, for the life of the process:
/// glibc's default, but fixed. By default glibc raises that threshold each time such a block is
/// freed, after which large buffers (a connection's unsent replies, a burst's input) come from
/// the heap, where their whole capacity stays resident once touched and freeing them returns
/// nothing. A server calls it once, before it serves.
pub fn large_blocks_from_the_kernel() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets a parameter of the allocator, under its own lock.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// A buffer of `len` bytes whose pages can go back to the kernel while it stays usable. It
/// lives in the heap, not in a mapping of its own: a thread per connection already costs
/// four mappings (its stack and guard, its signal stack and guard), and the kernel's
/// `vm.max_map_count` (65,530 by default) caps every mapping of a process, so a fifth per
/// connection held a thread server under 13,100 connections. (64 KiB is under glibc's
/// threshold for a mapping of its own: [`large_blocks_from_the_kernel`].)
pub struct Pages {
    buf: Vec<u8>,
}

/// The page size the release rounds to.
const PAGE: usize = 4096;

impl Pages {
    /// A zero-filled buffer of `len` bytes.
    pub fn new(len: usize) -> std::io::Result<Pages> {
        Ok(Pages { buf: vec![0u8; len] })
    }

    /// Gives the buffer's memory back to the kernel: the whole pages inside it (the parts of a
    /// page at either end, which the heap shares with its neighbours, are zeroed instead); it
    /// stays usable, reading as zeros, and takes pages again as it is written.
    pub fn release(&mut self) {
        let start = self.buf.as_ptr() as usize;
        let end = start + self.buf.len();
        let (first, last) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
        if first >= last {
            self.buf.fill(0);
            return;
        }
        self.buf[..first - start].fill(0);
        self.buf[last - start..].fill(0);
        // SAFETY: [first, last) is whole pages inside this buffer's own heap block, which no one
        // else refers to (the allocator's own words are outside it, before the block); after
        // MADV_DONTNEED the heap's private anonymous memory reads as zeros, still a valid [u8].
        unsafe { libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_DONTNEED) };
        super::count();
    }
}

impl std::ops::Deref for Pages {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf
    }
}

impl std::ops::DerefMut for Pages {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_pages_read_as_zeros_and_take_writes_again() {
        let mut p = Pages::new(64 * 1024).unwrap();
        p[..5].copy_from_slice(b"hello");
        p[64 * 1024 - 1] = 7;
        p.release();
        assert!(p.iter().all(|&b| b == 0));
        p[100] = 1;
        assert_eq!(p[100], 1);
    }
}
