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
mod prefill_failed;
mod ratio;
mod reply;
mod rule;
mod sizes;
mod tally;
mod value;

pub use command::{Dialect, Verb, CLASSES};
pub use conn::{KeyedConn, Verdict};
pub use keys::{name, BadKeyDist, KeyDist, KeyDistFault, MAX_KEYS};
pub use ledger::{Checked, Unwritten, MAX_LEDGER_KEYS};
pub use plan::{Config, Plan};
pub use prefill::prefill;
pub use prefill_failed::PrefillFailed;
pub use ratio::{BadRatio, Ratio, RatioFault};
pub use reply::NotReplies;
pub use rule::KeyedRule;
pub use sizes::{BadSizes, Sizes, SizesFault, MAX_VALUE};
pub use tally::{KeyedFigures, KeyedTally};
pub use value::HEADER;
