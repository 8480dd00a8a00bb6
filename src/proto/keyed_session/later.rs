//! Keyed commands answered later: a command the hook hands to another thread (a shard's
//! owner, an executor) leaves a slot in its session's output, and the replies after it wait
//! behind it, so they go in order. The other thread encodes the answer in the session's
//! protocol ([`Form`](super::Form)), as far as the connection's room lets it
//! ([`Room`]), and posts it back; the session fills the slot ([`Slots::fill`]) and what is
//! answered from the front goes out. An answer that stopped at the room comes in pieces:
//! what was built goes out, and the thread that holds the rest is asked again
//! ([`Again`]) once the answer is the next the client reads and the output has room (or
//! the client has read everything before it).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::proto::keyed::{Again, Answered, Draw, Room};
use crate::proto::Each;

/// The most commands a connection has answered later and not sent (past it, it reads no
/// more until answers come).
pub(crate) const MAX_WAITING: usize = 256;

/// Where a session's replies go: its output, or behind the last slot still waiting; or, on
/// another thread building an answer, its buffer, drawing from the connection's room.
pub(crate) struct Sink<'o> {
    out: &'o mut Vec<u8>,
    slots: Option<&'o mut Slots>,
    draw: Option<&'o mut Draw>,
}

impl<'o> Sink<'o> {
    /// Replies to `out`, behind `slots` while any waits.
    pub(crate) fn new(out: &'o mut Vec<u8>, slots: &'o mut Slots) -> Sink<'o> {
        Sink {
            out,
            slots: Some(slots),
            draw: None,
        }
    }

    /// Replies to `out` alone (another thread's encoding of an answer), each value drawn
    /// from `draw`'s room first (none: as it comes).
    pub(crate) fn drawing(out: &'o mut Vec<u8>, draw: Option<&'o mut Draw>) -> Sink<'o> {
        Sink { out, slots: None, draw }
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

    /// Bytes of replies not sent: the output's, those behind slots, and those other threads
    /// are building.
    pub(crate) fn len(&self) -> usize {
        self.out.len() + self.slots.as_deref().map_or(0, Slots::held)
    }

    /// Whether the output has reached `limit` (or the answers owed their most): the room
    /// left is published first, for the threads building this connection's answers.
    pub(crate) fn full(&self, limit: usize) -> bool {
        let out = self.out.len();
        let held = self
            .slots
            .as_deref()
            .map_or(out, |s| s.pending(out, |p| limit.saturating_sub(p)));
        held >= limit || self.owed_full()
    }

    /// Whether a value of `key`, `len` bytes, may be written now: always, here (the bound
    /// is checked between values); on another thread, if the connection's room has it.
    pub(crate) fn fits(&mut self, key: &[u8], len: usize) -> bool {
        self.draw.as_deref_mut().is_none_or(|d| d.fits(key, len))
    }

    /// An answer comes later under `ticket`, the command holding `cost` bytes on the thread
    /// that answers it until then: what is written next goes behind it. The connection's
    /// room, whose output may grow to `limit`: the thread that builds the answer draws from
    /// it.
    pub(crate) fn later(&mut self, ticket: u64, limit: usize, cost: usize) -> Option<Arc<Room>> {
        let here = self.out.len();
        let s = self.slots.as_deref_mut()?;
        s.pushed += 1;
        s.q.push_back(Slot {
            ticket,
            got: Vec::new(),
            asked: true,
            parked: None,
            cost,
            done: false,
            after: Vec::new(),
            ends: false,
        });
        let room = s.room.get_or_insert_with(Arc::default).clone();
        s.publish(limit.saturating_sub(here + s.behind()));
        Some(room)
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
    /// The connection's room, shared with the threads building its answers (from its first
    /// answer owed on).
    room: Option<Arc<Room>>,
}

#[derive(Debug)]
struct Slot {
    ticket: u64,
    /// The answer's bytes that came and have not gone out.
    got: Vec<u8>,
    /// Its thread is building (the rest of) the answer.
    asked: bool,
    /// The answer came in part: the thread that holds its rest, to ask once it is the next
    /// the client reads.
    parked: Option<usize>,
    /// Bytes of the command held on the thread that answers it, until the whole answer came
    /// (a write's value; a read's keys): counted as held, so a client that never reads
    /// cannot leave more there than its bound.
    cost: usize,
    /// The whole answer came.
    done: bool,
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
    /// [`MAX_WAITING`], or what waits behind them and is being built for them (with `out`'s
    /// bytes) fills its bound.
    pub(crate) fn full<F: Each + ?Sized>(&self, out: usize, each: &F) -> bool {
        let held = self.pending(out, |p| each.room(p));
        !self.is_empty() && (self.len() >= MAX_WAITING || each.room(held) == 0)
    }

