//! When a run's window may start: the engine threads' connecting phases, joined (and, for a
//! part of a run split over processes, its parent's word that every part has connected).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// When the run's window may start: once every engine thread has seen the first attempt of
/// each of its connections end (up, or failed), or the connect timeout pass. The last thread
/// to get there sets `t0`; each thread's warm-up, window and schedule start from it. A gated
/// start (`--start-gate`: a part of a run split over processes) only says it has connected,
/// and `t0` is set when its parent opens it ([`Start::open`]), once every part has connected:
/// else each part's window would start when its own connecting ended, seconds apart at a
/// million connections, and the merged window would hold parts still connecting.
#[derive(Debug)]
pub struct Start {
    left: AtomicUsize,
    gated: bool,
    connected: AtomicBool,
    t0: OnceLock<Instant>,
}

impl Start {
    pub fn new(threads: usize, gated: bool) -> Start {
        Start {
            left: AtomicUsize::new(threads),
            gated,
            connected: AtomicBool::new(false),
            t0: OnceLock::new(),
        }
    }

    /// Every thread's connecting is over (a gated start waits for [`Start::open`]).
    pub fn connected(&self) -> bool {
        self.connected.load(Ordering::Acquire)
    }

    /// The window may start: the warm-up runs from `now` (a gated start's parent said so).
    pub fn open(&self, now: Instant) {
        let _ = self.t0.set(now);
    }

    /// When connecting ended, once it has.
    pub fn t0(&self) -> Option<Instant> {
        self.t0.get().copied()
    }

    /// One thread's connecting is over (or it could not start).
    pub(in crate::load) fn thread_done(&self, now: Instant) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.connected.store(true, Ordering::Release);
            if !self.gated {
                let _ = self.t0.set(now);
            }
        }
    }
}
