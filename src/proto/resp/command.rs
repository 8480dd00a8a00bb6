//! RESP's commands: what each asks of the store ([`Op`]), with its arguments checked as redis
//! checks them, and the questions about the connection answered here.

use super::Verb;
use std::fmt;
use std::time::Duration;

use super::reply::error;
use crate::proto::keyed::{Args, Counting, Op, When};
use crate::proto::Fed;

/// The op the command in `args` asks for; `None` when it was answered here (an error, or a
/// question about the connection or the configuration).
pub(super) fn command_of<'a>(args: Args<'a>, out: &mut Vec<u8>, fed: &mut Fed) -> Option<(Verb, Op<'a>)> {
    let name = args.get(0);
    // What a client asks of the connection or of the server's configuration, answered
    // here: redis-benchmark asks CONFIG GET at start, redis-cli's prompt COMMAND DOCS.
    if name.eq_ignore_ascii_case(b"CONFIG") || name.eq_ignore_ascii_case(b"COMMAND") {
        fed.requests += 1;
        out.extend_from_slice(b"*0\r\n");
        return None;
    }
    if name.eq_ignore_ascii_case(b"SELECT") && args.len() == 2 && args.get(1) == b"0" {
        fed.requests += 1;
        out.extend_from_slice(b"+OK\r\n");
        return None;
    }
    match command(name, args) {
        Ok(c) => Some(c),
        Err(why) => {
            (fed.requests, fed.errors) = (fed.requests + 1, fed.errors + 1);
            error(out, &why.to_string());
            None
        }
    }
}

/// Why redis refuses a command, each answered `-ERR` in redis's own words.
#[derive(Debug, Clone, Copy)]
enum Refusal<'a> {
    /// A command it knows, with a number of arguments it does not take.
    Arity { name: &'a [u8] },
    /// A command it does not know, and the arguments it came with.
    Unknown { name: &'a [u8], args: Args<'a> },
    /// An option it does not take, or one given twice.
    Syntax,
    /// An argument that should be a 64-bit integer.
    NotInteger,
    /// DECRBY's amount has no negation in 64 bits.
    DecrementOverflow,
    /// An expiry that is not positive or does not fit, in `command` (`set`, `expire`).
    ExpireTime { command: &'static str },
}

impl fmt::Display for Refusal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Arity { name } => write!(
                f,
                "wrong number of arguments for '{}' command",
                String::from_utf8_lossy(name).to_ascii_lowercase()
            ),
            Refusal::Unknown { name, args } => {
                write!(
                    f,
                    "unknown command '{}', with args beginning with: ",
                    String::from_utf8_lossy(name)
                )?;
                args.iter()
                    .skip(1)
                    .try_for_each(|a| write!(f, "'{}' ", String::from_utf8_lossy(a)))
            }
            Refusal::Syntax => f.write_str("syntax error"),
            Refusal::NotInteger => f.write_str("value is not an integer or out of range"),
            Refusal::DecrementOverflow => f.write_str("decrement would overflow"),
            Refusal::ExpireTime { command } => write!(f, "invalid expire time in '{command}' command"),
        }
    }
}

/// The op command `name` with `args` (the name first) asks for, or why it is refused.
fn command<'a>(name: &'a [u8], args: Args<'a>) -> Result<(Verb, Op<'a>), Refusal<'a>> {
    let mut buf = [0; 16];
    let upper = upper(name, &mut buf);
    let n = args.len();
    let wrong = || Err(Refusal::Arity { name });
    let key = || args.get(1);
    let int = |i: usize| integer(args.get(i));
    Ok(match upper {
        b"PING" if n <= 2 => (
            Verb::Ping,
            Op::Ping {
                echo: (n == 2).then(|| args.get(1)),
            },
        ),
        b"GET" if n == 2 => (
            Verb::Get,
            Op::Get {
                keys: args.from(1),
                first: true,
            },
        ),
        b"MGET" if n >= 2 => (
            Verb::MGet,
            Op::Get {
                keys: args.from(1),
                first: true,
            },
        ),
        b"SET" if n >= 3 => (Verb::Set, set(args)?),
        b"MSET" if n >= 3 && n % 2 == 1 => (Verb::MSet, Op::MSet { pairs: args.from(1) }),
        b"DEL" if n >= 2 => (Verb::Del, Op::Del { keys: args.from(1) }),
        b"EXISTS" if n >= 2 => (Verb::Exists, Op::Exists { keys: args.from(1) }),
        b"INCR" | b"DECR" if n == 2 => {
            let by = if upper == b"INCR" { 1 } else { -1 };
            (Verb::Incr, incr(key(), by))
        }
        b"INCRBY" if n == 3 => (Verb::Incr, incr(key(), int(2)?)),
        b"DECRBY" if n == 3 => {
            let by = int(2)?.checked_neg().ok_or(Refusal::DecrementOverflow)?;
            (Verb::Incr, incr(key(), by))
        }
        b"EXPIRE" if n == 3 => {
            let secs = int(2)?;
            // Seconds whose milliseconds, or whose time from now, do not fit in 64 bits are
            // refused, as redis 7 refuses them (either way: a time far past deletes nothing).
            let ms = secs.checked_mul(1000).filter(|ms| *ms <= i64::MAX - now_ms());
            if ms.is_none() {
                return Err(Refusal::ExpireTime { command: "expire" });
            }
            // A time already past deletes the key, as redis does.
            let ttl = Duration::from_secs(secs.max(0) as u64);
            (
                Verb::Expire,
                Op::Expire {
                    key: key(),
                    ttl: Some(ttl),
                },
            )
        }
        b"TTL" if n == 2 => (Verb::Ttl, Op::Ttl { key: key() }),
        b"DBSIZE" if n == 1 => (Verb::DbSize, Op::DbSize),
        b"FLUSHALL" if n == 1 => (Verb::FlushAll, Op::FlushAll),
        // Its one option says how (both flush at once here); anything else is refused, as
        // redis refuses it, before the store is touched.
        b"FLUSHALL" => match args.get(1) {
            how if n == 2 && (how.eq_ignore_ascii_case(b"ASYNC") || how.eq_ignore_ascii_case(b"SYNC")) => {
                (Verb::FlushAll, Op::FlushAll)
            }
            _ => return Err(Refusal::Syntax),
        },
        b"INFO" if n <= 2 => (Verb::Info, Op::Info),
        b"PING" | b"GET" | b"MGET" | b"SET" | b"MSET" | b"DEL" | b"EXISTS" | b"INCR" | b"DECR" | b"INCRBY"
        | b"DECRBY" | b"EXPIRE" | b"TTL" | b"DBSIZE" | b"INFO" => return wrong(),
        _ => return Err(Refusal::Unknown { name, args }),
    })
}

