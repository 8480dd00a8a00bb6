//! The connect phase of an engine thread: first connects started in batches between turns of
//! the loop, new connects spaced by `--connect-rate`, source addresses taken in turn, and the
//! gate requests wait behind until connecting is over (and, with `--connect-first`, until
//! every connection is up).

use std::net::Ipv4Addr;
use std::ops::Range;
use std::time::{Duration, Instant};

/// Connects a thread starts at once before it serves events again: thousands of connects
/// (each can take a while in the kernel's port search) never starve the sockets already up.
const OPEN_BATCH: usize = 64;

/// One thread's connect phase.
#[derive(Debug)]
pub(super) struct Ramp {
    /// Connection slots of the thread.
    slots: usize,
    /// Slots whose first connect has been started.
    opened: usize,
    /// Slots whose first connect attempt has not ended.
    unresolved: usize,
    /// This thread has said that its connecting is over.
    told: bool,
    /// `--connect-rate`: the next free connect time and the spacing.
    next: Instant,
    interval: Option<Duration>,
    /// The next source address to bind (`--bind`), by turn.
    source: usize,
    /// Requests may be sent.
    sending: bool,
    /// Connections up while sending was held.
    up_early: usize,
}

impl Ramp {
    /// `slots` connections from `t0`, at most `rate` new ones per second, the first taking
    /// source `first_source`.
    pub(super) fn new(slots: usize, rate: Option<f64>, t0: Instant, first_source: usize) -> Ramp {
        Ramp {
            slots,
            opened: 0,
            unresolved: slots,
            told: false,
            next: t0,
            interval: rate.map(|r| Duration::from_secs_f64(1.0 / r)),
            source: first_source,
            sending: false,
            up_early: 0,
        }
    }

    /// Every slot's first connect has been started.
    pub(super) fn all_opened(&self) -> bool {
        self.opened >= self.slots
    }

    /// The slots whose first connect starts now.
    pub(super) fn next_batch(&mut self) -> Range<usize> {
        let from = self.opened;
        self.opened = (from + OPEN_BATCH).min(self.slots);
        from..self.opened
    }

    /// A slot's first attempt ended (up, or failed).
    pub(super) fn first_try_over(&mut self) {
        self.unresolved -= 1;
    }

    /// Once, when connecting is over for this thread: every slot's first attempt ended, or all
    /// were started and `timeout` has passed since `t0`. Returns the slots still connecting.
    pub(super) fn connecting_over(&mut self, now: Instant, t0: Instant, timeout: Duration) -> Option<usize> {
        if self.told || !self.all_opened() {
            return None;
        }
        if self.unresolved == 0 || now >= t0 + timeout {
            self.told = true;
            return Some(self.unresolved);
        }
        None
    }

    /// The thread is leaving before its connecting was over (its share was done at once, or it
    /// stopped): `true` if it had not said so yet, which it must (the others wait for it).
    pub(super) fn leaving(&mut self) -> bool {
        !std::mem::replace(&mut self.told, true)
    }

    /// `--connect-rate`: when a slot may connect. `None`: now (a slot that `booked` its time
    /// is woken then and connects at once); else the time it books.
    pub(super) fn when(&mut self, now: Instant, booked: bool) -> Option<Instant> {
        let iv = self.interval?;
        if booked {
            return None;
        }
        if now < self.next {
            let at = self.next;
            self.next += iv;
            return Some(at);
        }
        self.next = now.max(self.next) + iv;
        None
    }

    /// The source address the next connect binds, taking turns over `sources`.
    pub(super) fn source(&mut self, sources: &[Ipv4Addr]) -> Ipv4Addr {
        let s = sources[self.source % sources.len()];
        self.source += 1;
        s
    }

    pub(super) fn sending(&self) -> bool {
        self.sending
    }

    /// Requests may go out from now.
    pub(super) fn open_gate(&mut self) {
        self.sending = true;
    }

    /// A connection came up while requests were held.
    pub(super) fn up_early(&mut self) {
        self.up_early += 1;
    }

    /// Whether the gate may open: connecting is over (`known`) and, with `connect_first`,
    /// every connection is up or `timeout` has passed since `t0`.
    pub(super) fn may_open(
        &self,
        known: bool,
        connect_first: bool,
        now: Instant,
        t0: Instant,
        timeout: Duration,
    ) -> bool {
        !self.sending && known && (!connect_first || self.up_early >= self.slots || now >= t0 + timeout)
    }
}
