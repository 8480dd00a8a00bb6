//! "Wake me at T": the one kind of timer, below both the server and the load generator.
//!
//! A heap of due times by key ([`Timers`], earliest first; an entry no earlier than the last
//! one in its queue joins that queue in time order instead, which costs no sifting: many
//! timeouts are "now plus a constant") and, for each key, the time it
//! is armed for ([`Armed`]). Deletion is lazy: arming again for another time, or forgetting a
//! key, leaves its old entry in the heap, and an entry that no longer matches its key's
//! [`Armed`] is dropped when it comes up ([`Armed::fired`] says `false`).
//!
//! Every wait maps onto it by [`until`]: an event loop's `epoll_wait` timeout
//! ([`Timers::timeout`]), an io_uring timeout, a tokio sleep and a `ppoll` bound are each the
//! time to a due time, capped by a tick where the waiter must also look around. (A server's
//! connection keeps the time its wiring's timer is armed for itself: `server::connection`.)

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::num::NonZeroU64;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// An instant in 8 bytes (an `Instant` takes 16): nanoseconds from the process's epoch, the
/// first instant a stamp was taken of, less an hour. What a connection and a timer entry keep:
/// a million connections keep millions. `Option<Stamp>` is 8 bytes too. An instant before the
/// epoch is kept as the epoch; every later one comes back exactly ([`Stamp::instant`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp(NonZeroU64);

/// The epoch stamps count from.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(|| {
        let now = Instant::now();
        now.checked_sub(Duration::from_secs(3600)).unwrap_or(now)
    })
}

impl Stamp {
    /// The epoch itself (the earliest stamp).
    pub const EPOCH: Stamp = Stamp(NonZeroU64::MIN);

    /// `t`, kept in 8 bytes.
    #[inline]
    pub fn of(t: Instant) -> Stamp {
        let ns = t
            .saturating_duration_since(epoch())
            .as_nanos()
            .min(u64::MAX as u128 - 1) as u64;
        Stamp(NonZeroU64::MIN.saturating_add(ns))
    }

    /// The instant kept.
    #[inline]
    pub fn instant(self) -> Instant {
        epoch() + Duration::from_nanos(self.0.get() - 1)
    }
}

/// Due times by key, earliest first (a stale entry stays until it comes up or is
/// [`Timers::retain`]ed away).
#[derive(Debug)]
pub struct Timers<K> {
    heap: BinaryHeap<Reverse<(Stamp, K)>>,
    /// Entries armed in time order, earliest at the front.
    queue: VecDeque<(Stamp, K)>,
}

impl<K: Ord> Default for Timers<K> {
    fn default() -> Self {
        Timers {
            heap: BinaryHeap::new(),
            queue: VecDeque::new(),
        }
    }
}

/// The due time a key has its live entry in [`Timers`] for, if any.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Armed(Option<Instant>);

impl Armed {
    /// `due` is when its owner next needs a wake-up: `Some(due)` when that needs a new entry
    /// (it has none for that time yet); the entry for any other time is stale from now on.
    pub fn arm(&mut self, due: Option<Instant>) -> Option<Instant> {
        let due = due?;
        (self.0 != Some(due)).then(|| {
            self.0 = Some(due);
            due
        })
    }

    /// It has a live entry.
    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// The entry for `at` came up: `true` when it is the live one (it is spent).
    pub fn fired(&mut self, at: Instant) -> bool {
        let mine = self.0 == Some(at);
        if mine {
            self.0 = None;
        }
        mine
    }
}

/// How long from `now` until `at` (zero once it has come).
pub fn until(at: Instant, now: Instant) -> Duration {
    at.saturating_duration_since(now)
}

/// How long a waiter that must also look around every `cap` may wait at `now` for `due`
/// (`cap` when nothing is due): a sleep's, a `ppoll`'s, an `epoll_wait`'s bound.
pub fn wait(due: Option<Instant>, now: Instant, cap: Duration) -> Duration {
    due.map_or(cap, |at| until(at, now).min(cap))
}

impl<K: Ord + Copy> Timers<K> {
    /// Arms `armed` (the owner of `key`) for `at`, with an entry only if it has none for
    /// that time.
    pub fn set(&mut self, armed: &mut Armed, at: Instant, key: K) {
        if let Some(at) = armed.arm(Some(at)) {
            self.arm(at, key);
        }
    }

    /// Keeps the entries `keep` says are live (the others: owners gone or armed again).
    pub fn retain(&mut self, mut keep: impl FnMut(Instant, K) -> bool) {
        self.heap.retain(|Reverse((at, key))| keep(at.instant(), *key));
        self.queue.retain(|(at, key)| keep(at.instant(), *key));
    }
}

impl<K: Ord> Timers<K> {
    pub fn new() -> Timers<K> {
        Timers::default()
    }

    /// Room for `n` entries before either part grows (an event loop's, so that a warm loop
    /// allocates nothing for its timers).
    pub fn with_capacity(n: usize) -> Timers<K> {
        Timers {
            heap: BinaryHeap::with_capacity(n),
            queue: VecDeque::with_capacity(n),
        }
    }

    /// Wakes `key` at `at` (its [`Armed`] says whether this entry is still live when it
    /// comes up).
    pub fn arm(&mut self, at: Instant, key: K) {
        let at = Stamp::of(at);
        match self.queue.back() {
            Some((last, _)) if at < *last => self.heap.push(Reverse((at, key))),
            _ => self.queue.push_back((at, key)),
        }
    }

