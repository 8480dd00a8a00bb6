//! A green thread: its coroutine and id, what it says when it suspends (a park at the
//! netpoller, or a used slice), what it is resumed with, and the park itself.

use std::os::fd::RawFd;
use std::time::Instant;

use crate::sys;

/// What a green thread says when it suspends.
pub(crate) enum Suspend {
    /// Wait at the netpoller until `fd` has one of `events` (an error or a hang-up always
    /// counts), or `until` passes.
    Park {
        fd: RawFd,
        events: u32,
        until: Option<Instant>,
    },
    /// Its `cpu:` work used a slice: the threads in line go first.
    Slice,
}

/// What a green thread is resumed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resume {
    /// Its first run, or after a slice.
    Go,
    /// Its descriptor is ready (or failed).
    Ready,
    /// Its deadline passed first.
    TimedOut,
}

/// A green thread: its id (its netpoller token) and its coroutine.
pub(crate) struct G {
    pub(super) id: u64,
    pub(super) co: sys::green::Movable<Body>,
    pub(super) resume: Resume,
}

pub(super) type Body = sys::green::Coroutine<Resume, Suspend, (), sys::green::DefaultStack>;

/// Parks the calling green thread until `fd` has `events` or `until` passes; `None` outside
/// a green thread.
#[inline(never)]
pub(crate) fn park(fd: RawFd, events: u32, until: Option<Instant>) -> Option<Resume> {
    sys::green::suspend::<Resume, Suspend>(Suspend::Park { fd, events, until }).ok()
}
