//! `striped:N`: one keyspace split over N tables by a hash of the key, each behind its own
//! lock (memcached's item locks over its hash buckets): commands on keys of different stripes
//! run at once. A command of one key takes its stripe's lock. MGET and MSET take every stripe
//! of their keys at once, in stripe order (so two of them never wait on each other in a
//! circle), and are atomic as redis's are (an MGET that stops at `--max-output` goes on later
//! under the locks again: its two parts are two reads). DEL and EXISTS of many keys, DBSIZE,
//! INFO and FLUSHALL take the stripes one at a time: each key is atomic, the command is not.

use std::sync::Mutex;
use std::time::Instant;

use super::keyspace::Bounds;
use super::table::{info, ping, Table};
use super::taken::{take, Taken};
use crate::proto::keyed::{Item, KeyedError, Op, Outcome, Replies, When};
use crate::sync::lock;

/// One keyspace over N locked tables.
#[derive(Debug)]
pub struct Striped {
    stripes: Box<[Mutex<Table>]>,
}

impl Striped {
    /// `n` stripes, each held to its share of `bounds`: the floor of an even share, the
    /// remainder spread one each over the first stripes, so the shares add up to the bound
    /// exactly (before: each the ceiling, up to n − 1 keys over `--max-keys`), with no shared
    /// count on any write.
    pub fn new(n: usize, bounds: Bounds) -> Striped {
        let n = n.max(1);
        let share = |b: Option<usize>, i: usize| b.map(|b| b / n + usize::from(i < b % n));
        Striped {
            stripes: (0..n)
                .map(|i| {
                    Mutex::new(Table::bounded(Bounds {
                        max_keys: share(bounds.max_keys, i),
                        max_bytes: share(bounds.max_bytes, i),
                    }))
                })
                .collect(),
        }
    }

    /// Sweeps stripe `i` (`None`: every one) of what has expired at `now`: the keys dropped
    /// and evicted since the last count.
    pub fn sweep(&self, i: Option<usize>, now: Instant) -> (u32, u32) {
        let mut n = (0, 0);
        for (k, t) in self.stripes.iter().enumerate() {
            if i.is_none_or(|i| i == k) {
                let (e, v) = lock(t).sweep(now);
                n = (n.0 + e, n.1 + v);
            }
        }
        n
    }

    pub fn stripes(&self) -> usize {
        self.stripes.len()
    }

    /// The stripe of `key`.
    pub fn of(&self, key: &[u8]) -> usize {
        stripe_of(key, self.stripes.len())
    }

    fn table(&self, key: &[u8]) -> Taken<'_> {
        take(&self.stripes[self.of(key)])
    }

    /// Takes the stripes of `keys`, in stripe order (so two commands that take several never
    /// wait on each other in a circle): their numbers, sorted, and their guards in that order.
    fn hold<'k>(&self, keys: impl Iterator<Item = &'k [u8]>) -> (Vec<usize>, Vec<Taken<'_>>) {
        let mut held: Vec<usize> = keys.map(|k| self.of(k)).collect();
        held.sort_unstable();
        held.dedup();
        let guards = held.iter().map(|&s| take(&self.stripes[s])).collect();
        (held, guards)
    }

    /// Runs `op` at `now`, answering through `r`.
    pub fn run(&self, op: Op<'_>, now: Instant, r: &mut dyn Replies) -> Outcome {
        match op {
            Op::Ping { echo } => {
                ping(echo, r);
                Outcome::default()
            }
            Op::Set { key, .. } | Op::Incr { key, .. } | Op::Expire { key, .. } | Op::Ttl { key } => {
                self.table(key).run(op, now, r)
            }
            Op::Get { keys, .. } if keys.len() == 1 => self.table(keys.get(0)).run(op, now, r),
            Op::Get { keys, first } => {
                let (held, mut guards) = self.hold(keys.iter());
                let mut o = Outcome::default();
                for i in 0..keys.len() {
                    if o.answered > 0 && r.full() {
                        break;
                    }
                    let one = keys.from(i).take(1);
                    let g = held.binary_search(&self.of(one.get(0))).expect("its stripe is held");
                    let got = guards[g].run(Op::Get { keys: one, first }, now, r);
                    o.add(got);
                    if got.answered == 0 {
                        // No room for it (built on another thread): the rest goes later.
                        break;
                    }
                    o.answered += 1;
                }
                o
            }
            Op::Del { keys } | Op::Exists { keys } => {
                let (mut n, mut o) = (Count(0), Outcome::default());
                for i in 0..keys.len() {
                    let one = keys.from(i).take(1);
                    let each = match op {
                        Op::Del { .. } => Op::Del { keys: one },
                        _ => Op::Exists { keys: one },
                    };
                    o.add(self.table(one.get(0)).run(each, now, &mut n));
                }
                r.int(n.0);
                o
            }
            Op::MSet { pairs } => {
                let (held, mut guards) = self.hold((0..pairs.len() / 2).map(|i| pairs.get(2 * i)));
                let mut o = Outcome::default();
                // All or nothing: a pair past its stripe's bound alone refuses the whole command.
                let fits = (0..pairs.len() / 2).all(|i| {
                    let (key, value) = (pairs.get(2 * i), pairs.get(2 * i + 1));
                    let g = held.binary_search(&self.of(key)).expect("its stripe is held");
                    guards[g].fits(key, value)
                });
                if !fits {
                    r.error(KeyedError::OutOfMemory);
                    o.error = true;
                    return o;
                }
                for i in 0..pairs.len() / 2 {
                    let key = pairs.get(2 * i);
                    let g = held.binary_search(&self.of(key)).expect("its stripe is held");
                    let set = Op::Set {
                        key,
                        value: pairs.get(2 * i + 1),
                        flags: 0,
                        ttl: None,
                        when: When::Always,
                    };
                    o.add(guards[g].run(set, now, &mut Count(0)));
                }
                drop(guards);
                match o.error {
                    false => r.done(true),
                    true => r.error(KeyedError::OutOfMemory),
                }
                o
            }
            Op::DbSize => {
                r.int(self.stripes.iter().map(|t| lock(t).len()).sum::<usize>() as i64);
                Outcome::default()
            }
            Op::FlushAll => {
                for t in self.stripes.iter() {
                    lock(t).run(Op::FlushAll, now, &mut Count(0));
                }
                r.done(true);
                Outcome::default()
            }
            Op::Info => {
                let (keys, expiring) = self.stripes.iter().fold((0, 0), |(k, e), t| {
                    let t = lock(t);
                    (k + t.len(), e + t.expiring())
                });
                info(r, keys, expiring);
                Outcome::default()
            }
        }
    }
}

/// The stripe (or shard) of `key` among `n` (FNV-1a): what the store does, and what the
/// queueing prediction draws its stripes by.
pub fn stripe_of(key: &[u8], n: usize) -> usize {
    let h = key.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    // Its high bits, mixed: FNV's low bits follow the bytes' low bits too closely.
    ((h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) % n.max(1) as u64) as usize
}

/// What a stripe's part of a command answered, kept to be summed: its count.
struct Count(i64);

impl Replies for Count {
    fn value(&mut self, _: &[u8], _: Option<Item<'_>>) {}
    fn int(&mut self, n: i64) {
        self.0 += n;
    }
    fn done(&mut self, _: bool) {}
    fn error(&mut self, _: KeyedError) {}
    fn text(&mut self, _: &str) {}
}
