//! Which runtime and processor the OS thread running now holds: a carrier's, in a
//! thread-local. Read in functions never inlined, as every thread-local on a green thread's
//! path (`tests/structure.rs` holds them to it): a thread-local's address kept by an inlined
//! caller across a park could be another carrier's.

use super::sched::Runtime;

/// The runtime a carrier runs for, and the processor it holds.
pub(super) type Holding = Option<(&'static Runtime, usize)>;

thread_local! {
    /// This carrier's [`Holding`].
    static HELD: std::cell::Cell<Holding> = const { std::cell::Cell::new(None) };
}

/// What this carrier holds.
#[inline(never)]
pub(super) fn held() -> Holding {
    HELD.with(|h| h.get())
}

#[inline(never)]
pub(super) fn hold(h: Holding) {
    HELD.with(|c| c.set(h));
}
