//! The progress words each engine thread stores once per loop, for the progress line, and
//! with `--metrics` what a scrape reads of it (see `live`), stored at most every
//! [`PUBLISH`].

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use crate::load::ERROR_CLASSES;
use crate::metrics::SLOTS;

/// How often a thread stores its live figures (`--metrics`).
pub const PUBLISH: Duration = Duration::from_millis(250);

/// A thread's progress words, padded to their own cache lines.
#[repr(align(128))]
pub struct Progress {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
    /// Event streams open now, and events received so far.
    pub streams: AtomicU64,
    pub events: AtomicU64,
    /// `--metrics`, stored together every [`PUBLISH`] (a scrape reads them one by one: a store
    /// of the same moment may be half in it; each only grows): requests
    /// completed and sent in the window, connections open, errors by class (in
    /// [`ERROR_CLASSES`]' order), and the duration histogram's buckets and sum (ns).
    pub done: AtomicU64,
    pub sent: AtomicU64,
    pub open: AtomicU64,
    pub by_class: [AtomicU64; ERROR_CLASSES.len()],
    pub counts: [AtomicU64; SLOTS],
    pub sum_ns: AtomicU64,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress {
            requests: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            streams: AtomicU64::new(0),
            events: AtomicU64::new(0),
            done: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            open: AtomicU64::new(0),
            by_class: std::array::from_fn(|_| AtomicU64::new(0)),
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_ns: AtomicU64::new(0),
        }
    }
}

/// Stores a thread's live figures (`--metrics`) but its histogram: its tally's requests,
/// sends and errors, and the connections open now.
pub(super) fn publish(p: &Progress, tally: &crate::load::Tally, open: u64) {
    use std::sync::atomic::Ordering::Relaxed;
    p.done.store(tally.requests, Relaxed);
    p.sent.store(tally.sent, Relaxed);
    p.open.store(open, Relaxed);
    for (w, &n) in p.by_class.iter().zip(&tally.errors) {
        w.store(n, Relaxed);
    }
}
