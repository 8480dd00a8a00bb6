//! How a store answers a command: the calls a session encodes in its protocol ([`Replies`]),
//! the items and errors they carry, and what running the command found ([`Outcome`]).

use super::form::Form;

/// An integer as redis reads one (`string2ll`): an optional `-`, then digits with no leading
/// zero (`0` alone), within 64 bits; no `+`, no space, no `-0`. RESP's lengths, INCR's stored
/// values and every integer argument are read so.
pub(crate) fn integer(s: &[u8]) -> Option<i64> {
    if s == b"0" {
        return Some(0);
    }
    let digits = s.strip_prefix(b"-").unwrap_or(s);
    if !matches!(digits.first(), Some(b'1'..=b'9')) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
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
    /// Whether the value of `key`, `len` bytes (0: missing), may be written now: always
    /// where the bound is checked between values ([`Replies::full`]); on another thread
    /// building an answer, if the connection's room has it (a read stops before it if not).
    fn fits(&mut self, key: &[u8], len: usize) -> bool {
        let _ = (key, len);
        true
    }
    /// How the session encodes this command's replies, for a thread that runs it elsewhere
    /// ([`super::encode`]); `None`: it cannot be answered later.
    fn form(&self) -> Option<Form> {
        None
    }
    /// No answer of the connection's is owed by another thread.
    fn settled(&self) -> bool {
        true
    }
    /// Part of the answer comes later, under `ticket` (the hook handed the command, or some
    /// of its keys, to another thread, holding `cost` bytes of it there until it is
    /// answered): what is written next goes behind it. The connection's room, which the
    /// thread building the answer draws from (`None`: it cannot be answered later).
    fn later(&mut self, ticket: u64, cost: usize) -> Option<std::sync::Arc<super::Room>> {
        let _ = (ticket, cost);
        None
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
