//! One keyspace and every command run against it: values with their flags, versions and
//! expiry times ([`Keyspace`]: lazy expiry, the active sweep, the bounds and eviction). The
//! table sweeps what has expired as commands come, at most every [`SWEEP_EVERY`]; an event
//! loop's tick sweeps it too ([`Table::sweep`]) while no command comes.

use std::time::{Duration, Instant};

use super::keyspace::{Bounds, Keyspace};
use crate::proto::keyed::{decimal, Counting, Item, KeyedError, Op, Outcome, Replies, When};

/// How often commands sweep what has expired.
pub const SWEEP_EVERY: Duration = Duration::from_millis(10);

/// A time too far to add to the clock (a TTL of many centuries): as good as never, and held
/// as the furthest the clock reaches, a century on.
fn far(now: Instant) -> Instant {
    now.checked_add(std::time::Duration::from_secs(100 * 365 * 86_400))
        .unwrap_or(now)
}

/// INFO's keyspace section for a keyspace of `keys` keys, `expiring` of them with an expiry
/// (redis leaves out a database with no keys).
pub(super) fn info(r: &mut dyn Replies, keys: usize, expiring: usize) {
    match keys {
        0 => r.text("# Keyspace\r\n"),
        _ => r.text(&format!(
            "# Keyspace\r\ndb0:keys={keys},expires={expiring},avg_ttl=0\r\n"
        )),
    }
}

/// PING's answer: PONG, or its message said back.
pub(super) fn ping(echo: Option<&[u8]>, r: &mut dyn Replies) {
    match echo {
        Some(m) => r.value(
            b"",
            Some(Item {
                value: m,
                flags: 0,
                cas: 0,
            }),
        ),
        None => r.text("PONG"),
    }
}

/// One keyspace.
#[derive(Debug, Default)]
pub struct Table {
    keys: Keyspace,
    /// The last version given to a write.
    cas: u64,
    /// When commands sweep next.
    sweep_at: Option<Instant>,
}

impl Table {
    pub fn new() -> Table {
        Table::default()
    }

    /// A table held to `bounds`.
    pub fn bounded(bounds: Bounds) -> Table {
        Table {
            keys: Keyspace::new(bounds),
            ..Table::default()
        }
    }

    /// Holds it to `bounds` from now on (a thread's own table learns its server's bounds at
    /// its first command).
    pub fn bound(&mut self, bounds: Bounds) {
        self.keys.bound(bounds);
    }

    /// Keys held (those past their time that no sweep or command has dropped yet included).
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether an entry of `key` and `value` can be held at all (not past its bound alone).
    pub fn fits(&self, key: &[u8], value: &[u8]) -> bool {
        self.keys.fits(key, value)
    }

    /// Keys with an expiry time.
    pub fn expiring(&self) -> usize {
        self.keys.expiring()
    }

    /// What its entries cost against `--max-memory`.
    pub fn bytes(&self) -> usize {
        self.keys.bytes()
    }

    /// Drops keys past their time at `now` (a bounded number): the keys dropped and evicted
    /// since the last count.
    /// At most once every [`SWEEP_EVERY`]: a tick that comes sooner (many idle connections'
    /// timeouts, a poller's wake-ups) costs a comparison.
    pub fn sweep(&mut self, now: Instant) -> (u32, u32) {
        if self.sweep_at.is_none_or(|at| now >= at) {
            self.keys.sweep(now);
            self.sweep_at = now.checked_add(SWEEP_EVERY);
        }
        self.keys.take_counts()
    }

    /// Runs `op` at `now`, answering through `r`: what it found.
    pub fn run(&mut self, op: Op<'_>, now: Instant, r: &mut dyn Replies) -> Outcome {
        let mut o = self.command(op, now, r);
        if self.sweep_at.is_none_or(|at| now >= at) && self.keys.expiring() > 0 {
            self.keys.sweep(now);
            self.sweep_at = now.checked_add(SWEEP_EVERY);
        }
        (o.expired, o.evicted) = self.keys.take_counts();
        o
    }

