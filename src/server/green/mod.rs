//! Green threads: goroutine-style M:N threads for the `green` model.
//!
//! A green thread is a stackful coroutine (`sys::green`, corosensei's stacks) running code
//! written in blocking style. Carriers (OS threads, Go's M) run them while they hold a
//! processor (Go's P: `--workers` of them, each with a run queue others steal from); a thread
//! that would block on its socket parks at the netpoller ([`netpoll`]) and its carrier runs
//! the next. The parts:
//!
//! - [`thread`]: a green thread, what it says when it suspends and what it resumes with;
//! - [`sched`]: processors, run queues, stealing, the carriers, the runtime and processor the
//!   running OS thread holds, and a blocking call's hand-off;
//! - [`netpoll`]: the epoll instance and the deadlines of parked threads;
//! - [`stacks`]: the stacks, kept for the next threads;
//! - [`parking`]: the connection's waits ([`super::waits::Waits`]) as parks;
//! - [`start`]: the runtime's entry points, each thread started with its `Parking`;
//! - [`work`]: a request's work on a green thread.
//!
//! **Where a thread may move.** Only while parked at the netpoller, which it does between
//! steps of its connection (a read, a write of its output, a wait for its next event-stream
//! piece) and in the accept loop: there its stack holds nothing of the session or the hook, no
//! lock guard and no thread-local's reference, and everything on it is `Send` (checked below
//! and in `models/green.rs`).
//! Inside a step nothing waits (the hook's early send writes what the socket takes now and
//! leaves the rest to the connection's own send). A thread preempted in its work (`perform`'s slices, Go's
//! 10 ms) resumes on the carrier it ran on; one in a blocking call (`sleep:` work) keeps its
//! carrier, which hands its processor to another carrier for the call and takes one back after
//! (Go's entersyscall / exitsyscall). `sys::green::Movable` states it where `Send` is asserted.
//! Every thread-local on a green thread's path is read in a function never inlined, so no
//! caller keeps a thread-local's address across a park (`tests/structure/`).
//!
//! **Preemption is cooperative.** muxlab's `cpu:` work yields every slice; other code is not
//! preempted (a signal cannot switch stacks safely in Rust), so a thread that computes without
//! yielding holds its processor until it parks, as Go's did before 1.14.
//!
//! **Stacks.** Fixed, [`STACK`] bytes above a guard page: an overflow that reaches the guard
//! faults and the process dies of SIGSEGV (a single frame larger than the guard page could
//! step over it: muxlab's own frames are far smaller). Two mappings each, so
//! `vm.max_map_count` (65,530 by default) holds a server to about 32,000 threads.

mod netpoll;
mod parking;
mod sched;
mod stacks;
mod start;
mod thread;
mod work;

use std::time::Duration;

pub use parking::Parking;
pub use stacks::STACK;
pub use start::{run, spawn};
pub(crate) use work::perform;

use crate::sys;

/// Go's time slice: how long `cpu:` work runs before it lets the others in line go first.
pub const DEFAULT_SLICE: Duration = Duration::from_millis(10);

/// What a green thread's stack holds while it is parked, checked `Send` here: its socket, its
/// worker handle, its waits, its read buffer (its `Connection` is checked by `models/green.rs`,
/// which starts it).
const _: () = {
    fn send<T: Send>() {}
    let _ = send::<std::os::fd::OwnedFd>;
    let _ = send::<super::Worker<'static>>;
    let _ = send::<Parking>;
    let _ = send::<sys::mem::Pages>;
};
