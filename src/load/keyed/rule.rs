//! [`KeyedRule`]: the rules of a keyed run's flags (`--keys`, `--key-dist`, `--value-size`, ...)
//! that a command line can break, each with the values it was given.

use std::fmt;

use super::keys::{KeyDist, MAX_KEYS};
use super::sizes::Sizes;
use super::MAX_LEDGER_KEYS;

/// A rule of a keyed run's flags that a command line breaks.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyedRule {
    /// A keyed flag with a target that is not keyed.
    NotKeyed,
    /// `-H` or `-m` with a keyed target.
    HttpFlags,
    /// `--keys` of 0 or over [`MAX_KEYS`].
    KeysOutOfRange,
    /// Owned keys fewer than the connections that own them.
    KeysUnderConnections {
        keys: u64,
        connections: usize,
        dist: KeyDist,
    },
    /// More owned keys than a ledger checks exactly.
    KeysOverLedger { keys: u64, dist: KeyDist },
    /// Values too short for their stamp (`least`: the shortest checked value).
    ValuesTooShort { sizes: Sizes, least: usize },
    /// Empty values (without checks).
    ValuesEmpty { sizes: Sizes },
}

impl fmt::Display for KeyedRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyedRule::NotKeyed => f.write_str(
                "--keys, --key-dist, --ratio, --value-size, --prefill and --no-verify apply to resp:// and memcache:// targets",
            ),
            KeyedRule::HttpFlags => {
                f.write_str("-H and -m are HTTP's: a keyed target's commands are SET and GET (--ratio)")
            }
            KeyedRule::KeysOutOfRange => write!(f, "--keys is at least 1 and at most {MAX_KEYS}"),
            KeyedRule::KeysUnderConnections { keys, connections, dist } => write!(
                f,
                "--keys {keys} is fewer than the {connections} connections: with {dist} keys each connection owns its own (to check every value against its last write); give --keys {connections} or more, or --key-dist zipf:0.99 (keys shared, values checked for integrity only)"
            ),
            KeyedRule::KeysOverLedger { keys, dist } => write!(
                f,
                "--keys {keys}: checking {dist} keys exactly keeps 4 bytes per key, so at most {MAX_LEDGER_KEYS} keys: give fewer, --key-dist zipf:S (integrity checks, nothing kept) or --no-verify"
            ),
            KeyedRule::ValuesTooShort { sizes, least } => write!(
                f,
                "--value-size '{sizes}' names values under {least} bytes, too short to carry their key, writer, sequence and checksum: give {least} or more, or --no-verify"
            ),
            KeyedRule::ValuesEmpty { sizes } => {
                write!(f, "--value-size '{sizes}' names empty values: give 1 byte or more")
            }
        }
    }
}
