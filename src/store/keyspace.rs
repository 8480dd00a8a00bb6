//! One keyspace's storage and its bounds: entries by key, each with its expiry time and when
//! it was last used.
//!
//! - **Expiry** is lazy on access (a key past its time is dropped when a command touches it)
//!   plus an active sweep ([`Keyspace::sweep`]) of the keys whose time has come, at most
//!   [`SWEEP`] per call: redis's active expire cycle, with the keys' due times kept in the one
//!   timer ([`crate::timer::Timers`]) instead of sampled, so a sweep finds only keys that are
//!   due.
//! - **Bounds** (`--max-keys`, `--max-memory`): before a new entry goes in, or a value grows,
//!   entries are evicted until it fits, each chosen by sampled LRU: of [`SAMPLES`] keys drawn
//!   at random the least recently used goes (redis's `allkeys-lru` with `maxmemory-samples
//!   5`). An entry costs its key, its value and [`OVERHEAD`] bytes against `--max-memory`.
//!
//! What expired and what was evicted is counted here and taken by the table's caller
//! ([`Keyspace::take_counts`]).

use std::time::Instant;

use indexmap::IndexMap;

use crate::proto::keyed::Item;
use crate::rng::Rng;
use crate::timer::Timers;

/// What one entry costs against `--max-memory` besides its key and value: the table's slot,
/// the entry's fields, the allocations' headers.
pub const OVERHEAD: usize = 64;
/// Keys drawn for each eviction.
pub const SAMPLES: usize = 5;
/// Due keys one sweep removes at most.
pub const SWEEP: usize = 200;

/// A keyspace's bounds: `None` is none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bounds {
    pub max_keys: Option<usize>,
    pub max_bytes: Option<usize>,
}

/// A stored value.
#[derive(Debug)]
pub struct Entry {
    value: Vec<u8>,
    flags: u32,
    cas: u64,
    expires: Option<Instant>,
    /// The keyspace's clock when it was last written or read.
    used: u64,
}

impl Entry {
    fn live(&self, now: Instant) -> bool {
        self.expires.is_none_or(|at| at > now)
    }

    pub fn item(&self) -> Item<'_> {
        Item {
            value: &self.value,
            flags: self.flags,
            cas: self.cas,
        }
    }

    pub fn expires(&self) -> Option<Instant> {
        self.expires
    }
}

/// Entries by key, with their expiry and their bounds.
#[derive(Debug)]
pub struct Keyspace {
    map: IndexMap<Box<[u8]>, Entry>,
    /// Entries with an expiry time.
    expiring: usize,
    /// What the entries cost ([`OVERHEAD`] each, with their keys and values).
    bytes: usize,
    /// When keys fall due (an entry whose key's expiry changed since is stale).
    due: Timers<Box<[u8]>>,
    clock: u64,
    bounds: Bounds,
    rng: Rng,
    /// Entries dropped since the last take: past their time, and evicted.
    expired: u32,
    evicted: u32,
}

impl Default for Keyspace {
    fn default() -> Keyspace {
        Keyspace::new(Bounds::default())
    }
}

fn cost(key: usize, value: usize) -> usize {
    key + value + OVERHEAD
}

