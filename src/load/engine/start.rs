//! When a run's window may start: the engine threads' connecting phases, joined.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// When the run's window may start: once every engine thread has seen the first attempt of
/// each of its connections end (up, or failed), or the connect timeout pass. The last thread
/// to get there sets `t0`; each thread's warm-up, window and schedule start from it.
#[derive(Debug)]
pub struct Start {
    left: AtomicUsize,
    t0: OnceLock<Instant>,
}

impl Start {
    pub fn new(threads: usize) -> Start {
        Start {
            left: AtomicUsize::new(threads),
            t0: OnceLock::new(),
        }
    }

    /// When connecting ended, once it has.
    pub fn t0(&self) -> Option<Instant> {
        self.t0.get().copied()
    }

    /// One thread's connecting is over (or it could not start).
    pub(in crate::load) fn thread_done(&self, now: Instant) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _ = self.t0.set(now);
        }
    }
}
