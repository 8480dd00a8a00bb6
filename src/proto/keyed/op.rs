//! One command, as the store runs it ([`Op`]), with its arguments as they sit in the
//! session's input ([`Args`]): what RESP and memcache each parse their commands into.

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
