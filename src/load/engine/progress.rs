//! The progress word each engine thread stores once per loop, for the progress line.

use std::sync::atomic::AtomicU64;

/// A progress word per thread, padded to its own cache lines.
#[repr(align(128))]
#[derive(Default)]
pub struct Progress {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
    /// Event streams open now, and events received so far.
    pub streams: AtomicU64,
    pub events: AtomicU64,
}
