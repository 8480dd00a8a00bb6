//! The deadline heap of an event loop: when its connections' later responses have their next
//! piece due ([`crate::proto::Session::due`]). The loop's wait times out at the earliest
//! (never later than a tick), so a thousand streams cost one wake-up per due time, not a poll
//! of each (the loop's idle sweep, once a tick, visits every connection as it always did).
//!
//! A connection keeps the due time it is armed for ([`Armed`]); an entry that no longer
//! matches (the connection closed, its number was reused, or it was armed again for an earlier
//! time) is dropped when it comes up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// Due times by connection token, earliest first.
#[derive(Debug, Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<(Instant, u64)>>,
}

/// The due time a connection has an entry in its loop's [`Timers`] for.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Armed(Option<Instant>);

impl Armed {
    /// `due` is when the connection next needs a wake-up: `Some(due)` when that needs an entry
    /// (it has none for that time yet).
    pub fn arm(&mut self, due: Option<Instant>) -> Option<Instant> {
        let due = due?;
        (self.0 != Some(due)).then(|| {
            self.0 = Some(due);
            due
        })
    }

    /// Its entry is the one for `at`.
    pub fn is(&self, at: Instant) -> bool {
        self.0 == Some(at)
    }

    /// A wake-up that carries no time came (an io_uring timeout's completion): the entry is
    /// spent if its time has come by `now`.
    pub fn passed(&mut self, now: Instant) {
        if self.0.is_some_and(|at| at <= now) {
            self.0 = None;
        }
    }

    /// The entry for `at` came up: `true` when it is this connection's current one (it is
    /// spent).
    pub fn fired(&mut self, at: Instant) -> bool {
        let mine = self.0 == Some(at);
        if mine {
            self.0 = None;
        }
        mine
    }
}

impl Timers {
    pub fn new() -> Timers {
        Timers::default()
    }

    /// Wakes the loop for `token` at `at`.
    pub fn arm(&mut self, at: Instant, token: u64) {
        self.heap.push(Reverse((at, token)));
    }

    /// The earliest entry's time.
    pub fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// Entries held (live and stale).
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Keeps the entries `keep` says are live (the others: connections gone or armed again).
    pub fn retain(&mut self, mut keep: impl FnMut(Instant, u64) -> bool) {
        self.heap.retain(|Reverse((at, token))| keep(*at, *token));
    }

    /// How long the loop may wait at `now`: until the earliest entry, at most `tick`.
    pub fn timeout(&self, now: Instant, tick: Duration) -> Duration {
        match self.heap.peek() {
            Some(Reverse((at, _))) => at.saturating_duration_since(now).min(tick),
            None => tick,
        }
    }

    /// Takes the entries due at `now`, earliest first, into `out` (their time and token).
    pub fn take_due(&mut self, now: Instant, out: &mut Vec<(Instant, u64)>) {
        while let Some(Reverse((at, token))) = self.heap.peek().copied() {
            if at > now {
                break;
            }
            self.heap.pop();
            out.push((at, token));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_ends_at_the_earliest_due_time_and_stale_entries_do_not_fire() {
        let (t0, ms) = (Instant::now(), Duration::from_millis);
        let mut timers = Timers::new();
        assert_eq!(timers.timeout(t0, ms(100)), ms(100), "nothing due: a tick");
        let (mut a, mut b) = (Armed::default(), Armed::default());
        timers.arm(a.arm(Some(t0 + ms(30))).unwrap(), 1);
        assert_eq!(a.arm(Some(t0 + ms(30))), None, "armed for that time already");
        // Armed again, earlier: a new entry; the old one is stale.
        timers.arm(a.arm(Some(t0 + ms(10))).unwrap(), 1);
        timers.arm(b.arm(Some(t0 + ms(20))).unwrap(), 2);
        assert_eq!(timers.timeout(t0, ms(100)), ms(10));
        assert_eq!(timers.timeout(t0 + ms(50), ms(100)), Duration::ZERO, "overdue: no wait");
        let mut due = Vec::new();
        timers.take_due(t0 + ms(25), &mut due);
        assert_eq!(due, vec![(t0 + ms(10), 1), (t0 + ms(20), 2)]);
        assert!(a.fired(t0 + ms(10)) && b.fired(t0 + ms(20)));
        timers.take_due(t0 + ms(40), &mut due);
        assert_eq!(due[2], (t0 + ms(30), 1));
        assert!(!a.fired(t0 + ms(30)), "the stale entry of connection 1 does nothing");
        assert_eq!(timers.timeout(t0, ms(100)), ms(100), "every entry taken");
        timers.arm(t0 + ms(5), 1);
        timers.arm(t0 + ms(6), 2);
        timers.retain(|_, token| token == 2);
        assert_eq!(
            (timers.len(), timers.next()),
            (1, Some(t0 + ms(6))),
            "stale entries dropped"
        );
        assert_eq!(a.arm(None), None, "nothing due: no entry");
    }
}
