//! What every keyed session (RESP, memcache) keeps beside its protocol's own parse state: the
//! input not run yet, the answers other threads owe and the replies behind them, and why it
//! stopped taking commands. Each protocol frames and runs its commands; this decides, the same
//! for both, when the next one may run and when a close may go out.

use super::{Input, Slots};
use crate::proto::{Each, Fed};

/// A keyed session's shared state.
#[derive(Debug, Default)]
pub(crate) struct Core {
    /// Input not run yet, and the spans of the command being run.
    pub(crate) input: Input,
    /// Answers other threads owe, in order, with the replies behind them.
    pub(crate) slots: Slots,
    /// Keys of the read being answered (GET, MGET, get) already answered: it stopped at the
    /// bound on output.
    pub(crate) answered: u32,
    /// The stream cannot go on (or the client quit): nothing more is read.
    pub(crate) closed: bool,
    /// Stopped at the bound on output with commands still to run.
    holding: bool,
    /// Stopped for answers owed: it takes no more until one comes.
    waiting: bool,
}

impl Core {
    /// It holds input, or the front answer came in part and its rest is to be asked, until
    /// the output drains: it is fed again then.
    pub(crate) fn holding(&self) -> bool {
        self.holding || self.slots.front_waits()
    }

    /// Bytes of input held, not run yet.
    pub(crate) fn behind(&self) -> usize {
        self.input.behind()
    }

    /// Answers are owed by other threads.
    pub(crate) fn owes(&self) -> bool {
        !self.slots.is_empty()
    }

    /// It takes no more input until an answer owed comes (or, closing, at all).
    pub(crate) fn paused(&self) -> bool {
        self.waiting || (self.closed && !self.slots.is_empty())
    }

    /// Gives up the buffers a burst grew: the bytes given up.
    pub(crate) fn trim(&mut self) -> usize {
        self.input.trim()
    }

    /// A feed begins with `input`: `false` once the session is closed (nothing is taken).
    pub(crate) fn begin(&mut self, input: &[u8]) -> bool {
        if self.closed {
            return false;
        }
        self.input.buf.extend_from_slice(input);
        (self.holding, self.waiting) = (false, false);
        true
    }

    /// Whether the next command may run now: not while the connection owes as many answers
    /// as it may, or what waits behind them fills its bound (it waits for an answer), nor
    /// while the output is at its bound (it holds until the output drains).
    pub(crate) fn may_run<F: Each + ?Sized>(&mut self, out: usize, each: &F) -> bool {
        if self.slots.full(out, each) {
            self.waiting = true;
        } else if each.room(out) == 0 {
            self.holding = true;
        }
        !self.waiting && !self.holding
    }

    /// A read of many keys stopped at the bound on output.
    pub(crate) fn hold(&mut self) {
        self.holding = true;
    }

    /// A command must wait for the answers owed.
    pub(crate) fn wait(&mut self) {
        self.waiting = true;
    }

    /// The feed ends: the input's front dropped once run, and a close it asks for held until
    /// the answers owed have gone.
    pub(crate) fn end(&mut self, mut fed: Fed) -> Fed {
        self.input.compact();
        fed.close &= self.slots.is_empty();
        fed
    }

    /// The answer of `ticket`, if `each` brought it, goes out in its place: the commands that
    /// ended with it.
    pub(crate) fn answer<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> u64 {
        self.slots.answer(ticket, out, each)
    }
}

/// A keyed protocol's framing: what the one feed loop ([`feed`]) asks of each protocol.
/// RESP and memcache implement it in their own folders, each beside its own `Protocol`,
/// whose answers are its [`Core`]'s.
pub(crate) trait Framing: std::fmt::Debug {
    /// The core, for tests that look inside.
    #[cfg(test)]
    fn core(&self) -> &Core;

    fn core_mut(&mut self) -> &mut Core;

    /// Drops what is left of a command past a bound, as far as the input goes: `false` while
    /// some is left (or the stream broke inside it: its error written, the close asked).
    fn skipped(&mut self, out: &mut Vec<u8>, fed: &mut Fed) -> bool;

    /// Parses and runs the next command (or answers its error): `false` when the feed stops
    /// here (not all of it has come, it stopped at a bound, the stream broke).
    fn next<F: Each + ?Sized>(&mut self, out: &mut Vec<u8>, each: &mut F, fed: &mut Fed) -> bool;
}

/// Takes `input`, running what commands it can through `each` into `out`, the same for every
/// keyed protocol: none once closed, none past the bounds ([`Core::may_run`]), and a close
/// held until the answers owed have gone ([`Core::end`]).
pub(crate) fn feed<S: Framing, F: Each + ?Sized>(s: &mut S, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
    let mut fed = Fed::default();
    // The rest of an answer built elsewhere first: it goes out before anything after it.
    s.core_mut().slots.resume(out.len(), each);
    if !s.core_mut().begin(input) {
        fed.close = true;
        return s.core_mut().end(fed);
    }
    while s.skipped(out, &mut fed)
        && s.core_mut().input.ready()
        && s.core_mut().may_run(out.len(), each)
        && s.next(out, each, &mut fed)
    {}
    s.core_mut().end(fed)
}

/// The answer of `ticket` came (through `each`): it goes out in its place, with what waited
/// behind it, and the input held goes on.
pub(crate) fn complete<S: Framing, F: Each + ?Sized>(s: &mut S, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed {
    let ended = s.core_mut().answer(ticket, out, each);
    let mut fed = feed(s, &[], out, each);
    fed.requests += ended;
    fed
}
