//! One connection's life, sans I/O: what every wiring (the event loops and queue-pool, the
//! blocking models, uring, tokio) steps, each doing only its own reads, writes and waiting.
//!
//! A [`Connection`] owns its protocol session, its output and the output bound, its deadlines
//! (idle, send, header), idle shedding, the wake-up its later responses need (due events, a
//! pool's completions, cancellations), reading back-pressure and its close. A wiring tells it
//! what happened — bytes in ([`Connection::input`]), bytes the wire took
//! ([`Connection::wrote`], or a ring's [`Connection::send_done`]), a completion
//! ([`Connection::complete`]), its timer ([`Connection::handle_timeout`]) — and asks what to
//! do next ([`Connection::next`]: send [`Connection::output`], read, wait for nothing, close),
//! ending each wake-up with [`Connection::settle`] (one useful event counted, shedding
//! re-armed) and asking when its timer must come ([`Connection::timer`]).
//!
//! Time reaches it through that one channel, as quinn-proto's connections do: its header,
//! idle, send and window deadlines, giving back an idle spell's buffers and a later
//! response's pieces are all its own timeouts ([`Connection::poll_timeout`]), and a wiring
//! arms one timer for the earliest. A connection that sits idle costs nothing until then: no
//! sweep visits it. The deadline state is private to this module: a wiring can only arm the
//! timer and hand it back.
//!
//! It never reads or writes a socket, nor cancels the server's pool work itself (the
//! per-request hook hands work to the pool): what it wants done beside its I/O comes back as
//! events ([`Connection::poll_event`]: work to cancel, buffers given back), and what
//! reaches the wire goes through sends handed in — `early`, which the per-request hook gives
//! the replies so far before a request's work (a response never waits for the work of the
//! requests after it; never while output is pending, which it would overtake), and the
//! best-effort write of its parting words (a last word such as HTTP's 408 among them).
//! [`wire`] holds those pieces, written once for every wiring.
//!
//! The rules, in the order [`Connection::next`] applies them:
//! - unsent output goes first, and while it waits for the client nothing is read
//!   (back-pressure; within one read the session stops at the bound itself);
//! - a send in flight (a ring's) lets input in under the bound less its bytes, but nothing else
//!   goes on until it completes;
//! - a close the session asked for comes once the output has gone;
//! - later responses' pieces due by now are written, then what the session held back at the
//!   bound is fed again;
//! - a response owed later with input behind it ([`Session::paused`]): nothing is read (the
//!   client's further requests wait in TCP), and the wake-up is the response's own.

mod deadline;
mod events;
mod idle;
mod timer;
pub(crate) mod wire;

use crate::proto::Protocol;
use std::time::Instant;

use self::deadline::{Deadlines, Expired};
use self::events::Asks;
use self::idle::Shed;
use self::timer::Held;
use super::request::hook::{self, Later, Origin};
use super::Counter;
use super::Worker;
use crate::proto::Session;

/// What a connection asks of its wiring next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Write [`Connection::output`] and say how much went ([`Connection::wrote`]), or hand
    /// it to a send ([`Connection::take_output`], then [`Connection::send_done`]).
    Send,
    /// Read, and hand what came to [`Connection::input`].
    Read,
    /// A response is owed later and input waits behind it: read nothing. Its wake-up is a
    /// completion or its timer ([`Connection::timer`]); a socket watched for nothing that wakes has an
    /// error or a hang-up.
    Pending,
    /// A send is in flight that must complete before anything else goes (a ring's).
    Sending,
    /// Done: close it.
    Close,
}

/// What a connection asks its wiring to do beside its I/O ([`Connection::poll_event`];
/// [`wire::perform`] does it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The responses of these tickets will never be written (their streams were reset, or the
    /// connection is closing): the server's pool drops their work.
    Cancel(Vec<u64>),
    /// It gave back the buffers an idle spell does not need: the wiring gives back its own
    /// (a connection's read buffer) and returns freed pages to the kernel.
    Shed,
}

/// What moved in one wake-up, for [`Connection::settle`].
#[derive(Debug, Default, Clone, Copy)]
struct Moved {
    /// Anything: one useful event.
    any: bool,
    /// Output progressed on its own: later responses' pieces or a completion's response.
    output: bool,
}

