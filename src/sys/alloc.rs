//! A counting allocator for tests: [`Counting`] forwards to the system allocator and counts the
//! allocations made by threads that asked to be counted ([`count_this_thread`]). A test binary
//! installs it with `#[global_allocator]` to prove that a path does not allocate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Allocations (and reallocations) by counted threads.
static COUNTED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Whether this thread's allocations are counted (const-initialised: reading it never
    /// allocates, so the allocator may read it).
    static ON: Cell<bool> = const { Cell::new(false) };
}

/// The system allocator, counting.
pub struct Counting;

impl Counting {
    #[inline(never)]
    fn note(&self) {
        if ON.try_with(|on| on.get()).unwrap_or(false) {
            COUNTED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so each
// upholds GlobalAlloc's contract exactly as `System` does; the counting touches no memory the
// allocator hands out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.note();
        // SAFETY: forwarded as given (the caller guarantees a non-zero-size layout).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.note();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator (that is, from `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.note();
        // SAFETY: `ptr` came from `System` with `layout`; the caller checks `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Counts this thread's allocations from now on (threads it starts are not counted).
#[inline(never)]
pub fn count_this_thread() {
    ON.with(|on| on.set(true));
}

/// Allocations by counted threads so far (only with [`Counting`] installed).
pub fn allocations() -> u64 {
    COUNTED.load(Ordering::Relaxed)
}
