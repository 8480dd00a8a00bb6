//! Keyed targets: `resp://HOST:PORT` (redis, valkey, muxlab's `--proto resp`) and
//! `memcache://HOST:PORT` (memcached, muxlab's `--proto memcache`). Each command is a SET or a
//! GET (`--ratio SET:GET`) of one of `--keys` keys (`--key-dist`), a SET's value `--value-size`
//! bytes long; `--prefill` writes every key before the window.
//!
//! Every reply is checked (unless `--no-verify`): values describe themselves ([`value`]), so a
//! GET's value is checked for its key, length and checksum; a key the connection owns
//! ([`keys`]) is checked against the write it must hold ([`ledger`]). A miss is a miss, never an
//! error (the store may evict or expire); a wrong value and an error reply are errors of their
//! own classes. SET and GET are the run's two request classes, so each has its latency and
//! `--slo get:p99<=1ms` names one.
//!
//! At `--pipeline N` a connection writes N commands in one write and sends the next batch once
//! all N are answered; an open loop schedules batches at rate ÷ N, each command's latency
//! counted from its batch's intended time.

mod command;
mod conn;
mod keys;
mod ledger;
mod plan;
mod prefill;
mod reply;
mod sizes;
mod tally;
mod value;

pub use command::{Dialect, Verb, CLASSES};
pub use conn::{KeyedConn, Verdict};
pub use keys::{name, KeyDist, MAX_KEYS};

/// The most owned keys whose last writes a run keeps (4 bytes each, over its processes).
pub const MAX_LEDGER_KEYS: u64 = 100_000_000;
pub use ledger::Checked;
pub use plan::{Config, Plan};
pub use prefill::prefill;
pub use reply::NotReplies;
pub use sizes::{Sizes, MAX_VALUE};
pub use tally::{KeyedFigures, KeyedTally};
pub use value::HEADER;

use std::fmt;
use std::str::FromStr;

use crate::units::BadValue;

/// The share of SETs and GETs (`--ratio SET:GET`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub set: f64,
    pub get: f64,
}

impl Default for Ratio {
    /// One SET to ten GETs (memtier_benchmark's default).
    fn default() -> Ratio {
        Ratio { set: 1.0, get: 10.0 }
    }
}

impl FromStr for Ratio {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Ratio, BadValue> {
        let bad = || BadValue(format!("--ratio '{s}' is not SET:GET (e.g. 1:10, 1:0 for SETs only)"));
        let (a, b) = s.split_once(':').ok_or_else(bad)?;
        let (set, get): (f64, f64) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        let ok = |w: f64| (0.0..=1e9).contains(&w);
        if !ok(set) || !ok(get) || set + get <= 0.0 {
            return Err(BadValue(format!(
                "--ratio '{s}': both parts are at least 0 and at most 1e9, and not both 0"
            )));
        }
        Ok(Ratio { set, get })
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.set, self.get)
    }
}