    fn command(&mut self, op: Op<'_>, now: Instant, r: &mut dyn Replies) -> Outcome {
        let mut o = Outcome::default();
        match op {
            Op::Ping { echo } => ping(echo, r),
            Op::Get { keys, .. } => {
                for key in keys.iter() {
                    if o.answered > 0 && r.full() {
                        break;
                    }
                    // (Looked up first, to know its size: a key past its time is dropped
                    // either way, and one that waits for room counts as used now.)
                    let item = self.keys.live(key, now).map(|e| e.item());
                    // Built on another thread, a value waits for room in its connection.
                    if !r.fits(key, item.map_or(0, |i| i.value.len())) {
                        break;
                    }
                    o.answered += 1;
                    match item {
                        Some(_) => o.hits += 1,
                        None => o.misses += 1,
                    }
                    r.value(key, item);
                }
            }
            Op::Set {
                key,
                value,
                flags,
                ttl,
                when,
            } => match self.set(key, value, flags, ttl, when, now) {
                Ok(applied) => r.done(applied),
                Err(e) => {
                    o.error = true;
                    r.error(e);
                }
            },
            Op::MSet { pairs } => {
                // All or nothing: a pair past the bound alone refuses the whole command.
                let each = (0..pairs.len() / 2).map(|i| (pairs.get(2 * i), pairs.get(2 * i + 1)));
                if each.clone().all(|(k, v)| self.keys.fits(k, v)) {
                    for (k, v) in each {
                        self.put(k, v, 0, None);
                    }
                    r.done(true);
                } else {
                    o.error = true;
                    r.error(KeyedError::OutOfMemory);
                }
            }
            Op::Del { keys } => {
                let n = keys.iter().filter(|k| self.keys.remove_live(k, now)).count();
                r.int(n as i64);
            }
            Op::Exists { keys } => {
                let n = keys.iter().filter(|k| self.keys.live(k, now).is_some()).count();
                r.int(n as i64);
            }
            Op::Incr { key, by, counting } => match self.incr(key, by, counting, now) {
                Ok(Some(n)) => {
                    o.hits += 1;
                    r.int(n);
                }
                Ok(None) => {
                    o.misses += 1;
                    r.value(key, None);
                }
                Err(e) => {
                    o.error = true;
                    r.error(e);
                }
            },
            Op::Expire { key, ttl } => {
                let at = ttl.map(|t| now.checked_add(t).unwrap_or(far(now)));
                let found = self.expire(key, at, now);
                r.done(found);
            }
            Op::Ttl { key } => {
                let left = self.ttl(key, now);
                r.int(left);
            }
            Op::DbSize => r.int(self.keys.len() as i64),
            Op::FlushAll => {
                self.keys.clear();
                r.done(true);
            }
            Op::Info => info(r, self.keys.len(), self.keys.expiring()),
        }
        o
    }

    /// A write of `key` that applies as `when` says, to expire `ttl` from `now`: whether it
    /// applied, or the error of a value past the store's bound alone.
    fn set(
        &mut self,
        key: &[u8],
        value: &[u8],
        flags: u32,
        ttl: Option<std::time::Duration>,
        when: When,
        now: Instant,
    ) -> Result<bool, KeyedError> {
        let present = self.keys.live(key, now).is_some();
        let applies = match when {
            When::Always => true,
            When::Absent => !present,
            When::Present => present,
        };
        let stored = match (applies, ttl.map(|t| now.checked_add(t))) {
            // Already past (memcache's negative time): no value, the old one gone.
            (true, Some(Some(at))) if at <= now => {
                self.keys.remove_live(key, now);
                true
            }
            (true, Some(at)) => self.put(key, value, flags, Some(at.unwrap_or(far(now)))),
            (true, None) => self.put(key, value, flags, None),
            (false, _) => true,
        };
        match stored {
            true => Ok(applies),
            false => Err(KeyedError::OutOfMemory),
        }
    }

