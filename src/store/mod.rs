//! store: the keyed state a server keeps for RESP and memcache (`--proto resp|memcache`), below
//! the models, which pick a kind and never touch a table themselves.
//!
//! Four kinds ([`Kind`], `--store`):
//! - `owned`: one table and no lock, the table of the one thread that touches data (redis's
//!   design: its events "are basically memory look-ups"). Only for designs with one such
//!   thread; a design with more is refused it.
//! - `locked`: one table behind one lock, shared by every thread (memcached before its
//!   striped item locks: every command takes the lock).
//! - `striped:N`: one keyspace over N tables by key hash, each behind its own lock
//!   (memcached's item locks): commands on different stripes run at once.
//! - `sharded`: a table per worker thread, each the shard of the keys that hash to it
//!   (Dragonfly's and Seastar's shard per thread): a command for a key of another worker's
//!   shard goes to that worker's loop and is answered later (`server::crossing::hops`). A command of
//!   many keys that writes or counts takes the shards it touches in shard order (each has a
//!   lock its owner takes uncontended), so MSET is atomic; a read of many keys is split
//!   into runs by owner and joined in order, each run read by its owner (not atomic).
//!
//! A command takes its table's lock through `taken`, which counts the acquisitions, those
//! that waited, and times one in 64 (the design's critical section and lock wait).
//!
//! Each table is a keyspace (`keyspace.rs`): lazy and active expiry, and `--max-keys` /
//! `--max-memory` with sampled-LRU eviction.
//!
//! A design whose workers are processes (fork, prefork, procs-accept) keeps a keyspace per
//! process: what one process writes the others never see (`muxlab models` says so).

mod keyspace;
mod striped;
mod table;
pub mod taken;

#[cfg(test)]
mod later_tests;
#[cfg(test)]
mod protocol_tests;
#[cfg(test)]
mod striped_tests;

pub use keyspace::Bounds;
pub use striped::{stripe_of, Striped};
pub use table::Table;

use std::cell::RefCell;
use std::sync::Mutex;
use std::time::Instant;

use crate::proto::keyed::{Op, Outcome, Replies};

/// Which store a server keeps (`--store`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Owned,
    Locked,
    /// This many stripes.
    Striped(usize),
    /// A shard per worker.
    Sharded,
}

/// The most stripes `striped:N` takes.
pub const MAX_STRIPES: usize = 4096;

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kind::Owned => f.write_str("owned"),
            Kind::Locked => f.write_str("locked"),
            Kind::Striped(n) => write!(f, "striped:{n}"),
            Kind::Sharded => f.write_str("sharded"),
        }
    }
}

/// A `--store` value that names no store: what was given, and why it is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadStore {
    pub given: String,
    pub why: StoreRefusal,
}

/// Why a `--store` value is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreRefusal {
    /// `striped:N` with N not a number from 1 to [`MAX_STRIPES`].
    Stripes,
    /// No store has that name.
    Unknown,
}

impl std::fmt::Display for BadStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.given;
        match self.why {
            StoreRefusal::Stripes => write!(f, "'{s}': striped:N takes N from 1 to {MAX_STRIPES} stripes"),
            StoreRefusal::Unknown => write!(
                f,
                "'{s}' is not a store: owned (one thread's table, no lock), locked (one table behind one lock), striped:N (N tables by key hash, a lock each; striped alone is 16) or sharded (a table per worker, commands sent to the key's owner)"
            ),
        }
    }
}

impl std::error::Error for BadStore {}

impl std::str::FromStr for Kind {
    type Err = BadStore;

    fn from_str(s: &str) -> Result<Kind, BadStore> {
        let bad = |why| BadStore {
            given: s.to_string(),
            why,
        };
        match s {
            "owned" => Ok(Kind::Owned),
            "locked" => Ok(Kind::Locked),
            "striped" => Ok(Kind::Striped(16)),
            "sharded" => Ok(Kind::Sharded),
            _ => match s.strip_prefix("striped:").map(str::parse::<usize>) {
                Some(Ok(n)) if (1..=MAX_STRIPES).contains(&n) => Ok(Kind::Striped(n)),
                Some(_) => Err(bad(StoreRefusal::Stripes)),
                None => Err(bad(StoreRefusal::Unknown)),
            },
        }
    }
}

/// Who touches a design's data, which decides the stores it may keep and the one it keeps
/// by default (each model declares it; `muxlab models` shows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toucher {
    /// One thread serves every connection: `owned` by default.
    OneThread,
    /// One thread per worker: `owned` with one worker, else `locked`.
    EachWorker,
    /// Several threads of one process: `locked`.
    Threads,
    /// Processes, each with its keyspace: `locked` within each.
    Processes,
}

impl Toucher {
    /// The store it keeps by default with `workers` workers.
    pub fn default_store(self, workers: usize) -> Kind {
        match self {
            Toucher::OneThread => Kind::Owned,
            Toucher::EachWorker if workers == 1 => Kind::Owned,
            _ => Kind::Locked,
        }
    }

