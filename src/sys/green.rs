//! Stackful coroutines' unchecked parts, for `server::green`: a coroutine that may move to
//! another OS thread ([`Movable`]), and the yielder of the coroutine this thread runs
//! ([`enter`], [`suspend`]). The switching is corosensei's; the stacks are in [`super::stack`].

use std::any::TypeId;
use std::cell::Cell;

pub use corosensei::stack::DefaultStack;
pub use corosensei::{Coroutine, CoroutineResult, Yielder};

/// A coroutine (or anything holding one) handed from one OS thread to another.
///
/// The invariant that makes this sound, kept by `server::green`'s scheduler: a coroutine is
/// moved only while it is parked at the netpoller, which it does between steps of its
/// connection (never inside the session or the hook: a wait there is a blocking call on its
/// own thread), where its stack holds no reference into a thread-local and no guard of a
/// lock. A coroutine suspended anywhere else (its `cpu:` work's slice yield) resumes on the
/// thread it ran on; one in a blocking call stays on its thread throughout. Everything its
/// stack owns is `Send` (an `OwnedFd`, a `Connection`, a `Worker` handle, heap buffers:
/// `server::green` checks them at compile time). Crate-private: only `server::green` wraps
/// its coroutines in it.
pub(crate) struct Movable<T>(T);

// SAFETY: see the invariant above: the value crosses threads only at a netpoller park, when
// the coroutine's live data is `Send` and no thread-local of the thread it left is referenced.
unsafe impl<T> Send for Movable<T> {}

impl<T> Movable<T> {
    pub(crate) fn new(t: T) -> Movable<T> {
        Movable(t)
    }
    pub(crate) fn get_mut(&mut self) -> &mut T {
        &mut self.0
    }
    pub(crate) fn into_inner(self) -> T {
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

#[cfg(test)]
mod tests {
    use super::*;

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