    /// All a connection holds with `out` bytes of output: those, what waits behind slots and
    /// what other threads are building. The threads building are told first the room the
    /// rest leaves (`room` of the bytes here).
    fn pending(&self, out: usize, room: impl Fn(usize) -> usize) -> usize {
        let here = out + self.behind();
        here + self.publish(room(here))
    }

    /// The output went (all of it), under `bound`: the threads building answers are told the
    /// room it left, beside what waits behind slots.
    pub(crate) fn drained(&self, bound: usize) {
        self.publish(bound.saturating_sub(self.behind()));
    }

    /// Tells the threads building answers that the output has `room` left: the bytes they
    /// hold (none before the first answer owed).
    fn publish(&self, room: usize) -> usize {
        self.room.as_deref().map_or(0, |r| r.publish(room))
    }

    /// The answer of `ticket`, if `each` brought it, fills its slot, and what is answered
    /// from the front goes to `out`: the commands that ended.
    pub(crate) fn answer<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> u64 {
        match each.answer(ticket).is_some_and(|answer| self.fill(ticket, answer)) {
            true => self.flush(out),
            false => 0,
        }
    }

    /// Bytes held: behind slots, and being built on other threads.
    pub(crate) fn held(&self) -> usize {
        self.behind() + self.room.as_deref().map_or(0, Room::in_flight)
    }

    /// Bytes held behind slots, and of the commands held on the threads that answer them.
    fn behind(&self) -> usize {
        self.q.iter().map(|s| s.after.len() + s.got.len() + s.cost).sum()
    }

    /// The answer of `ticket` came (all of it, or a piece, the thread that sent it holding
    /// the rest): whether it was waited for (a connection that closed, or a number reused
    /// since, waits for no such ticket).
    pub(crate) fn fill(&mut self, ticket: u64, answer: Answered) -> bool {
        let Some(s) = self.q.iter_mut().find(|s| s.ticket == ticket && s.asked) else {
            return false;
        };
        if let Some(room) = self.room.as_deref() {
            room.received(answer.bytes.len());
        }
        match s.got.is_empty() {
            true => s.got = answer.bytes,
            false => s.got.extend_from_slice(&answer.bytes),
        }
        s.asked = false;
        s.done = answer.more.is_none();
        s.parked = answer.more;
        if s.done {
            s.cost = 0;
        }
        true
    }

    /// Moves what is answered, from the front, to `out` (the front's piece, if that is all
    /// that came): the commands that ended.
    pub(crate) fn flush(&mut self, out: &mut Vec<u8>) -> u64 {
        let mut ended = 0;
        while let Some(s) = self.q.front_mut() {
            out.append(&mut s.got);
            if !s.done {
                break;
            }
            let s = self.q.pop_front().expect("a front");
            out.extend_from_slice(&s.after);
            ended += u64::from(s.ends);
        }
        ended
    }

    /// The front's answer came in part and its rest waits to be asked.
    pub(crate) fn front_waits(&self) -> bool {
        self.q.front().is_some_and(|s| s.parked.is_some() && !s.asked)
    }

    /// Asks the rest of the front's answer again through `each`, once the client has read
    /// all that went before it (`out` and what `each` holds beyond it are empty: it must
    /// move, whatever waits behind it) or the output has room: `true` if it did.
    pub(crate) fn resume<F: Each + ?Sized>(&mut self, out: usize, each: &mut F) -> bool {
        if !self.front_waits() {
            return false;
        }
        if !(out == 0 && each.sent_all()) && each.room(self.pending(out, |p| each.room(p))) == 0 {
            return false;
        }
        let room = self.room.clone().expect("a slot opened the room");
        let s = self.q.front_mut().expect("a front");
        s.asked = true;
        let to = s.parked.take().expect("parked");
        each.again(Again {
            ticket: s.ticket,
            to,
            room,
        });
        true
    }

    /// Where a reply written now goes: behind the last slot, or to `out`.
    pub(crate) fn tail<'a>(&'a mut self, out: &'a mut Vec<u8>) -> &'a mut Vec<u8> {
        match self.q.back_mut() {
            Some(last) => &mut last.after,
            None => out,
        }
    }
}

impl Drop for Slots {
    /// The connection is gone: the threads holding rests of its answers may drop them.
    fn drop(&mut self) {
        if let Some(room) = self.room.as_deref() {
            room.close();
        }
    }
}
