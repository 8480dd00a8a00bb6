//! Stackful coroutines' unchecked parts, for `server::green`: a coroutine that may move to
//! another OS thread ([`Movable`]), the yielder of the coroutine this thread runs
//! ([`enter`], [`suspend`]), and its stack's pages ([`stack`], [`touched`],
//! [`release_below_here`]).
//!
//! The stacks and the switching are corosensei's: a stack is one mapping whose lowest page is
//! made inaccessible (its guard), so the kernel counts two mappings per stack.

use std::any::TypeId;
use std::cell::Cell;
use std::io;

pub use corosensei::stack::{DefaultStack, Stack};
pub use corosensei::{Coroutine, CoroutineResult, Yielder};

/// A coroutine (or anything holding one) handed from one OS thread to another.
///
/// The invariant that makes this sound, kept by `server::green`'s scheduler: a coroutine is
/// moved only while it is parked at the netpoller, where its stack holds no reference into a
/// thread-local and no guard of a lock, and nothing of the connection's session or hook is
/// borrowed (it waits on its socket between steps of its `Connection`). A coroutine suspended
/// anywhere else (its `cpu:` work's slice yield) resumes on the thread it ran on; one in a
/// blocking call stays on its thread throughout. Everything its stack owns is `Send` (an
/// `OwnedFd`, a `Connection`, a `Worker` handle, heap buffers).
pub struct Movable<T>(T);

// SAFETY: see the invariant above: the value crosses threads only at a netpoller park, when
// the coroutine's live data is `Send` and no thread-local of the thread it left is referenced.
unsafe impl<T> Send for Movable<T> {}

impl<T> Movable<T> {
    pub fn new(t: T) -> Movable<T> {
        Movable(t)
    }
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.0
    }
    pub fn into_inner(self) -> T {
        self.0
    }
}

thread_local! {
    /// The yielder of the coroutine this thread is running, and its type.
    static CURRENT: Cell<Option<(*const (), TypeId)>> = const { Cell::new(None) };
}

/// The coroutine owning `y` runs on this thread from now until it suspends (call it again
/// after each suspend returns: it may have been resumed on another thread).
#[inline(never)]
pub fn enter<I: 'static, Y: 'static>(y: &Yielder<I, Y>) {
    let p = y as *const Yielder<I, Y> as *const ();
    CURRENT.with(|c| c.set(Some((p, TypeId::of::<Yielder<I, Y>>()))));
}

/// No coroutine runs on this thread (its resume returned).
#[inline(never)]
pub fn leave() {
    CURRENT.with(|c| c.set(None));
}

/// Whether this thread is running a coroutine whose yielder is a `Yielder<I, Y>`.
#[inline(never)]
pub fn inside<I: 'static, Y: 'static>() -> bool {
    CURRENT.with(|c| c.get().is_some_and(|(_, t)| t == TypeId::of::<Yielder<I, Y>>()))
}

/// Suspends the coroutine this thread runs with `val` and returns what it is resumed with;
/// `None` (and `val` back) on a thread that runs none of that type.
#[inline(never)]
pub fn suspend<I: 'static, Y: 'static>(val: Y) -> Result<I, Y> {
    let Some((p, t)) = CURRENT.with(|c| c.get()) else {
        return Err(val);
    };
    if t != TypeId::of::<Yielder<I, Y>>() {
        return Err(val);
    }
    // SAFETY: `p` was set by `enter` from a live `&Yielder<I, Y>` (the type checked above) of
    // the coroutine running on this thread now: a yielder lives on its coroutine's stack for
    // the coroutine's whole life, and `leave` clears it when the coroutine stops running here.
    let y = unsafe { &*(p as *const Yielder<I, Y>) };
    let got = y.suspend(val);
    enter(y);
    Ok(got)
}

/// A coroutine stack of `size` usable bytes above a guard page.
pub fn stack(size: usize) -> io::Result<DefaultStack> {
    DefaultStack::new(size)
}

/// The page size stacks are counted in.
const PAGE: usize = 4096;

/// Where a stack's usable pages lie: from `limit` (above its guard page) up to `base`.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    limit: usize,
    base: usize,
}

/// `stack`'s usable pages.
pub fn bounds(stack: &DefaultStack) -> Bounds {
    Bounds {
        limit: stack.limit().get() + PAGE,
        base: stack.base().get(),
    }
}

/// How deep a stack has been used: from its base down to its lowest page in memory (pages
/// given back by [`release_below_here`] or [`release`] are not counted), in bytes.
pub fn touched(b: Bounds) -> usize {
    let mut resident = vec![0u8; (b.base - b.limit) / PAGE];
    // SAFETY: [limit, base) is a stack's own mapping above its guard page, page-aligned;
    // mincore writes one byte per page into `resident`, which has one per page.
    let r = unsafe { libc::mincore(b.limit as *mut libc::c_void, b.base - b.limit, resident.as_mut_ptr()) };
    super::count();
    if r != 0 {
        return 0;
    }
    match resident.iter().position(|p| p & 1 == 1) {
        Some(lowest) => b.base - (b.limit + lowest * PAGE),
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
    let top = sp.saturating_sub(IN_USE_BELOW) / PAGE * PAGE;
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

    /// Only the coroutine this thread runs can be suspended, and only with its own types.
    #[test]
    fn suspend_reaches_the_running_coroutine_only() {
        assert!(suspend::<u8, u16>(5).is_err(), "no coroutine runs here");
        let mut co: Coroutine<u8, u16, u8, DefaultStack> = Coroutine::new(|y, first| {
            enter(y);
            assert!(inside::<u8, u16>() && !inside::<u8, u32>());
            assert!(suspend::<u8, u32>(1).is_err(), "another type is refused");
            let back = suspend::<u8, u16>(first as u16 * 10).unwrap_or(0);
            leave();
            back + 1
        });
        assert!(matches!(co.resume(4), CoroutineResult::Yield(40)));
        assert!(matches!(co.resume(9), CoroutineResult::Return(10)));
    }
}