/// An integer argument as redis reads one, or its refusal.
fn integer(arg: &[u8]) -> Result<i64, Refusal<'static>> {
    crate::proto::keyed::integer(arg).ok_or(Refusal::NotInteger)
}

/// Milliseconds since the Unix epoch: the base redis adds an expiry to.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn incr(key: &[u8], by: i64) -> Op<'_> {
    Op::Incr {
        key,
        by,
        counting: Counting::Signed,
    }
}

/// `word` in upper case, in `buf` (no allocation on a command's path); a word too long for
/// `buf` as it is (no command or option is that long: it matches none either way).
fn upper<'a>(word: &'a [u8], buf: &'a mut [u8; 16]) -> &'a [u8] {
    match buf.get_mut(..word.len()) {
        Some(b) => {
            b.copy_from_slice(word);
            b.make_ascii_uppercase();
            b
        }
        None => word,
    }
}

/// SET key value [NX|XX] [EX seconds|PX milliseconds].
fn set(args: Args<'_>) -> Result<Op<'_>, Refusal<'static>> {
    let (mut when, mut ttl) = (When::Always, None);
    let mut i = 3;
    while i < args.len() {
        let mut buf = [0; 16];
        let opt = upper(args.get(i), &mut buf);
        match opt {
            b"NX" if when == When::Always => when = When::Absent,
            b"XX" if when == When::Always => when = When::Present,
            b"EX" | b"PX" if ttl.is_none() && i + 1 < args.len() => {
                i += 1;
                let n = integer(args.get(i))?;
                // Positive, and its time from now within 64 bits of milliseconds, as redis
                // checks it.
                let ms = match opt {
                    b"EX" => n.checked_mul(1000),
                    _ => Some(n),
                };
                if n <= 0 || ms.is_none_or(|ms| ms > i64::MAX - now_ms()) {
                    return Err(Refusal::ExpireTime { command: "set" });
                }
                ttl = Some(match opt {
                    b"EX" => Duration::from_secs(n as u64),
                    _ => Duration::from_millis(n as u64),
                });
            }
            _ => return Err(Refusal::Syntax),
        }
        i += 1;
    }
    Ok(Op::Set {
        key: args.get(1),
        value: args.get(2),
        flags: 0,
        ttl,
        when,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `words` as a command's arguments, refused: why.
    fn refusal(words: &[&str]) -> String {
        let buf: Vec<u8> = words.concat().into_bytes();
        let mut spans = Vec::new();
        let mut at = 0u32;
        for w in words {
            spans.push((at, at + w.len() as u32));
            at += w.len() as u32;
        }
        let args = Args::new(&buf, &spans);
        match command(args.get(0), args) {
            Ok(_) => panic!("{words:?} was not refused"),
            Err(r) => format!("{:?}|{r}", std::mem::discriminant(&r)),
        }
    }

    /// Each refusal is its own variant, and says what redis says for it.
    #[test]
    fn each_refused_command_is_its_own_kind_in_redis_words() {
        let cases: [(&[&str], &str); 7] = [
            (&["GET"], "wrong number of arguments for 'get' command"),
            (
                &["FOO", "a", "b"],
                "unknown command 'FOO', with args beginning with: 'a' 'b' ",
            ),
            (&["SET", "k", "v", "NX", "NX"], "syntax error"),
            (&["INCRBY", "k", "x"], "value is not an integer or out of range"),
            (&["DECRBY", "k", "-9223372036854775808"], "decrement would overflow"),
            (&["SET", "k", "v", "EX", "0"], "invalid expire time in 'set' command"),
            (
                &["EXPIRE", "k", "9223372036854775807"],
                "invalid expire time in 'expire' command",
            ),
        ];
        let mut kinds = std::collections::BTreeSet::new();
        for (words, said) in cases {
            let got = refusal(words);
            let (kind, text) = got.split_once('|').unwrap();
            assert_eq!(text, said, "{words:?}");
            kinds.insert(kind.to_string());
        }
        // The two expiry refusals are one kind with the command named: six kinds.
        assert_eq!(kinds.len(), 6, "{kinds:?}");
        assert!(matches!(
            command(b"GET", Args::new(b"GET", &[(0, 3)])),
            Err(Refusal::Arity { name: b"GET" })
        ));
    }
}
