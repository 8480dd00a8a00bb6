//! Keyed state's commands as RESP and memcache carry them, in one protocol-free form: what a
//! session hands its hook ([`super::Each::command`]), and the replies a store gives back
//! through the session's encoder ([`Replies`]), so a value goes from the table to the output
//! without a copy in between.
//!
//! A protocol parses its command into an [`Op`] (RESP's `SET k v NX EX 10` and memcache's
//! `add k 0 10 1` are the same op), the hook runs it against the design's store, and the
//! store answers with [`Replies`] calls the session encodes in its own protocol.

mod later;
mod owned;
mod session;

pub use later::Form;
#[cfg(test)]
pub(crate) use later::MAX_WAITING;
pub(crate) use later::{Sink, Slots};
pub use owned::OwnedOp;
pub(crate) use session::{complete, feed, Core, Framing};

use std::time::Duration;

/// Arguments of a command as they sit in the session's input: spans of `buf`.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    buf: &'a [u8],
    spans: &'a [(u32, u32)],
}

impl<'a> Args<'a> {
    /// The arguments at `spans` (start, end) of `buf`.
    pub fn new(buf: &'a [u8], spans: &'a [(u32, u32)]) -> Args<'a> {
        Args { buf, spans }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Argument `i`.
    pub fn get(&self, i: usize) -> &'a [u8] {
        let (a, b) = self.spans[i];
        &self.buf[a as usize..b as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The first `n` of these.
    pub fn take(&self, n: usize) -> Args<'a> {
        Args {
            buf: self.buf,
            spans: &self.spans[..n.min(self.spans.len())],
        }
    }

    /// Arguments `from..` of these.
    pub fn from(&self, from: usize) -> Args<'a> {
        Args {
            buf: self.buf,
            spans: &self.spans[from.min(self.spans.len())..],
        }
    }
}

/// A keyed session's input (RESP's, memcache's): the bytes not run yet, from `pos` on, and
/// the spans of the command being run. The sessions parse it; this keeps it from growing.
///
/// A parse that stops for want of bytes says how many it needs ([`Input::wait`]) and how far
/// it searched for a line's end ([`Input::line`]), so a command trickled in a byte at a time
/// is parsed once, not once per read (which would cost time quadratic in its length).
#[derive(Debug, Default)]
pub(crate) struct Input {
    pub(crate) buf: Vec<u8>,
    pub(crate) pos: usize,
    pub(crate) spans: Vec<(u32, u32)>,
    /// Bytes from `pos` the parse needs before it can get further.
    need: usize,
    /// Bytes from `pos` already searched for a line's end.
    seen: usize,
    /// The parse's work, in bytes searched for a line's end and bulk headers read (tests
    /// check that it grows with the input, not with its square).
    #[cfg(test)]
    pub(crate) looked: usize,
}

impl Input {
    /// Bytes not run yet.
    pub(crate) fn behind(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The arguments in `spans`.
    pub(crate) fn args(&self) -> Args<'_> {
        Args::new(&self.buf, &self.spans)
    }

    /// Gives up the buffers a burst grew, once idle: the bytes given up.
    pub(crate) fn trim(&mut self) -> usize {
        super::shed(&mut self.buf, 4096) + super::shed_spans(&mut self.spans)
    }

    /// The command ends at `end`: what follows is next, parsed afresh.
    pub(crate) fn to(&mut self, end: usize) {
        self.pos = end;
        self.spans.clear();
        (self.need, self.seen) = (0, 0);
    }

    /// Whether there is input and as much of it as the last parse said it needs.
    pub(crate) fn ready(&self) -> bool {
        self.behind() > 0 && self.behind() >= self.need
    }

    /// The parse needs `n` bytes from `pos` before it can get further.
    pub(crate) fn wait(&mut self, n: usize) {
        self.need = n;
    }

    /// Where the line at `pos` ends (its `\n`, from `pos`), searching only what was not
    /// searched before: `None` while it has not come, an error past `max` bytes.
    pub(crate) fn line(&mut self, max: usize) -> Result<Option<usize>, ()> {
        let b = &self.buf[self.pos..];
        let from = self.seen.min(b.len());
        #[cfg(test)]
        {
            self.looked += b.len() - from;
        }
        match b[from..]
            .iter()
            .take((max + 1).saturating_sub(from))
            .position(|&c| c == b'\n')
        {
            Some(i) => Ok(Some(from + i)),
            None if b.len() > max => Err(()),
            None => {
                self.seen = b.len();
                self.need = b.len() + 1;
                Ok(None)
            }
        }
    }

    /// Drops what was run: all of it at once, or the front once it is most of a large buffer
    /// (the spans of a command parsed in part move with it).
    pub(crate) fn compact(&mut self) {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 64 * 1024 && self.pos > self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            let d = self.pos as u32;
            for s in &mut self.spans {
                (s.0, s.1) = (s.0 - d, s.1 - d);
            }
            self.pos = 0;
        }
    }
}

/// Writes `n` in decimal, with no allocation (replies are on every command's path).
pub(crate) fn decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// When a write applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    /// Only if the key is absent (RESP's NX, memcache's `add`).
    Absent,
    /// Only if it is present (RESP's XX, memcache's `replace`).
    Present,
}