impl Keyspace {
    pub fn new(bounds: Bounds) -> Keyspace {
        Keyspace {
            map: IndexMap::new(),
            expiring: 0,
            bytes: 0,
            due: Timers::new(),
            clock: 0,
            bounds,
            rng: Rng::new(&[0x6b65_7973]),
            expired: 0,
            evicted: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Holds it to `bounds` from now on.
    pub fn bound(&mut self, bounds: Bounds) {
        self.bounds = bounds;
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn expiring(&self) -> usize {
        self.expiring
    }

    /// What the entries cost against `--max-memory`.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The entry of `key` if it is live at `now` (one past its time is dropped and counted),
    /// marked used.
    pub fn live(&mut self, key: &[u8], now: Instant) -> Option<&Entry> {
        let i = self.map.get_index_of(key)?;
        if !self.map[i].live(now) {
            self.drop_at(i);
            self.expired += 1;
            return None;
        }
        self.clock += 1;
        let e = &mut self.map[i];
        e.used = self.clock;
        Some(e)
    }

    /// Removes `key`: whether it was there and live.
    pub fn remove_live(&mut self, key: &[u8], now: Instant) -> bool {
        match self.map.get_index_of(key) {
            Some(i) => {
                let live = self.map[i].live(now);
                self.drop_at(i);
                live
            }
            None => false,
        }
    }

    /// Removes the entry at `i`, its costs with it.
    fn drop_at(&mut self, i: usize) {
        let (k, e) = self.map.swap_remove_index(i).expect("an entry");
        self.bytes -= cost(k.len(), e.value.len());
        self.expiring -= usize::from(e.expires.is_some());
    }

    /// Whether an entry of `key` and `value` can be held at all (not past `--max-memory`
    /// alone).
    pub fn fits(&self, key: &[u8], value: &[u8]) -> bool {
        self.bounds.max_bytes.is_none_or(|m| cost(key.len(), value.len()) <= m)
    }

    /// Writes `key`'s value, flags, version and expiry, room made for it first: `false`
    /// (nothing written, nothing evicted) where the entry alone is past `--max-memory`, as
    /// redis refuses it.
    pub fn put(&mut self, key: &[u8], value: &[u8], flags: u32, cas: u64, expires: Option<Instant>) -> bool {
        if !self.fits(key, value) {
            return false;
        }
        let old = self.map.get(key).map(|e| e.value.len());
        let grows = match old {
            Some(old) => value.len().saturating_sub(old),
            None => cost(key.len(), value.len()),
        };
        self.make_room(old.is_none(), grows, key);
        self.clock += 1;
        let used = self.clock;
        match self.map.get_mut(key) {
            Some(e) => {
                self.bytes = self.bytes + value.len() - e.value.len();
                e.value.clear();
                e.value.extend_from_slice(value);
                (e.flags, e.cas, e.used) = (flags, cas, used);
            }
            None => {
                self.bytes += cost(key.len(), value.len());
                let e = Entry {
                    value: value.to_vec(),
                    flags,
                    cas,
                    expires: None,
                    used,
                };
                self.map.insert(key.into(), e);
            }
        }
        self.set_expiry(key, expires);
        true
    }

    /// Rewrites `key`'s value in place (an increment): `write` is given it emptied.
    pub fn rewrite(&mut self, key: &[u8], cas: u64, write: impl FnOnce(&mut Vec<u8>)) {
        let Some(e) = self.map.get_mut(key) else { return };
        let before = e.value.len();
        e.value.clear();
        write(&mut e.value);
        e.cas = cas;
        self.bytes = self.bytes + e.value.len() - before;
        // A count is a few bytes: what it grew by comes out of the others.
        self.make_room(false, 0, key);
    }

    /// `key` (present) expires at `at`, or never.
    pub fn set_expiry(&mut self, key: &[u8], at: Option<Instant>) {
        let Some(e) = self.map.get_mut(key) else { return };
        let was = e.expires;
        e.expires = at;
        self.expiring = self.expiring + usize::from(at.is_some()) - usize::from(was.is_some());
        let Some(at) = at.filter(|at| was != Some(*at)) else {
            return;
        };
        self.due.arm(at, key.into());
        // Entries left stale by keys given other times or removed: once they outnumber the
        // live ones, the due times are made again from the entries (amortised: it takes as
        // many writes again before the next time).
        if self.due.len() > 2 * self.expiring + 1024 {
            let map = &self.map;
            self.due
                .rebuild(|at, k| map.get(k).is_some_and(|e| e.expires == Some(at)));
        }
    }

    pub fn clear(&mut self) {
        *self = Keyspace::new(self.bounds);
    }

    /// Drops up to [`SWEEP`] keys whose time has come by `now`: how many.
    pub fn sweep(&mut self, now: Instant) -> usize {
        let mut n = 0;
        while n < SWEEP {
            let Some((at, key)) = self.due.pop_due(now) else { break };
            if let Some(i) = self.map.get_index_of(&*key) {
                if self.map[i].expires == Some(at) {
                    self.drop_at(i);
                    n += 1;
                }
            }
        }
        self.expired += n as u32;
        n
    }

    /// Evicts until a new entry (`new`) or a value that grows by `grows` bytes fits the
    /// bounds; `keep`: the key being written, never evicted for itself.
    fn make_room(&mut self, new: bool, grows: usize, keep: &[u8]) {
        let over = |ks: &Keyspace| {
            (new && ks.bounds.max_keys.is_some_and(|m| ks.map.len() >= m))
                || ks.bounds.max_bytes.is_some_and(|m| ks.bytes + grows > m)
        };
        // (A value that grew in place is already counted: `grows` is 0 and the bytes over.)
        while over(self) && self.map.len() > usize::from(!new) {
            let Some(i) = self.lru_sample(keep) else { continue };
            self.drop_at(i);
            self.evicted += 1;
        }
    }

    /// Of [`SAMPLES`] entries drawn at random (not `keep`), the least recently used.
    fn lru_sample(&mut self, keep: &[u8]) -> Option<usize> {
        let n = self.map.len() as u64;
        (0..SAMPLES)
            .map(|_| (self.rng.next_u64() % n) as usize)
            .filter(|&i| &**self.map.get_index(i).expect("in range").0 != keep)
            .min_by_key(|&i| self.map[i].used)
    }

    /// Entries that expired and entries evicted since the last take.
    pub fn take_counts(&mut self) -> (u32, u32) {
        (std::mem::take(&mut self.expired), std::mem::take(&mut self.evicted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// What the entries cost, counted afresh.
    fn counted(ks: &Keyspace) -> usize {
        ks.map.iter().map(|(k, e)| cost(k.len(), e.value.len())).sum()
    }

    #[test]
    fn the_sweep_drops_only_keys_whose_time_has_come_and_at_most_its_share_per_call() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut ks = Keyspace::default();
        for i in 0..500u32 {
            ks.put(format!("k{i}").as_bytes(), b"v", 0, 1, Some(t0 + ms(10)));
        }
        // Written again with a later time: its first entry is stale; one that no longer
        // expires; one that never did.
        ks.put(b"k0", b"v", 0, 2, Some(t0 + ms(1000)));
        ks.set_expiry(b"k1", None);
        ks.put(b"plain", b"v", 0, 3, None);
        assert_eq!((ks.len(), ks.expiring()), (501, 499));
        assert_eq!(ks.sweep(t0 + ms(5)), 0, "nothing is due yet");
        assert_eq!(ks.sweep(t0 + ms(20)), SWEEP);
        assert_eq!(ks.sweep(t0 + ms(20)), SWEEP);
        assert_eq!(ks.sweep(t0 + ms(20)), 498 - 2 * SWEEP);
        assert_eq!(ks.len(), 3, "k0 (later), k1 (no expiry) and plain stay");
        assert_eq!(ks.expiring(), 1);
        assert_eq!(ks.take_counts(), (498, 0));
        assert_eq!(ks.bytes(), counted(&ks));
        assert_eq!(ks.sweep(t0 + ms(2000)), 1);
        assert!(ks.live(b"k1", t0 + ms(5000)).is_some() && ks.live(b"plain", t0).is_some());
    }

    #[test]
    fn stale_due_times_do_not_pile_up_when_keys_are_written_again_and_again() {
        let t0 = Instant::now();
        let mut ks = Keyspace::default();
        for i in 0..100_000u64 {
            // The same time again, and a new one each time.
            ks.put(b"same", b"v", 0, i, Some(t0 + Duration::from_secs(3600)));
            ks.put(b"moving", b"v", 0, i, Some(t0 + Duration::from_millis(i)));
        }
        assert!(ks.due.len() <= 2 * ks.expiring() + 1025, "{} entries", ks.due.len());
        assert_eq!(ks.sweep(t0 + Duration::from_secs(7200)), 2);
    }

    #[test]
    fn bounds_on_keys_and_bytes_hold_by_evicting_and_the_recently_used_survive() {
        let t0 = Instant::now();
        let mut ks = Keyspace::new(Bounds {
            max_keys: Some(100),
            max_bytes: None,
        });
        for i in 0..1000u32 {
            ks.put(format!("k{i}").as_bytes(), b"value", 0, 1, None);
            // One key read after every write: the least recently used is never it.
            assert!(ks.live(b"k0", t0).is_some(), "k0 was evicted at {i}");
        }
        assert_eq!(ks.len(), 100);
        assert_eq!(ks.take_counts(), (0, 900));
        let cap = 100 * cost(5, 100);
        let mut ks = Keyspace::new(Bounds {
            max_keys: None,
            max_bytes: Some(cap),
        });
        for i in 0..1000u32 {
            ks.put(format!("k{i:04}").as_bytes(), &[b'x'; 100], 0, 1, None);
            assert!(ks.bytes() <= cap && ks.bytes() == counted(&ks), "at {i}");
        }
        // A value that grows evicts others, never itself.
        assert!(ks.put(b"k0999", &[b'y'; 5000], 0, 2, None));
        assert!(ks.bytes() <= cap && ks.live(b"k0999", t0).is_some());
        assert_eq!(ks.bytes(), counted(&ks));
        // An entry past the bound alone is refused, and evicts nothing; a value rewritten
        // longer makes its room too.
        let (before, keys) = (ks.bytes(), ks.len());
        assert!(!ks.put(b"huge", &vec![b'z'; cap], 0, 3, None));
        assert_eq!((ks.bytes(), ks.len()), (before, keys));
        ks.put(b"k0999", &vec![b'y'; cap - cost(5, 0)], 0, 4, None);
        ks.rewrite(b"k0999", 5, |v| v.extend_from_slice(&[b'y'; 10]));
        assert!(ks.bytes() <= cap + 10, "{}", ks.bytes());
    }
}
