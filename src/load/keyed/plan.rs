//! A keyed run's plan: the flags of `resp://` and `memcache://` targets checked (each error
//! names its key) and completed into what every connection's commands are made from, and how a
//! document records it.

use super::keys::{KeyDist, MAX_KEYS};
use super::rule::KeyedRule;
use super::sizes::Sizes;
use super::value::HEADER;
use super::{Dialect, MAX_LEDGER_KEYS};
use crate::load::{Error, Target, Workload};

/// A keyed run's plan: what every connection's commands are made from.
#[derive(Debug, Clone)]
pub struct Plan {
    pub dialect: Dialect,
    pub keys: u64,
    pub dist: KeyDist,
    pub sizes: Sizes,
    pub verify: bool,
    pub prefill: bool,
    /// The run's connections (over every shard and host): keys are owned modulo this.
    pub connections: u64,
    /// This process's run: its writes are stamped with it, so a value left by an earlier run
    /// is told from this one's.
    pub run: u32,
    pub seed: u64,
}

impl Plan {
    /// The plan of a run against `target` with `connections` and `w`, if it is a keyed one;
    /// keyed flags anywhere else, and values no keyed run can take, are errors naming their
    /// key.
    pub fn of(target: &Target, connections: usize, w: &Workload) -> Result<Option<Plan>, Error> {
        let given = [
            ("keys", w.keys.is_some()),
            ("key_dist", w.key_dist.is_some()),
            ("ratio", w.ratio.is_some()),
            ("value_size", w.value_size.is_some()),
            ("prefill", w.prefill),
            ("no_verify", w.no_verify),
        ];
        let Some(dialect) = target.kind.keyed() else {
            return match given.iter().find(|(_, on)| *on) {
                Some((key, _)) => Err(Error::Keyed {
                    key,
                    rule: KeyedRule::NotKeyed,
                }),
                None => Ok(None),
            };
        };
        let bad = |key, rule| Err(Error::Keyed { key, rule });
        if !w.headers.is_empty() || !w.method.is_empty() {
            let key = if w.headers.is_empty() { "method" } else { "header" };
            return bad(key, KeyedRule::HttpFlags);
        }
        let keys = w.keys.unwrap_or(100_000);
        if keys == 0 || keys > MAX_KEYS {
            return bad("keys", KeyedRule::KeysOutOfRange);
        }
        let dist = w.key_dist.unwrap_or_default();
        if dist.owned() && keys < connections as u64 {
            return bad(
                "keys",
                KeyedRule::KeysUnderConnections {
                    keys,
                    connections,
                    dist,
                },
            );
        }
        let verify = !w.no_verify;
        if verify && dist.owned() && keys > MAX_LEDGER_KEYS {
            return bad("keys", KeyedRule::KeysOverLedger { keys, dist });
        }
        let sizes = w.value_size.clone().unwrap_or_default();
        let least = if verify { HEADER } else { 1 };
        if sizes.below(least) {
            return bad(
                "value_size",
                match verify {
                    true => KeyedRule::ValuesTooShort { sizes, least },
                    false => KeyedRule::ValuesEmpty { sizes },
                },
            );
        }
        Ok(Some(Plan {
            dialect,
            keys,
            dist,
            sizes,
            verify,
            prefill: w.prefill,
            connections: connections as u64,
            run: run_number(),
            seed: w.seed,
        }))
    }

    /// How values are checked: `exact`, `integrity` or `off`.
    pub fn check_mode(&self) -> &'static str {
        match (self.verify, self.dist.owned()) {
            (false, _) => "off",
            (true, true) => "exact",
            (true, false) => "integrity",
        }
    }

    /// Its settings for a document.
    pub fn config(&self) -> Config {
        Config {
            keys: self.keys,
            key_dist: self.dist.to_string(),
            value_size: self.sizes.to_string(),
            prefill: self.prefill,
            checks: self.check_mode().to_string(),
        }
    }
}

/// A keyed run's settings, as a document records them (the ratio is its classes' weights).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct Config {
    pub keys: u64,
    pub key_dist: String,
    pub value_size: String,
    pub prefill: bool,
    /// How values are checked: `exact`, `integrity` or `off`.
    pub checks: String,
}

/// A run number for this process: the clock's nanoseconds and the process id, mixed.
fn run_number() -> u32 {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = ns ^ (u64::from(std::process::id()) << 40);
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    (x ^ (x >> 29)) as u32
}