/// One connection, whatever drives it.
pub struct Connection {
    /// What its wiring knows it by: a pool's completion names it ([`crate::server::Job`]).
    token: u64,
    session: Session,
    /// Output not yet taken by the wire, from `sent` on.
    out: Vec<u8>,
    sent: usize,
    /// Bytes handed to a send not yet completed (a ring's: it holds its buffer).
    in_flight: usize,
    /// The most output gathered before the wire must take it (a blocking wiring writes in
    /// chunks); `--max-output` bounds it too.
    chunk: u32,
    /// The session asked to close: close once the output has gone.
    closing: bool,
    /// The peer finished sending: close once the output has gone and nothing is held.
    peer_finished: bool,
    /// Closed because the server is stopping (its farewell, not a cut).
    stopping: bool,
    deadlines: Deadlines,
    shed: Shed,
    /// A deadline passed (counted; its last word is in the output): close now.
    expired: Option<Expired>,
    /// The timer its wiring holds for it ([`Connection::timer`]).
    held: Held,
    /// What it asks of its wiring: work to cancel, buffers given back.
    asks: Asks,
    /// Its parting words were said.
    parted: bool,
    moved: Moved,
    /// The output pending has waited for the client: each time it moves is progress. (Output
    /// that goes at once is no progress of its own: the input it answers was, or was not — a
    /// PING's ACK does not keep a connection from being idle.)
    waited: bool,
}

impl Connection {
    /// A new connection of worker `w`'s, known to its wiring as `token`.
    pub fn new(w: Worker<'_>, token: u64, now: Instant) -> Connection {
        Connection {
            token,
            session: w.session(),
            out: Vec::new(),
            sent: 0,
            in_flight: 0,
            chunk: u32::MAX,
            closing: false,
            peer_finished: false,
            stopping: false,
            deadlines: Deadlines::new(now),
            shed: Shed::default(),
            expired: None,
            held: Held::new(),
            asks: Asks::new(w.ctx.offload.get().is_some()),
            parted: false,
            moved: Moved::default(),
            waited: false,
        }
    }

    /// The wire takes output in chunks of at most `chunk` bytes (a blocking write waits for
    /// the client either way, and a connection's own process holds less).
    pub fn in_chunks(mut self, chunk: usize) -> Connection {
        self.chunk = chunk.clamp(1, u32::MAX as usize) as u32;
        self
    }

    /// The output a session may add now: `--max-output` (or the chunk), less what a send in
    /// flight holds.
    fn bound(&self, w: Worker<'_>) -> usize {
        w.max_output().min(self.chunk as usize).saturating_sub(self.in_flight)
    }

    // What happened.

    /// `bytes` arrived at `now` (none: go on with what the session held back); `learned`:
    /// when the wiring learned of them (its wait's return; `None`: the read's own return).
    /// Replies are gathered for [`Connection::output`]; `early` is the wiring's send of the
    /// replies so far before a request's work. The deadlines hear of it at once (a blocking
    /// wiring's write that follows measures its send timeout from here): input that asked
    /// nothing of the server (HTTP/2's PING, ...) does not keep the connection from being idle.
    pub fn input(
        &mut self,
        w: Worker<'_>,
        bytes: &[u8],
        now: Instant,
        learned: Option<Instant>,
        early: &mut impl FnMut(&mut Vec<u8>),
    ) {
        let (bound, from) = (
            self.bound(w),
            Origin {
                conn: self.token,
                learned,
            },
        );
        let mut early = self.guarded(early);
        let fed = hook::on_input(w, &mut self.session, bytes, &mut self.out, bound, from, &mut early);
        self.asks.cancel(|| self.session.cancelled());
        self.moved.any = true;
        self.deadlines.input(&self.session, fed.requests > 0, fed.quiet(), now);
        self.closing |= fed.close;
    }

