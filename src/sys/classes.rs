//! The binary's allocator ([`Classes`]): the system's, except for small over-aligned blocks,
//! which come from size classes.
//!
//! glibc (2.36 here) serves `aligned_alloc(128, n)` by carving an aligned block out of a larger
//! one and freeing the pieces before and after it, which later aligned requests cannot use: a
//! 640-byte block aligned to 128 costs 896 bytes, a 256-byte one 383 (measured, 100,000 of
//! each). tokio aligns its tasks and its sockets' registrations to 128 bytes (a cache line
//! pair), so under glibc a held tokio connection paid 1,281 bytes where its structures take
//! 896. Here a block whose alignment is over 16 and at most 128 bytes, of at most 4 KiB, comes
//! from the class of its size rounded up to a multiple of 128: blocks carved in turn from
//! 64 KiB chunks, and kept on the class's free list once freed (never given back to the
//! system: such blocks are tasks and registrations, made again as connections come). What
//! jemalloc and mimalloc do for such blocks, in 120 lines. Everything else goes to the system
//! allocator unchanged.
//!
//! Each class is behind a spin lock held for a few instructions (a chunk's allocation at
//! most). A fork while another thread holds one would leave the child's copy locked for ever:
//! the locks are taken before a fork and let go after it, in parent and child
//! (`pthread_atfork`, registered with the first class block).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// Classes step by this much, and serve alignments up to it.
const STEP: usize = 128;

/// The largest block a class serves.
const LARGEST: usize = 4096;

const CLASSES: usize = LARGEST / STEP;

/// Classes carve their blocks from chunks of this size.
const CHUNK: usize = 64 * 1024;

/// One class: its free list (each free block holds the address of the next; 0 ends it) and
/// the rest of its current chunk.
struct Class {
    free: usize,
    next: usize,
    end: usize,
}

/// A class behind its spin lock.
struct Locked {
    held: AtomicBool,
    class: UnsafeCell<Class>,
}

// SAFETY: `class` is only reached between `lock` and `unlock`, which the atomic flag makes one
// thread at a time.
unsafe impl Sync for Locked {}

impl Locked {
    const fn new() -> Locked {
        Locked {
            held: AtomicBool::new(false),
            class: UnsafeCell::new(Class {
                free: 0,
                next: 0,
                end: 0,
            }),
        }
    }

    fn lock(&self) {
        let mut spins = 0u32;
        while self
            .held
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // The holder may have been preempted (two cores): let it run.
            spins = spins.wrapping_add(1);
            match spins % 64 {
                0 => std::thread::yield_now(),
                _ => std::hint::spin_loop(),
            }
        }
    }

    fn unlock(&self) {
        self.held.store(false, Ordering::Release);
    }

    /// Runs `f` on the class, locked.
    fn with<R>(&self, f: impl FnOnce(&mut Class) -> R) -> R {
        self.lock();
        // SAFETY: the lock is held: no other thread reaches the class until `unlock`.
        let r = f(unsafe { &mut *self.class.get() });
        self.unlock();
        r
    }
}

static TABLE: [Locked; CLASSES] = [const { Locked::new() }; CLASSES];

static AT_FORK: Once = Once::new();

extern "C" fn lock_all() {
    TABLE.iter().for_each(Locked::lock);
}

extern "C" fn unlock_all() {
    TABLE.iter().rev().for_each(Locked::unlock);
}

/// The class that serves `layout`, if one does: small and aligned over 16, at most 128.
fn class_of(layout: Layout) -> Option<usize> {
    (layout.align() > 16 && layout.align() <= STEP && layout.size() <= LARGEST)
        .then(|| layout.size().max(1).div_ceil(STEP) - 1)
}

/// The system allocator, with size classes for small over-aligned blocks (see the module's
/// words). `muxlab`'s binary installs it with `#[global_allocator]`.
pub struct Classes;

impl Classes {
    /// Registers the fork handlers; `main` calls it first, before any thread or fork (else the
    /// first class block does, while another thread might fork).
    pub fn prepare() {
        AT_FORK.call_once(|| {
            // SAFETY: the handlers only take and let go of the classes' locks; registering
            // them cannot fail in a way that matters (without them a fork is as it was).
            unsafe {
                libc::pthread_atfork(Some(lock_all), Some(unlock_all), Some(unlock_all));
            }
        });
    }

    /// A block of class `c`: a freed one, or the next of the class's chunk (a new chunk when
    /// the current one is spent). Null when the system has no memory for a chunk.
    fn take(c: usize) -> *mut u8 {
        Classes::prepare();
        let size = (c + 1) * STEP;
        TABLE[c].with(|k| {
            if k.free != 0 {
                let block = k.free;
                // SAFETY: a free block of this class holds the address of the next free one
                // in its first word (written by `dealloc`), and is ours until handed out.
                k.free = unsafe { *(block as *const usize) };
                return block as *mut u8;
            }
            if k.next + size > k.end {
                // SAFETY: CHUNK and 4096 make a valid, non-zero layout.
                let chunk = unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, 4096)) };
                if chunk.is_null() {
                    return chunk;
                }
                k.next = chunk as usize;
                k.end = k.next + CHUNK;
            }
            let block = k.next;
            k.next += size;
            block as *mut u8
        })
    }
}

