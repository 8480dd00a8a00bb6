//! Locks that outlive a panic. A thread that panicked while holding a lock leaves it poisoned;
//! what these locks guard (a queue of connections, a count of arrivals, a pipe's writer) is
//! consistent between operations, so the others go on with it rather than fail in turn.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Locks `m`, poisoned or not.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits on `cv` for at most `limit`, poisoned or not; returns the guard again.
pub fn wait_timeout<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>, limit: Duration) -> MutexGuard<'a, T> {
    cv.wait_timeout(guard, limit).unwrap_or_else(|e| e.into_inner()).0
}
