//! memcache's commands: what each asks of the store ([`Op`]), with its words checked as
//! memcached checks them.

use super::Verb;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::proto::keyed::{Args, Counting, Op, When};

/// Expiry times past this many seconds are Unix times, not durations (memcached's 30 days).
const RELATIVE_MAX: i64 = 60 * 60 * 24 * 30;

/// The op the command in `args` asks for (`n` of them, `noreply` left out; a storage
/// command's data at `data` of `buf`), or what else it is.
pub(super) fn op<'a>(
    buf: &'a [u8],
    args: Args<'a>,
    n: usize,
    data: Option<(usize, usize)>,
) -> Result<(Verb, Op<'a>), Other> {
    const BAD: Other = Other::Refused("CLIENT_ERROR bad command line format");
    let name = args.get(0);
    Ok(match name {
        b"get" | b"gets" if n >= 2 => (
            if name == b"gets" { Verb::Gets } else { Verb::Get },
            Op::Get {
                keys: args.from(1),
                first: true,
            },
        ),
        b"set" | b"add" | b"replace" => {
            let (Some(flags), Some(exptime), Some((a, b))) = (number(args.get(2)), number(args.get(3)), data) else {
                return Err(BAD);
            };
            let flags = u32::try_from(flags).map_err(|_| BAD)?;
            let when = match name {
                b"add" => When::Absent,
                b"replace" => When::Present,
                _ => When::Always,
            };
            let op = Op::Set {
                key: args.get(1),
                value: &buf[a..b],
                flags,
                ttl: ttl(exptime),
                when,
            };
            (Verb::Store, op)
        }
        // `delete k 0`: the hold time older clients send, which memcached takes if 0.
        b"delete" if n == 2 || (n == 3 && args.get(2) == b"0") => (
            Verb::Delete,
            Op::Del {
                keys: args.from(1).take(1),
            },
        ),
        b"incr" | b"decr" if n == 3 => {
            let v = std::str::from_utf8(args.get(2))
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or(Other::Refused("CLIENT_ERROR invalid numeric delta argument"))?;
            let op = Op::Incr {
                key: args.get(1),
                by: v as i64,
                counting: Counting::Unsigned { down: name == b"decr" },
            };
            (Verb::Incr, op)
        }
        b"touch" if n == 3 => {
            let exptime = number(args.get(2)).ok_or(BAD)?;
            let op = Op::Expire {
                key: args.get(1),
                ttl: ttl(exptime),
            };
            (Verb::Touch, op)
        }
        b"flush_all" if n == 1 => (Verb::Flush, Op::FlushAll),
        // Its one argument is a delay (flushed at once here: a difference docs/models.md
        // lists); anything else is refused before the store is touched, as memcached refuses it.
        b"flush_all" if n == 2 => match number(args.get(1)) {
            Some(_) => (Verb::Flush, Op::FlushAll),
            None => return Err(Other::Refused("CLIENT_ERROR invalid exptime argument")),
        },
        b"version" => return Err(Other::Version),
        b"quit" => return Err(Other::Quit),
        // A get with no key is no command at all to memcached.
        b"get" | b"gets" => return Err(Other::Refused("ERROR")),
        b"delete" | b"incr" | b"decr" | b"touch" | b"flush_all" => return Err(BAD),
        _ => return Err(Other::Refused("ERROR")),
    })
}

/// A command that is no op for the store.
pub(super) enum Other {
    Quit,
    Version,
    /// Answered with this error line.
    Refused(&'static str),
}

/// A decimal integer.
pub(super) fn number(word: &[u8]) -> Option<i64> {
    std::str::from_utf8(word).ok()?.parse().ok()
}

/// memcached's expiry time: 0 never, up to 30 days a duration, past that a Unix time, below
/// zero already past.
fn ttl(exptime: i64) -> Option<Duration> {
    match exptime {
        0 => None,
        t if t < 0 => Some(Duration::ZERO),
        t if t <= RELATIVE_MAX => Some(Duration::from_secs(t as u64)),
        t => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs() as i64;
            Some(Duration::from_secs(t.saturating_sub(now).max(0) as u64))
        }
    }
}