    /// Whether `kind` is safe for it with `workers` workers: `owned` only where one thread
    /// touches the data.
    pub fn allows(self, kind: Kind, workers: usize) -> bool {
        kind != Kind::Owned || self.default_store(workers) == Kind::Owned
    }

    /// What `muxlab models` says of its keyed state.
    pub fn says(self) -> &'static str {
        match self {
            Toucher::OneThread => "owned (one thread touches data)",
            Toucher::EachWorker => "owned with one worker, locked with more",
            Toucher::Threads => "locked (threads share one table)",
            Toucher::Processes => "locked, a keyspace per process (processes do not share one)",
        }
    }
}

/// A server's keyed state.
// One per server, made once: the locked table inline costs nothing a box would save.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Store {
    /// The table of the thread that runs the command ([`OWNED`]), held to these bounds.
    Owned(Bounds),
    Locked(Mutex<Table>),
    Striped(Striped),
    /// A shard per worker: the stripes are the workers' shards.
    Sharded(Striped),
}

thread_local! {
    /// The `owned` store's table: the one thread that touches data owns it.
    static OWNED: RefCell<Table> = RefCell::new(Table::new());
}

/// This thread's `owned` table, for `f`. Never inlined, as every thread-local access on a
/// green thread's path (`tests/structure/`).
#[inline(never)]
fn owned<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    OWNED.with(|t| f(&mut t.borrow_mut()))
}

impl Store {
    /// A store of `kind` for `workers` workers, held to `bounds` (a striped or sharded one
    /// holds an equal share in each stripe or shard).
    pub fn new(kind: Kind, workers: usize, bounds: Bounds) -> Store {
        match kind {
            Kind::Sharded => Store::Sharded(Striped::new(workers, bounds)),
            Kind::Owned => Store::Owned(bounds),
            Kind::Locked => Store::Locked(Mutex::new(Table::bounded(bounds))),
            Kind::Striped(n) => Store::Striped(Striped::new(n, bounds)),
        }
    }

    /// The loop's tick on worker `worker` at `now`: drops what has expired from the tables
    /// this thread may sweep (its own `owned` table, its shard, or the shared ones): the
    /// keys dropped and evicted since the last count.
    pub fn sweep(&self, worker: usize, now: Instant) -> (u32, u32) {
        match self {
            Store::Owned(_) => owned(|t| t.sweep(now)),
            Store::Locked(t) => crate::sync::lock(t).sweep(now),
            Store::Striped(s) => s.sweep(None, now),
            Store::Sharded(s) => s.sweep(Some(worker), now),
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Store::Owned(_) => Kind::Owned,
            Store::Locked(_) => Kind::Locked,
            Store::Striped(s) => Kind::Striped(s.stripes()),
            Store::Sharded(_) => Kind::Sharded,
        }
    }

    /// The worker whose shard holds `key` (0 for a store that is not sharded).
    pub fn owner(&self, key: &[u8]) -> usize {
        match self {
            Store::Sharded(s) => s.of(key),
            _ => 0,
        }
    }

    /// Runs `op` now, answering through `r`.
    pub fn run(&self, op: Op<'_>, r: &mut dyn Replies) -> Outcome {
        // PING touches no data: no lock, no clock.
        if let Op::Ping { echo } = op {
            table::ping(echo, r);
            return Outcome::default();
        }
        let now = Instant::now();
        match self {
            Store::Owned(bounds) => owned(|t| {
                t.bound(*bounds);
                t.run(op, now, r)
            }),
            Store::Locked(t) => taken::take(t).run(op, now, r),
            Store::Striped(s) | Store::Sharded(s) => s.run(op, now, r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_is_refused_where_more_than_one_thread_touches_data() {
        assert!(Toucher::OneThread.allows(Kind::Owned, 4));
        assert!(Toucher::EachWorker.allows(Kind::Owned, 1));
        assert!(!Toucher::EachWorker.allows(Kind::Owned, 2));
        assert!(!Toucher::Threads.allows(Kind::Owned, 1));
        assert!(!Toucher::Processes.allows(Kind::Owned, 1));
        assert!(Toucher::Processes.allows(Kind::Locked, 8));
        assert_eq!(Toucher::EachWorker.default_store(2), Kind::Locked);
        assert_eq!("locked".parse::<Kind>(), Ok(Kind::Locked));
        assert!(Toucher::EachWorker.allows(Kind::Striped(4), 2));
        assert_eq!("striped:16".parse::<Kind>(), Ok(Kind::Striped(16)));
        assert_eq!(Kind::Striped(16).to_string(), "striped:16");
        for (bad, why) in [
            ("striped:0", StoreRefusal::Stripes),
            ("striped:x", StoreRefusal::Stripes),
            ("striped:4097", StoreRefusal::Stripes),
            ("stripes", StoreRefusal::Unknown),
        ] {
            assert_eq!(bad.parse::<Kind>().map_err(|e| e.why), Err(why), "{bad}");
        }
    }
}
