//! Keyed commands answered later: a command the hook hands to another thread (a shard's
//! owner, an executor) leaves a slot in its session's output, and the replies after it wait
//! behind it, so they go in order. The other thread encodes the answer in the session's
//! protocol ([`Form`]) and posts it back; the session fills the slot ([`Slots::fill`]) and
//! what is answered from the front goes out.

use std::collections::VecDeque;

use crate::proto::Each;

/// The most commands a connection has answered later and not sent (past it, it reads no
/// more until answers come).
pub(crate) const MAX_WAITING: usize = 256;

/// Where a session's replies go: its output, or behind the last slot still waiting.
pub(crate) struct Sink<'o> {
    out: &'o mut Vec<u8>,
    slots: Option<&'o mut Slots>,
}

impl<'o> Sink<'o> {
    /// Replies to `out`, behind `slots` while any waits.
    pub(crate) fn new(out: &'o mut Vec<u8>, slots: &'o mut Slots) -> Sink<'o> {
        Sink {
            out,
            slots: Some(slots),
        }
    }

    /// Replies to `out` alone (another thread's encoding of an answer).
    pub(crate) fn plain(out: &'o mut Vec<u8>) -> Sink<'o> {
        Sink { out, slots: None }
    }

    /// Where the next reply goes.
    #[inline]
    pub(crate) fn buf(&mut self) -> &mut Vec<u8> {
        match self.slots.as_deref_mut().and_then(|s| s.q.back_mut()) {
            Some(last) => &mut last.after,
            None => self.out,
        }
    }

    /// No answer is owed.
    pub(crate) fn settled(&self) -> bool {
        self.slots.as_deref().is_none_or(Slots::is_empty)
    }

    /// Answers owed reach [`MAX_WAITING`]: no more may be asked for.
    pub(crate) fn owed_full(&self) -> bool {
        self.slots.as_deref().is_some_and(|s| s.len() >= MAX_WAITING)
    }

    /// Bytes of replies not sent: the output's and those behind slots.
    pub(crate) fn len(&self) -> usize {
        self.out.len() + self.slots.as_deref().map_or(0, Slots::held)
    }

    /// An answer comes later under `ticket`: what is written next goes behind it.
    pub(crate) fn later(&mut self, ticket: u64) {
        if let Some(s) = self.slots.as_deref_mut() {
            s.pushed += 1;
            s.q.push_back(Slot {
                ticket,
                answer: None,
                after: Vec::new(),
                ends: false,
            });
        }
    }

    /// Slots opened so far (it changes when a command leaves one).
    pub(crate) fn pushed(&self) -> u64 {
        self.slots.as_deref().map_or(0, |s| s.pushed)
    }

    /// The command just run is over: counted in `fed` now when it opened no slot (none more
    /// than `pushed_before`), else once its last slot goes out.
    pub(crate) fn command_ran(&mut self, pushed_before: u64, fed: &mut crate::proto::Fed) {
        if self.pushed() == pushed_before {
            fed.requests += 1;
        } else if let Some(last) = self.slots.as_deref_mut().and_then(|s| s.q.back_mut()) {
            last.ends = true;
        }
    }
}

/// The answers a session waits for, in order, each with the replies written behind it.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    q: VecDeque<Slot>,
    /// Slots ever opened.
    pushed: u64,
}

#[derive(Debug)]
struct Slot {
    ticket: u64,
    answer: Option<Vec<u8>>,
    after: Vec<u8>,
    /// The last slot of its command: the command is answered when it goes.
    ends: bool,
}

impl Slots {
    /// Answers still waited for, or answered behind one that is.
    pub(crate) fn len(&self) -> usize {
        self.q.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// The session must stop taking commands until an answer comes: it owes
    /// [`MAX_WAITING`], or what waits behind them (with `out`'s bytes) fills its bound.
    pub(crate) fn full<F: Each + ?Sized>(&self, out: usize, each: &F) -> bool {
        !self.is_empty() && (self.len() >= MAX_WAITING || each.room(out + self.held()) == 0)
    }

    /// The answer of `ticket`, if `each` brought it, fills its slot, and what is answered
    /// from the front goes to `out`: the commands that ended.
    pub(crate) fn answer<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> u64 {
        match each.answer(ticket).is_some_and(|answer| self.fill(ticket, answer)) {
            true => self.flush(out),
            false => 0,
        }
    }

    /// Bytes held behind slots.
    pub(crate) fn held(&self) -> usize {
        self.q
            .iter()
            .map(|s| s.after.len() + s.answer.as_ref().map_or(0, Vec::len))
            .sum()
    }

    /// The answer of `ticket` came: whether it was waited for (a connection that closed, or
    /// a number reused since, waits for no such ticket).
    pub(crate) fn fill(&mut self, ticket: u64, answer: Vec<u8>) -> bool {
        match self.q.iter_mut().find(|s| s.ticket == ticket && s.answer.is_none()) {
            Some(s) => {
                s.answer = Some(answer);
                true
            }
            None => false,
        }
    }

    /// Moves what is answered, from the front, to `out`: the commands that ended.
    pub(crate) fn flush(&mut self, out: &mut Vec<u8>) -> u64 {
        let mut ended = 0;
        while self.q.front().is_some_and(|s| s.answer.is_some()) {
            let s = self.q.pop_front().expect("a front");
            out.extend_from_slice(&s.answer.expect("answered"));
            out.extend_from_slice(&s.after);
            ended += u64::from(s.ends);
        }
        ended
    }

    /// Where a reply written now goes: behind the last slot, or to `out`.
    pub(crate) fn tail<'a>(&'a mut self, out: &'a mut Vec<u8>) -> &'a mut Vec<u8> {
        match self.q.back_mut() {
            Some(last) => &mut last.after,
            None => out,
        }
    }
}