/// What an increment does where RESP and memcache differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// RESP: a missing key counts from 0; a signed 64-bit result, overflow an error.
    Signed,
    /// memcache: a missing key is not found; unsigned 64-bit, incr wraps, decr (`down`)
    /// stops at 0. The delta is unsigned too: `by` holds its bits.
    Unsigned { down: bool },
}

/// One command, as the store runs it.
#[derive(Debug, Clone, Copy)]
pub enum Op<'a> {
    /// PING, with the message it says back, if any.
    Ping {
        echo: Option<&'a [u8]>,
    },
    /// The values of `keys` (RESP's GET and MGET, memcache's get and gets); `first`: this
    /// call begins the command (a read of many keys that stopped at the bound on output goes
    /// on with its other keys in another call).
    Get {
        keys: Args<'a>,
        first: bool,
    },
    Set {
        key: &'a [u8],
        value: &'a [u8],
        /// memcache's client flags (0 under RESP).
        flags: u32,
        /// Expires this long from now; `None`: never (RESP's SET drops an old TTL too).
        ttl: Option<Duration>,
        when: When,
    },
    /// Sets every (key, value) pair of `pairs`, all at once.
    MSet {
        pairs: Args<'a>,
    },
    Del {
        keys: Args<'a>,
    },
    Exists {
        keys: Args<'a>,
    },
    Incr {
        key: &'a [u8],
        by: i64,
        counting: Counting,
    },
    /// A new lifetime for `key` (RESP's EXPIRE, memcache's touch): `ttl` from now, or
    /// none (memcache's 0: never expires).
    Expire {
        key: &'a [u8],
        ttl: Option<Duration>,
    },
    /// Seconds `key` has left.
    Ttl {
        key: &'a [u8],
    },
    DbSize,
    FlushAll,
    /// INFO's keyspace section.
    Info,
}

impl Op<'_> {
    /// The kind counted in the server's stats.
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Get { .. } => OpKind::Get,
            Op::Set { .. } | Op::MSet { .. } => OpKind::Set,
            Op::Del { .. } => OpKind::Del,
            Op::Incr { .. } => OpKind::Incr,
            _ => OpKind::Other,
        }
    }
}

/// The kinds of command a server counts apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Get,
    Set,
    Del,
    Incr,
    Other,
}

/// A stored value as a reply carries it.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    pub value: &'a [u8],
    pub flags: u32,
    /// Its version (memcache's `gets` shows it): changes with every write.
    pub cas: u64,
}

/// Why a command failed (each protocol words it its own way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyedError {
    /// The value is not an integer (INCR on "abc").
    NotInteger,
    /// The increment would overflow.
    Overflow,
    /// The server keeps no keyed state (a hook without a store).
    NoStore,
    /// The value alone is past the store's bound (`--max-memory`, its share of it).
    OutOfMemory,
}

/// How a store answers a command: the session encodes each call in its protocol (it knows
/// which command it asked).
pub trait Replies {
    /// The value of one key asked for (`None`: missing or expired).
    fn value(&mut self, key: &[u8], item: Option<Item<'_>>);
    /// A number: a count (DEL, EXISTS, DBSIZE), an increment's result, a TTL.
    fn int(&mut self, n: i64);
    /// Whether a write or an expiry applied.
    fn done(&mut self, applied: bool);
    fn error(&mut self, e: KeyedError);
    /// Text (INFO).
    fn text(&mut self, text: &str);
    /// The output has reached the bound on it (`--max-output`): a read of many keys stops
    /// here, after one key at least, and goes on once the output has drained.
    fn full(&self) -> bool {
        false
    }
    /// How the session encodes this command's replies, for a thread that runs it elsewhere
    /// ([`Form::encode`]); `None`: it cannot be answered later.
    fn form(&self) -> Option<Form> {
        None
    }
    /// No answer of the connection's is owed by another thread.
    fn settled(&self) -> bool {
        true
    }
    /// Part of the answer comes later, under `ticket` (the hook handed the command, or some
    /// of its keys, to another thread): what is written next goes behind it.
    fn later(&mut self, ticket: u64) {
        let _ = ticket;
    }
}

/// What running one command found, for the server's stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Keys read that were there, and those that were not.
    pub hits: u32,
    pub misses: u32,
    pub error: bool,
    /// A read of many keys: how many of them it answered before the output was full.
    pub answered: u32,
    /// Keys the store dropped while it ran: past their time (touched, or swept), and
    /// evicted to stay within its bounds.
    pub expired: u32,
    pub evicted: u32,
    /// It did not run: it must wait until the connection's answers owed by other threads
    /// have come (a command of many keys run here must not overtake them).
    pub wait: bool,
}

impl Outcome {
    /// Adds what another part of the same command found (a stripe's, a shard's): its keys
    /// found and not, dropped and evicted (how many it answered stays the caller's).
    pub fn add(&mut self, part: Outcome) {
        self.hits += part.hits;
        self.misses += part.misses;
        self.expired += part.expired;
        self.evicted += part.evicted;
        self.error |= part.error;
    }
}
