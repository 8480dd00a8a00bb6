//! A green thread's stack: corosensei's `DefaultStack`, one mapping whose lowest page is made
//! inaccessible (its guard), so the kernel counts two mappings per stack; how deep it has been
//! used ([`touched`]), and its pages given back ([`release`], [`release_below_here`]).

use std::io;

use corosensei::stack::{DefaultStack, Stack};

/// A coroutine stack of `size` usable bytes above a guard page.
pub fn stack(size: usize) -> io::Result<DefaultStack> {
    DefaultStack::new(size)
}

/// The page size stacks are counted in (the kernel's).
fn page() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: sysconf reads a constant of the system; no memory is passed.
    *PAGE.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    })
}

/// Where a stack's usable pages lie: from `limit` (above its guard page) up to `base`.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    limit: usize,
    base: usize,
}

/// `stack`'s usable pages.
pub fn bounds(stack: &DefaultStack) -> Bounds {
    Bounds {
        limit: stack.limit().get() + page(),
        base: stack.base().get(),
    }
}

/// How deep a stack has been used: from its base down to its lowest page in memory (pages
/// given back by [`release_below_here`] or [`release`] are not counted), in bytes.
pub fn touched(b: Bounds) -> usize {
    let mut resident = vec![0u8; (b.base - b.limit) / page()];
    // SAFETY: [limit, base) is a stack's own mapping above its guard page, page-aligned;
    // mincore writes one byte per page into `resident`, which has one per page.
    let r = unsafe { libc::mincore(b.limit as *mut libc::c_void, b.base - b.limit, resident.as_mut_ptr()) };
    super::count();
    if r != 0 {
        return 0;
    }
    match resident.iter().position(|p| p & 1 == 1) {
        Some(lowest) => b.base - (b.limit + lowest * page()),
        None => 0,
    }
}

/// Gives every page of a stack no coroutine runs on back to the kernel (one kept for the next).
pub fn release(stack: &DefaultStack) {
    let b = bounds(stack);
    // SAFETY: no coroutine runs on this stack (the caller holds it, taken back from a finished
    // one); its pages above the guard are private anonymous memory, zeros after this.
    unsafe { libc::madvise(b.limit as *mut libc::c_void, b.base - b.limit, libc::MADV_DONTNEED) };
    super::count();
}

/// Below the running code's stack pointer, what a call made from here may still use: this
/// function's frame, libc's `madvise` and the kernel entry take far less.
const IN_USE_BELOW: usize = 4 * 1024;

/// Gives back the pages of the stack `b` that lie below the caller's frames (less
/// [`IN_USE_BELOW`]): the caller runs on that stack (a green thread shedding while idle).
#[inline(never)]
pub fn release_below_here(b: Bounds) {
    let here = 0u8;
    let sp = std::hint::black_box(std::ptr::addr_of!(here)) as usize;
    if sp <= b.limit || sp > b.base {
        return;
    }
    let top = sp.saturating_sub(IN_USE_BELOW) / page() * page();
    if top <= b.limit {
        return;
    }
    // SAFETY: the caller runs on this stack (checked: the stack pointer is inside it), so
    // [limit, top) lies above its guard page and more than IN_USE_BELOW below the live frames:
    // no live value is there (the stack grows down, nothing points below the stack pointer);
    // after MADV_DONTNEED the pages read as zeros and fault in again if a deeper call comes.
    unsafe { libc::madvise(b.limit as *mut libc::c_void, top - b.limit, libc::MADV_DONTNEED) };
    super::count();
}

#[cfg(test)]
mod tests {
    use super::*;
    use corosensei::{Coroutine, CoroutineResult};

    /// A stack's touched depth follows what ran on it, and its pages go back on release.
    #[test]
    fn a_stacks_depth_is_what_ran_on_it_and_release_gives_it_back() {
        let s = stack(256 * 1024).unwrap();
        let b = bounds(&s);
        assert_eq!(touched(b), 0, "a fresh stack has no page in memory");
        #[inline(never)]
        fn deep() -> u8 {
            let d = [7u8; 100 * 1024];
            std::hint::black_box(&d)[5]
        }
        let mut co: Coroutine<(), (), (usize, usize), DefaultStack> = Coroutine::with_stack(s, move |_, ()| {
            deep();
            let before = touched(b);
            // Shallow again: what the deep call used goes back, the live frames stay.
            release_below_here(b);
            (before, touched(b))
        });
        let CoroutineResult::Return((depth, after)) = co.resume(()) else {
            panic!("it returns")
        };
        assert!((100 * 1024..200 * 1024).contains(&depth), "{depth}");
        assert!(after > 0 && after < 48 * 1024, "{after}");
        let s = co.into_stack();
        release(&s);
        assert_eq!(touched(b), 0);
        // Called on another stack (this thread's own), it gives nothing back.
        release_below_here(b);
    }
}