    /// Keeps, once each, the entries `keep` says are live: the heap made again (the entries
    /// of keys that are not copied, a keyspace's; an entry armed twice for one time counts once).
    pub fn rebuild(&mut self, mut keep: impl FnMut(Instant, &K) -> bool) {
        let mut all = std::mem::take(&mut self.heap).into_vec();
        all.extend(self.queue.drain(..).map(Reverse));
        all.retain(|Reverse((at, key))| keep(at.instant(), key));
        all.sort_unstable();
        all.dedup();
        self.heap = BinaryHeap::from(all);
    }

    /// The earliest entry's time.
    pub fn next(&self) -> Option<Instant> {
        let heap = self.heap.peek().map(|Reverse((at, _))| *at);
        let queue = self.queue.front().map(|(at, _)| *at);
        match (heap, queue) {
            (Some(h), Some(q)) => Some(h.min(q)),
            (h, q) => h.or(q),
        }
        .map(Stamp::instant)
    }

    /// Entries held (live and stale).
    pub fn len(&self) -> usize {
        self.heap.len() + self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.queue.is_empty()
    }

    /// How long a waiter may wait at `now`: until the earliest entry, at most `cap`.
    pub fn timeout(&self, now: Instant, cap: Duration) -> Duration {
        wait(self.next(), now, cap)
    }

    /// The earliest entry, if it is due at `now` (taken out).
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, K)> {
        let now = Stamp::of(now);
        let heap = self.heap.peek().map(|Reverse((at, _))| *at);
        let queue = self.queue.front().map(|(at, _)| *at);
        match (heap, queue) {
            (Some(h), q) if h <= now && q.is_none_or(|q| h <= q) => self.heap.pop().map(|Reverse(due)| due),
            (_, Some(q)) if q <= now => self.queue.pop_front(),
            _ => None,
        }
        .map(|(at, key)| (at.instant(), key))
    }

    /// Takes the entries due at `now`, earliest first, into `out` (their time and key).
    pub fn take_due(&mut self, now: Instant, out: &mut Vec<(Instant, K)>) {
        while let Some(due) = self.pop_due(now) {
            out.push(due);
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
        timers.set(&mut a, t0 + ms(30), 1u64);
        timers.set(&mut a, t0 + ms(30), 1);
        assert_eq!(timers.len(), 1, "armed for that time already: no second entry");
        // Armed again, earlier: a new entry; the old one is stale.
        timers.set(&mut a, t0 + ms(10), 1);
        timers.set(&mut b, t0 + ms(20), 2);
        assert_eq!(timers.timeout(t0, ms(100)), ms(10));
        assert_eq!(timers.timeout(t0 + ms(50), ms(100)), Duration::ZERO, "overdue: no wait");
        let mut due = Vec::new();
        timers.take_due(t0 + ms(25), &mut due);
        assert_eq!(due, vec![(t0 + ms(10), 1), (t0 + ms(20), 2)]);
        assert!(a.fired(t0 + ms(10)) && b.fired(t0 + ms(20)));
        assert!(!a.is_set(), "spent");
        timers.take_due(t0 + ms(40), &mut due);
        assert_eq!(due[2], (t0 + ms(30), 1));
        assert!(!a.fired(t0 + ms(30)), "the stale entry of key 1 does nothing");
        assert_eq!(timers.timeout(t0, ms(100)), ms(100), "every entry taken");
        timers.arm(t0 + ms(5), 1);
        timers.arm(t0 + ms(6), 2);
        timers.retain(|_, key| key == 2);
        assert_eq!(
            (timers.len(), timers.next()),
            (1, Some(t0 + ms(6))),
            "stale entries dropped"
        );
        assert_eq!(timers.pop_due(t0 + ms(5)), None, "not due yet");
        assert_eq!(timers.pop_due(t0 + ms(6)), Some((t0 + ms(6), 2)));
        assert_eq!(a.arm(None), None, "nothing due: no entry");
    }

    #[test]
    fn entries_armed_in_or_out_of_time_order_come_up_earliest_first() {
        let (t0, ms) = (Instant::now(), Duration::from_millis);
        let mut timers = Timers::new();
        // In order (the queue), then earlier ones (the heap), then in order again.
        for (at, key) in [(5, 1u64), (10, 2), (3, 3), (10, 4), (20, 5), (7, 6), (25, 7)] {
            timers.arm(t0 + ms(at), key);
        }
        assert_eq!(timers.len(), 7);
        assert_eq!(timers.next(), Some(t0 + ms(3)));
        assert_eq!(timers.timeout(t0, ms(100)), ms(3));
        let mut out = Vec::new();
        timers.take_due(t0 + ms(10), &mut out);
        let times: Vec<u64> = out.iter().map(|(at, _)| (*at - t0).as_millis() as u64).collect();
        assert_eq!(times, vec![3, 5, 7, 10, 10], "earliest first across both");
        assert_eq!(timers.next(), Some(t0 + ms(20)));
        timers.retain(|_, key| key != 5);
        assert_eq!(timers.pop_due(t0 + ms(30)), Some((t0 + ms(25), 7)));
        assert!(timers.is_empty());
    }

    #[test]
    fn every_wait_is_the_time_to_the_due_time_capped_by_the_tick() {
        let (t0, ms) = (Instant::now(), Duration::from_millis);
        assert_eq!(wait(None, t0, ms(100)), ms(100));
        assert_eq!(wait(Some(t0 + ms(30)), t0, ms(100)), ms(30));
        assert_eq!(wait(Some(t0 + ms(300)), t0, ms(100)), ms(100));
        assert_eq!(wait(Some(t0), t0 + ms(1), ms(100)), Duration::ZERO);
        assert_eq!(until(t0 + ms(300), t0), ms(300), "until is not capped");
    }
}