// SAFETY: a class block is `(c + 1) * 128` bytes at a multiple of 128 from a 4096-aligned
// chunk, so it is as large and as aligned as the layout asked; it is handed out once until
// freed (free list and chunk are only reached under the class's lock); `dealloc` gets the
// layout it was asked with, so it returns it to the class it came from. Every other layout goes
// to `System` unchanged.
unsafe impl GlobalAlloc for Classes {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match class_of(layout) {
            Some(c) => Classes::take(c),
            // SAFETY: forwarded as given (the caller guarantees a non-zero-size layout).
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match class_of(layout) {
            Some(c) => {
                let p = Classes::take(c);
                if !p.is_null() {
                    // SAFETY: a block of class `c` holds at least `layout.size()` bytes.
                    unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
                }
                p
            }
            // SAFETY: forwarded as given (calloc: pages the kernel zeroes are not touched).
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match class_of(layout) {
            Some(c) => TABLE[c].with(|k| {
                // SAFETY: `ptr` is a block of class `c` the caller no longer uses, at least
                // 128 bytes and aligned for a usize: its first word links it into the list.
                unsafe { *(ptr as *mut usize) = k.free };
                k.free = ptr as usize;
            }),
            // SAFETY: `ptr` came from `System` with `layout`.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` with `layout`'s alignment makes a valid
        // layout.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if class_of(layout).is_none() && class_of(new).is_none() {
            // SAFETY: `ptr` came from `System` with `layout`, and so does the new block.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: a new block for `new`, the old one's bytes copied (as many as both hold),
        // the old one freed: each call with the layout its block was asked with.
        unsafe {
            let to = self.alloc(new);
            if !to.is_null() {
                std::ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            to
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of tokio's shapes (a task, a registration: 128-byte aligned) are as aligned as
    /// asked, never overlap, come back from the free list once freed, cost their class's size
    /// (no piece lost to alignment), and other layouts go to the system.
    #[test]
    fn over_aligned_blocks_come_from_classes_aligned_apart_and_reused() {
        let a = Classes;
        let task = Layout::from_size_align(600, 128).unwrap();
        let io = Layout::from_size_align(256, 128).unwrap();
        assert_eq!((class_of(task), class_of(io)), (Some(4), Some(1)));
        assert_eq!(
            class_of(Layout::from_size_align(600, 8).unwrap()),
            None,
            "plain: the system's"
        );
        assert_eq!(
            class_of(Layout::from_size_align(8192, 128).unwrap()),
            None,
            "large: the system's"
        );
        let blocks: Vec<(*mut u8, Layout)> = (0..1000)
            .flat_map(|_| [task, io])
            // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
            .map(|l| (unsafe { a.alloc(l) }, l))
            .collect();
        for (i, (p, l)) in blocks.iter().enumerate() {
            assert!(!p.is_null() && (*p as usize).is_multiple_of(128), "block {i} at {p:?}");
            // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
            unsafe { std::ptr::write_bytes(*p, i as u8, l.size()) };
        }
        let mut spans: Vec<(usize, usize)> = blocks.iter().map(|(p, l)| (*p as usize, l.size())).collect();
        spans.sort_unstable();
        for w in spans.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "blocks overlap: {w:?}");
        }
        for (i, (p, l)) in blocks.iter().enumerate() {
            // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
            let bytes = unsafe { std::slice::from_raw_parts(*p, l.size()) };
            assert!(bytes.iter().all(|b| *b == i as u8), "block {i} was written over");
        }
        // Consecutive task blocks of one chunk lie one class (640 bytes) apart: nothing lost.
        let tasks: Vec<usize> = blocks
            .iter()
            .filter(|(_, l)| *l == task)
            .map(|(p, _)| *p as usize)
            .collect();
        let apart = tasks.windows(2).filter(|w| w[1] - w[0] == 640).count();
        assert!(apart >= 900, "{apart} of 999 task blocks right after the last");
        let (last, l) = *blocks.last().unwrap();
        // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
        unsafe { a.dealloc(last, l) };
        // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
        assert_eq!(unsafe { a.alloc(l) }, last, "a freed block is the next handed out");
        for (p, l) in blocks {
            // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
            unsafe { a.dealloc(p, l) };
        }
        // Grown past its class, a block keeps its bytes.
        // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
        unsafe {
            let p = a.alloc(io);
            std::ptr::write_bytes(p, 7, 256);
            let q = a.realloc(p, io, 3000);
            assert!(std::slice::from_raw_parts(q, 256).iter().all(|b| *b == 7));
            a.dealloc(q, Layout::from_size_align(3000, 128).unwrap());
        }
    }

    /// Threads allocating and freeing at once never get one block twice.
    #[test]
    fn threads_sharing_a_class_never_share_a_block() {
        // A class no other test here uses (384 bytes): the first test counts on its own.
        let l = Layout::from_size_align(384, 128).unwrap();
        let threads: Vec<_> = (0..4u8)
            .map(|t| {
                std::thread::spawn(move || {
                    for round in 0..2000u32 {
                        // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
                        let p = unsafe { Classes.alloc(l) };
                        let mark = t.wrapping_mul(31).wrapping_add(round as u8);
                        // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
                        unsafe { std::ptr::write_bytes(p, mark, 384) };
                        std::thread::yield_now();
                        // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
                        let bytes = unsafe { std::slice::from_raw_parts(p, 384) };
                        assert!(
                            bytes.iter().all(|b| *b == mark),
                            "thread {t}: another thread wrote into its block"
                        );
                        // SAFETY: non-zero layouts; each block is used within its layout while held and freed once, with that layout.
                        unsafe { Classes.dealloc(p, l) };
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}