    /// `key` expires at `at` (never: `None`; a time already past deletes it, as redis does):
    /// whether it was there.
    fn expire(&mut self, key: &[u8], at: Option<Instant>, now: Instant) -> bool {
        if self.keys.live(key, now).is_none() {
            return false;
        }
        if at.is_some_and(|at| at <= now) {
            self.keys.remove_live(key, now);
            return true;
        }
        self.keys.set_expiry(key, at);
        true
    }

    /// Seconds `key` has left, rounded as redis rounds (to the nearest): -2 for a missing key,
    /// -1 for one that never expires.
    fn ttl(&mut self, key: &[u8], now: Instant) -> i64 {
        match self.keys.live(key, now).map(|e| e.expires()) {
            None => -2,
            Some(None) => -1,
            Some(Some(at)) => ((at.saturating_duration_since(now).as_millis() + 500) / 1000) as i64,
        }
    }

    fn next_cas(&mut self) -> u64 {
        self.cas += 1;
        self.cas
    }

    /// Writes `key`: `false` where the entry alone is past the store's bound.
    fn put(&mut self, key: &[u8], value: &[u8], flags: u32, expires: Option<Instant>) -> bool {
        let cas = self.next_cas();
        self.keys.put(key, value, flags, cas, expires)
    }

    /// Adds `by` to the integer at `key`: its new value; `None` where the key is missing and
    /// the counting does not create it.
    fn incr(&mut self, key: &[u8], by: i64, counting: Counting, now: Instant) -> Result<Option<i64>, KeyedError> {
        let cas = self.next_cas();
        let Some(e) = self.keys.live(key, now) else {
            return match counting {
                Counting::Unsigned { .. } => Ok(None),
                Counting::Signed => match self.put(key, by.to_string().as_bytes(), 0, None) {
                    true => Ok(Some(by)),
                    false => Err(KeyedError::OutOfMemory),
                },
            };
        };
        let text = std::str::from_utf8(e.item().value).map_err(|_| KeyedError::NotInteger)?;
        let next = match counting {
            Counting::Signed => {
                // Read as redis reads it: "+5" and "05" are no integers.
                let n = crate::proto::keyed::integer(text.as_bytes()).ok_or(KeyedError::NotInteger)?;
                n.checked_add(by).ok_or(KeyedError::Overflow)?
            }
            Counting::Unsigned { down } => {
                let n: u64 = text.trim_end().parse().map_err(|_| KeyedError::NotInteger)?;
                // incr wraps at 2^64; decr stops at 0 (memcached's rules).
                let m = match down {
                    false => n.wrapping_add(by as u64),
                    true => n.saturating_sub(by as u64),
                };
                // The unsigned result is handed back as a signed one's bits.
                m as i64
            }
        };
        self.keys.rewrite(key, cas, |v| match counting {
            Counting::Signed if next < 0 => {
                v.push(b'-');
                decimal(v, next.unsigned_abs());
            }
            Counting::Signed => decimal(v, next as u64),
            Counting::Unsigned { .. } => decimal(v, next as u64),
        });
        Ok(Some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::keyed::Args;
    use std::time::Duration;

    /// What a store answered, as text.
    #[derive(Default)]
    struct Said(Vec<String>);

    impl Replies for Said {
        fn value(&mut self, key: &[u8], item: Option<Item<'_>>) {
            let k = String::from_utf8_lossy(key);
            self.0.push(match item {
                Some(i) => format!("{k}={}", String::from_utf8_lossy(i.value)),
                None => format!("{k}=nil"),
            });
        }
        fn int(&mut self, n: i64) {
            self.0.push(n.to_string());
        }
        fn done(&mut self, applied: bool) {
            self.0.push(if applied { "ok" } else { "no" }.into());
        }
        fn error(&mut self, e: KeyedError) {
            self.0.push(format!("{e:?}"));
        }
        fn text(&mut self, text: &str) {
            self.0.push(text.into());
        }
    }

    fn set<'a>(key: &'a [u8], value: &'a [u8], ttl: Option<Duration>, when: When) -> Op<'a> {
        Op::Set {
            key,
            value,
            flags: 0,
            ttl,
            when,
        }
    }

    #[test]
    fn writes_apply_as_their_condition_says_and_keys_expire_at_their_time() {
        let (t0, s) = (Instant::now(), Duration::from_secs);
        let mut t = Table::new();
        let mut said = Said::default();
        t.run(set(b"k", b"v1", None, When::Present), t0, &mut said);
        t.run(set(b"k", b"v1", None, When::Absent), t0, &mut said);
        t.run(set(b"k", b"v2", None, When::Absent), t0, &mut said);
        t.run(set(b"k", b"v3", Some(s(10)), When::Present), t0, &mut said);
        let buf = b"k";
        let spans = [(0, 1)];
        let keys = Args::new(buf, &spans);
        t.run(Op::Get { keys, first: true }, t0 + s(9), &mut said);
        t.run(Op::Ttl { key: b"k" }, t0 + s(4), &mut said);
        let late = t.run(Op::Get { keys, first: true }, t0 + s(10), &mut said);
        assert_eq!(late.misses, 1, "expired at its time");
        t.run(Op::Ttl { key: b"k" }, t0 + s(10), &mut said);
        assert_eq!(said.0, ["no", "ok", "no", "ok", "k=v3", "6", "k=nil", "-2"]);
        assert!(t.is_empty(), "the expired key is dropped when touched");
    }

    #[test]
    fn increments_count_from_nothing_in_resp_and_find_nothing_in_memcache() {
        let t0 = Instant::now();
        let mut t = Table::new();
        let mut said = Said::default();
        for counting in [Counting::Unsigned { down: false }, Counting::Signed, Counting::Signed] {
            t.run(
                Op::Incr {
                    key: b"n",
                    by: 5,
                    counting,
                },
                t0,
                &mut said,
            );
        }
        t.run(
            Op::Incr {
                key: b"n",
                by: 20,
                counting: Counting::Unsigned { down: true },
            },
            t0,
            &mut said,
        );
        t.run(set(b"s", b"abc", None, When::Always), t0, &mut said);
        let bad = t.run(
            Op::Incr {
                key: b"s",
                by: 1,
                counting: Counting::Signed,
            },
            t0,
            &mut said,
        );
        t.run(
            set(b"m", i64::MAX.to_string().as_bytes(), None, When::Always),
            t0,
            &mut said,
        );
        t.run(
            Op::Incr {
                key: b"m",
                by: 1,
                counting: Counting::Signed,
            },
            t0,
            &mut said,
        );
        assert!(bad.error);
        assert_eq!(
            said.0,
            ["n=nil", "5", "10", "0", "ok", "NotInteger", "ok", "Overflow"],
            "decr stops at 0 in memcache"
        );
    }

    #[test]
    fn del_exists_mset_dbsize_and_flushall_count_what_is_there() {
        let t0 = Instant::now();
        let mut t = Table::new();
        let mut said = Said::default();
        let buf = b"abcd";
        let pairs = [(0, 1), (1, 2), (2, 3), (3, 4)];
        t.run(
            Op::MSet {
                pairs: Args::new(buf, &pairs),
            },
            t0,
            &mut said,
        );
        t.run(Op::DbSize, t0, &mut said);
        let keys = [(0, 1), (2, 3), (1, 2)];
        t.run(
            Op::Exists {
                keys: Args::new(buf, &keys),
            },
            t0,
            &mut said,
        );
        t.run(
            Op::Del {
                keys: Args::new(buf, &keys),
            },
            t0,
            &mut said,
        );
        t.run(Op::FlushAll, t0, &mut said);
        t.run(Op::DbSize, t0, &mut said);
        assert_eq!(said.0, ["ok", "2", "2", "2", "ok", "0"]);
    }
}
