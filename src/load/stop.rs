//! The stop flag: set by SIGINT / SIGTERM, read by the engine threads and the waits before a
//! run, so that Ctrl-C ends a run with a summary of what finished.

use std::sync::atomic::AtomicU64;

/// Set by SIGINT / SIGTERM: engines stop and the summary covers what finished.
pub(super) static STOP: AtomicU64 = AtomicU64::new(0);
