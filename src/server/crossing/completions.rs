//! Work done elsewhere, posted back to the event loop that owns its connection: a queue of
//! `(connection token, ticket)` and the eventfd that wakes the loop for it. Any thread posts
//! ([`Completions::post`]); the loop watches it ([`crate::server::drivers::evloop::EventLoop::take_completions`])
//! and hands each to its connection ([`crate::server::connection::Connection::complete`]). offload's
//! pool posts here; a design that hops requests between threads would too.

use std::io;

use crate::sync::lock;
use crate::sys;

/// Completions waiting for one loop.
pub struct Completions {
    done: std::sync::Mutex<Vec<(u64, u64)>>,
    wake: sys::eventfd::EventFd,
}

impl Completions {
    pub fn new() -> io::Result<Completions> {
        Ok(Completions {
            done: std::sync::Mutex::new(Vec::new()),
            wake: sys::eventfd::EventFd::new()?,
        })
    }

    /// The work of `ticket` for connection `conn` is done: queued, and the loop woken.
    pub fn post(&self, conn: u64, ticket: u64) {
        lock(&self.done).push((conn, ticket));
        let _ = self.wake.notify();
    }

    /// The descriptor the loop watches.
    pub fn wake_fd(&self) -> &sys::eventfd::EventFd {
        &self.wake
    }

    /// What was posted since the last take, into `into` (emptied first), the wake-up drained.
    pub fn take(&self, into: &mut Vec<(u64, u64)>) {
        let _ = self.wake.drain();
        into.clear();
        std::mem::swap(into, &mut *lock(&self.done));
    }
}
