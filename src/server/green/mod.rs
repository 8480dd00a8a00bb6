//! Green threads: goroutine-style M:N threads for the `green` model.
//!
//! A green thread is a stackful coroutine (`sys::green`, corosensei's stacks) running code
//! written in blocking style. Carriers (OS threads, Go's M) run them while they hold a
//! processor (Go's P: `--workers` of them, each with a run queue others steal from); a thread
//! that would block on its socket parks at the netpoller ([`netpoll`]) and its carrier runs
//! the next. The parts:
//!
//! - [`sched`]: processors, run queues, stealing, the carriers, and a blocking call's hand-off;
//! - [`netpoll`]: the epoll instance and the deadlines of parked threads;
//! - [`held`]: the runtime and processor the running OS thread holds;
//! - [`stacks`]: the stacks, kept for the next threads;
//! - [`parking`]: the connection's waits ([`super::waits::Waits`]) as parks.
//!
//! **Where a thread may move.** Only while parked at the netpoller, which it does between
//! steps of its connection (a read, a write of its output, a wait for its next event-stream
//! piece) and in the accept loop: there its stack holds nothing of the session or the hook, no
//! lock guard and no thread-local's reference, and everything on it is `Send` (checked below
//! and in `models/green.rs`).
//! Inside a step, a wait is a blocking call instead (the hook writing replies before a
//! request's work: `Waits::stepping`). A thread preempted in its work (`perform`'s slices, Go's
//! 10 ms) resumes on the carrier it ran on; one in a blocking call (`sleep:` work) keeps its
//! carrier, which hands its processor to another carrier for the call and takes one back after
//! (Go's entersyscall / exitsyscall). `sys::green::Movable` states it where `Send` is asserted.
//! Every thread-local on a green thread's path is read in a function never inlined, so no
//! caller keeps a thread-local's address across a park (`tests/structure.rs`).
//!
//! **Preemption is cooperative.** muxlab's `cpu:` work yields every slice; other code is not
//! preempted (a signal cannot switch stacks safely in Rust), so a thread that computes without
//! yielding holds its processor until it parks, as Go's did before 1.14.
//!
//! **Stacks.** Fixed, [`STACK`] bytes above a guard page: an overflow that reaches the guard
//! faults and the process dies of SIGSEGV (a single frame larger than the guard page could
//! step over it: muxlab's own frames are far smaller). Two mappings each, so
//! `vm.max_map_count` (65,530 by default) holds a server to about 32,000 threads.

mod held;
mod netpoll;
mod parking;
mod sched;
mod stacks;

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

pub use parking::Parking;
pub use sched::Runtime;

use crate::sys;

/// Usable bytes of a green thread's stack: the deepest path measured, with room to spare. That
/// path is HTTP/2 over TLS with `cpu:` work through the per-request hook (`green_stack_peak` in
/// the stats line reports a run's mark; `tests/green.rs` holds it to a third of this).
pub const STACK: usize = if cfg!(debug_assertions) { 256 * 1024 } else { 128 * 1024 };

/// Go's time slice: how long `cpu:` work runs before it lets the others in line go first.
pub const DEFAULT_SLICE: Duration = Duration::from_millis(10);

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
    id: u64,
    co: sys::green::Movable<Body>,
    resume: Resume,
}

type Body = sys::green::Coroutine<Resume, Suspend, (), sys::green::DefaultStack>;

/// What a green thread's stack holds while it is parked, checked `Send` here: its socket, its
/// worker handle, its waits, its read buffer (its `Connection` is checked by `models/green.rs`,
/// which starts it).
const _: () = {
    fn send<T: Send>() {}
    let _ = send::<std::os::fd::OwnedFd>;
    let _ = send::<crate::server::ctx::Worker<'static>>;
    let _ = send::<Parking>;
    let _ = send::<sys::mem::Pages>;
};

/// Parks the calling green thread until `fd` has `events` or `until` passes; `None` outside
/// a green thread.
#[inline(never)]
pub(crate) fn park(fd: RawFd, events: u32, until: Option<Instant>) -> Option<Resume> {
    sys::green::suspend::<Resume, Suspend>(Suspend::Park { fd, events, until }).ok()
}

/// Does a drawn request's work: on a green thread, `cpu` in slices (the threads in line go
/// first between them, and it resumes on the same carrier) and `wait` as a blocking call its
/// carrier hands its processor off for; elsewhere as any thread does. Returns what was drawn.
pub(crate) fn perform(cpu: Duration, wait: Duration) -> Duration {
    let Some(slice) = sched::slice() else {
        return crate::server::work::perform(cpu, wait);
    };
    let mut left = cpu;
    while !left.is_zero() {
        let part = slice.min(left);
        crate::server::work::spin(part);
        left -= part;
        if !left.is_zero() {
            let _ = sys::green::suspend::<Resume, Suspend>(Suspend::Slice);
        }
    }
    if !wait.is_zero() {
        sched::blocking(|| std::thread::sleep(wait));
    }
    cpu + wait
}