    /// The wiring's early send, or nothing while output is pending or in flight: the replies
    /// so far would overtake it (and `out` still holds bytes the wire took).
    fn guarded<'e, E: FnMut(&mut Vec<u8>)>(&self, early: &'e mut E) -> impl FnMut(&mut Vec<u8>) + 'e {
        let pending = self.sending();
        move |out: &mut Vec<u8>| {
            if !pending {
                early(out)
            }
        }
    }

    /// The wire took `n` bytes of [`Connection::output`] at `now`.
    pub fn wrote(&mut self, w: Worker<'_>, n: usize, now: Instant) {
        if n == 0 {
            return;
        }
        w.count(Counter::BytesOut, n as u64);
        self.progressed(now);
        self.sent += n;
        if self.sent < self.out.len() {
            self.waited = true;
        } else {
            // All gone: the next output goes at once until it waits again.
            self.out.clear();
            self.sent = 0;
            self.waited = false;
            self.session.output_gone(self.bound(w));
        }
    }

    /// The wire took nothing now: the output waits for the client.
    pub fn blocked(&mut self) {
        self.waited = true;
    }

    /// Output moved at `now`: progress, at once (a blocking write may wait long for the
    /// rest), when it had waited for the client.
    fn progressed(&mut self, now: Instant) {
        self.moved.any = true;
        if self.waited {
            self.deadlines.output(now);
        }
    }

    /// A ring's send: takes the output, which the send holds until [`Connection::send_done`].
    pub fn take_output(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.out);
        out.drain(..std::mem::take(&mut self.sent));
        self.in_flight = out.len();
        out
    }

    /// A ring's send of `buf` completed at `now` with `n` bytes taken: the rest goes first,
    /// ahead of newer replies. Progress when it had waited, or output is backed up behind it.
    pub fn send_done(&mut self, w: Worker<'_>, mut buf: Vec<u8>, n: usize, now: Instant) {
        self.in_flight = 0;
        if n > 0 {
            w.count(Counter::BytesOut, n as u64);
            let short = n < buf.len();
            self.waited |= short || !self.out.is_empty();
            self.progressed(now);
            self.waited = short;
        }
        if n < buf.len() {
            buf.drain(..n);
            buf.append(&mut self.out);
            self.out = buf;
        } else if self.out.is_empty() {
            // Keep the allocation for the next reply.
            buf.clear();
            self.out = buf;
        }
    }

    /// The work of `ticket` is done (its pool posted it; a keyed command's thread posted its
    /// `answer`): its response joins the output, then what the session held behind it is
    /// answered.
    pub fn complete(
        &mut self,
        w: Worker<'_>,
        ticket: u64,
        answer: Option<crate::proto::keyed::Answered>,
        early: &mut impl FnMut(&mut Vec<u8>),
    ) {
        // Output the wire took leaves the buffer first: the session measures the bound on it.
        if self.sent > 0 {
            self.out.drain(..std::mem::take(&mut self.sent));
        }
        let (bound, token) = (self.bound(w), self.token);
        let mut early = self.guarded(early);
        let fed = hook::on_later(
            w,
            &mut self.session,
            Later::Done(ticket, answer),
            &mut self.out,
            bound,
            token,
            &mut early,
        );
        self.closing |= fed.close;
        self.asks.cancel(|| self.session.cancelled());
        if fed.requests > 0 {
            self.moved.any = true;
            self.moved.output = true;
        }
    }

    /// The peer finished sending: close once the replies have gone and nothing is held.
    pub fn peer_finished(&mut self) {
        self.peer_finished = true;
    }

    /// The server is stopping: this connection's close is its farewell.
    pub fn server_stopping(&mut self) {
        self.stopping = true;
    }

    // What to do.

    /// What the connection needs next at `now`, after going on with what it can (pieces due,
    /// input held back at the bound); `early`: as for [`Connection::input`].
    pub fn next(&mut self, w: Worker<'_>, now: Instant, early: &mut impl FnMut(&mut Vec<u8>)) -> Next {
        // Output a completion added is progress now, before its send's deadline is reckoned.
        if std::mem::take(&mut self.moved.output) {
            self.deadlines.output(now);
        }
        loop {
            if self.expired.is_some() {
                return Next::Close;
            }
            if self.in_flight > 0 {
                let held = self.closing || self.peer_finished || self.session.holding() || self.session.paused();
                return if held { Next::Sending } else { Next::Read };
            }
            if self.sent < self.out.len() {
                return Next::Send;
            }
            if self.closing || (self.peer_finished && !self.session.holding() && !self.session.answers_owed()) {
                return Next::Close;
            }
            if self.session.due().is_some_and(|d| d <= now) {
                let (bound, token) = (self.bound(w), self.token);
                let fed = hook::on_later(
                    w,
                    &mut self.session,
                    Later::Due(now),
                    &mut self.out,
                    bound,
                    token,
                    early,
                );
                self.closing |= fed.close;
                if !self.out.is_empty() || fed.close {
                    self.moved.any = true;
                    self.deadlines.output(now);
                    continue;
                }
            }
            if self.session.holding() {
                self.input(w, &[], now, None, early);
                continue;
            }
            // A peer that finished sending is owed a response still: nothing more to read.
            return match self.session.paused() || self.peer_finished {
                true => Next::Pending,
                false => Next::Read,
            };
        }
    }

    /// When a later response's next piece is due (a blocking wiring waits for it).
    pub fn due(&self) -> Option<Instant> {
        self.session.due()
    }

    /// The output the wire should take now.
    pub fn output(&self) -> &[u8] {
        &self.out[self.sent..]
    }

    /// Output is waiting for the wire or in flight on it.
    pub fn sending(&self) -> bool {
        self.in_flight > 0 || self.sent < self.out.len()
    }

    /// A send is in flight (a ring's).
    pub fn in_flight(&self) -> bool {
        self.in_flight > 0
    }

    /// Ends a wake-up at `now`: if anything moved, later responses' output is progress for
    /// the deadlines, one useful event is counted, and the connection may grow buffers again.
    pub fn settle(&mut self, w: Worker<'_>, now: Instant) {
        let m = std::mem::take(&mut self.moved);
        if !m.any {
            return;
        }
        self.held.moved();
        if m.output {
            self.deadlines.output(now);
        }
        w.count(Counter::Useful, 1);
        self.shed.active();
    }

    // Its one time channel.

    /// Its earliest timeout: a deadline (header, idle, send, window), a later response's next
    /// piece (not while output is pending: the output's progress drives it then), or, when
    /// neither comes sooner and no later piece is due at all, giving back an idle spell's
    /// buffers. `None`: nothing will ever come due by itself.
    pub fn poll_timeout(&self, w: Worker<'_>) -> Option<Instant> {
        if self.expired.is_some() {
            return None;
        }
        let sending = self.sending();
        let deadline = self
            .deadlines
            .next(&w.ctx.cfg, &self.session, sending)
            .map(|(at, _)| at);
        if sending {
            return deadline;
        }
        // A later response's own wake-up brings the shedding too: a stream between events
        // costs no second one.
        match self.session.due() {
            Some(due) => Some(deadline.map_or(due, |at| at.min(due))),
            None => match self.shed.due(&self.session, &self.out, self.deadlines.last()) {
                Some(shed) => Some(deadline.map_or(shed, |at| at.min(shed))),
                None => deadline,
            },
        }
    }

    /// The time its wiring must arm a timer for at `now`, if it needs a new one: its
    /// [`Connection::poll_timeout`], unless the timer it holds will do (see `timer.rs`: most
    /// steps work nothing out).
    pub fn timer(&mut self, w: Worker<'_>, now: Instant) -> Option<Instant> {
        let session = &self.session;
        if self.held.will_do(now, || session.due()) {
            return None;
        }
        let floor = w.ctx.cfg.timeout_floor();
        if let Some(first) = self.held.first(self.moved.any, self.deadlines.last(), floor) {
            return Some(first);
        }
        let due = self.poll_timeout(w)?;
        self.held.arm(due, now, floor)
    }

    /// Its wiring's timer for `at` came up at `now` (`at`: `None` for a timer that carries no
    /// time: a wiring's own wake-up). `false` for a timer it no longer
    /// holds: nothing to do. Otherwise what has come due is done, and the wiring steps it: a
    /// deadline that passed closes it (counted; a head that took too long gets HTTP's 408 as
    /// its last word), a connection silent for a tick gives back its buffers
    /// ([`Event::Shed`]), a later response's piece goes at the step.
    pub fn handle_timeout(&mut self, w: Worker<'_>, at: Option<Instant>, now: Instant) -> bool {
        if !self.held.came(at, now) {
            return false;
        }
        if self.expired.is_some() {
            return true;
        }
        if let Some(why) = self.deadlines.expired(&w.ctx.cfg, &self.session, self.sending(), now) {
            w.count(why.counter(), 1);
            if why == Expired::Header {
                self.out.extend_from_slice(self.session.timeout_response());
            }
            self.expired = Some(why);
        } else if self.in_flight == 0 {
            let last = self.deadlines.last();
            if self.shed.idle(&mut self.session, &mut self.out, last, now) {
                self.asks.shed();
            }
        }
        true
    }

    /// Its wiring's timer for `at` is the one it holds (an entry that is not is stale).
    pub fn armed_for(&self, at: Instant) -> bool {
        self.held.is(at)
    }

    /// It has something to ask of its wiring ([`Connection::poll_event`]).
    #[inline]
    pub fn has_events(&self) -> bool {
        self.asks.any()
    }

    /// What it asks of its wiring beside its I/O, one at a time until `None`.
    pub fn poll_event(&mut self) -> Option<Event> {
        match self.asks.cancelled() {
            Some(tickets) => Some(Event::Cancel(tickets)),
            None => self.asks.shed_taken().then_some(Event::Shed),
        }
    }

    // Its end.

    /// It is closing: its parting bytes go to `send` (best effort: what the socket takes now),
    /// once, unless a send in flight must not be overtaken — the output it still holds (a
    /// last word among it), then a stopping server's farewell or, for any other close, the
    /// cut ([`deadline::part`]) — and the work its responses wait for becomes an
    /// [`Event::Cancel`] (a closed connection's work is dead work).
    pub fn close(&mut self, send: impl FnOnce(&[u8])) {
        if !std::mem::replace(&mut self.parted, true) {
            self.asks.cancel(|| self.session.tickets());
            if self.in_flight == 0 {
                let out = &mut self.out;
                deadline::part(&mut self.session, self.stopping, |b| out.extend_from_slice(b));
                if self.sent < self.out.len() {
                    send(&self.out[self.sent..]);
                }
            }
        }
    }
}

/// The connection's rules, stepped by hand with scripted events: no socket, no wiring.
#[cfg(test)]
mod tests;
/// Its time, stepped by hand: deadlines, shedding and the one timer.
#[cfg(test)]
mod time_tests;
