//! One connection's life, sans I/O: what every wiring (the event loops and queue-pool, the
//! blocking models, uring, tokio) steps, each doing only its own reads, writes and waiting.
//!
//! A [`Connection`] owns its protocol session, its output and the output bound, its deadlines
//! (idle, send, header), idle shedding, the wake-up its later responses need (due events, a
//! pool's completions, cancellations), reading back-pressure and its close. A wiring tells it
//! what happened — bytes in ([`Connection::input`]), bytes the wire took
//! ([`Connection::wrote`], or a ring's [`Connection::send_done`]), a completion
//! ([`Connection::complete`]), a timer ([`Connection::fired`]), time passing
//! ([`Connection::expired`], [`Connection::idle`]) — and asks what to do next
//! ([`Connection::next`]: send [`Connection::output`], read, wait for nothing, close), ending
//! each wake-up with [`Connection::settle`] (one useful event counted, shedding re-armed). It
//! never reads or writes a socket itself: what reaches the wire goes through the wiring's own
//! sends handed in — `early`, which the per-request hook gives the replies so far before a
//! request's work (a response never waits for the work of the requests after it; never while
//! output is pending, which it would overtake), and the best-effort writes of a last word and
//! of parting words.
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

pub(crate) mod deadline;
pub(crate) mod idle;

use crate::proto::Protocol;
use std::time::Instant;

use super::connection::deadline::{Deadlines, Expired};
use super::connection::idle::Shed;
use super::request::hook::{self, Later, Origin};
use super::Counter;
use super::Worker;
use crate::proto::Session;
use crate::timer::Armed;

/// What a connection asks of its wiring next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Write [`Connection::output`] and say how much went ([`Connection::wrote`]), or hand
    /// it to a send ([`Connection::take_output`], then [`Connection::send_done`]).
    Send,
    /// Read, and hand what came to [`Connection::input`].
    Read,
    /// A response is owed later and input waits behind it: read nothing. Its wake-up is a
    /// completion or [`Connection::wake_at`]; a socket watched for nothing that wakes has an
    /// error or a hang-up.
    Pending,
    /// A send is in flight that must complete before anything else goes (a ring's).
    Sending,
    /// Done: close it.
    Close,
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
    chunk: usize,
    /// The session asked to close: close once the output has gone.
    closing: bool,
    /// The peer finished sending: close once the output has gone and nothing is held.
    peer_finished: bool,
    /// Closed because the server is stopping (its farewell, not a cut).
    stopping: bool,
    deadlines: Deadlines,
    shed: Shed,
    /// The due time its wiring holds a timer for.
    armed: Armed,
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
            chunk: usize::MAX,
            closing: false,
            peer_finished: false,
            stopping: false,
            deadlines: Deadlines::new(now),
            shed: Shed::default(),
            armed: Armed::default(),
            moved: Moved::default(),
            waited: false,
        }
    }

    /// The wire takes output in chunks of at most `chunk` bytes (a blocking write waits for
    /// the client either way, and a connection's own process holds less).
    pub fn in_chunks(mut self, chunk: usize) -> Connection {
        self.chunk = chunk.max(1);
        self
    }

    /// The output a session may add now: `--max-output` (or the chunk), less what a send in
    /// flight holds.
    fn bound(&self, w: Worker<'_>) -> usize {
        w.max_output().min(self.chunk).saturating_sub(self.in_flight)
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
        self.cancel(w);
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
        self.cancel(w);
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
        loop {
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
                    self.moved.output = true;
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
        if m.output {
            self.deadlines.output(now);
        }
        w.count(Counter::Useful, 1);
        self.shed.active();
    }

    /// When its wiring must wake for it next (a later response's piece falls due), if that
    /// needs a new timer; none while output is pending (the output's progress drives it then).
    pub fn wake_at(&mut self) -> Option<Instant> {
        if self.sending() {
            return None;
        }
        self.armed.arm(self.session.due())
    }

    /// Its timer for `at` came up: `true` when it is its current one (then step it).
    pub fn fired(&mut self, at: Instant) -> bool {
        self.armed.fired(at)
    }

    /// A wake-up that carries no time came (a ring's timeout), or its timer came up while it
    /// was away from its table (a pool thread held it): the timer is spent if its time has
    /// come by `now`.
    pub fn timer_passed(&mut self, now: Instant) {
        self.armed.passed(now);
    }

    /// Its wiring's timer for `at` is its current one (not stale).
    pub fn armed_for(&self, at: Instant) -> bool {
        self.armed.is(at)
    }

    /// What has expired for it at `now`, if anything.
    pub fn expired(&self, w: Worker<'_>, now: Instant) -> Option<Expired> {
        self.deadlines.expired(&w.ctx.cfg, &self.session, self.sending(), now)
    }

    /// A write that waits for the client has made no progress for `--idle-timeout` (a
    /// blocking write's check), counted as a send timeout.
    pub fn send_expired(&self, w: Worker<'_>, now: Instant) -> bool {
        let gone = self.deadlines.send_expired(&w.ctx.cfg, now);
        if gone {
            w.count(Counter::ClosedSendTimeout, 1);
        }
        gone
    }

    /// Before it is closed for `why`: the last word (HTTP's 408 for a head that took too
    /// long), handed to `send` (best effort), and the close counted.
    pub fn last_word(&self, w: Worker<'_>, why: Expired, send: impl FnOnce(&[u8])) {
        why.last_word(w, &self.session, send);
    }

    /// A wiring's periodic sweep found it not expired at `now`: silent for a tick with
    /// nothing to send, it gives back the buffers a burst grew, once per idle spell (`true`
    /// when it did: a wiring gives back its own read buffer then too).
    pub fn shed_if_idle(&mut self, now: Instant) -> bool {
        if self.in_flight > 0 {
            return false;
        }
        self.shed
            .idle(&mut self.session, &mut self.out, self.deadlines.last(), now)
    }

    /// Its parting bytes, handed to `send` (best effort: what the socket takes now), unless a
    /// send in flight must not be overtaken: the output it still holds, then a stopping
    /// server's farewell or, for any other close, the cut ([`deadline::part`]).
    pub fn parting(&mut self, send: impl FnOnce(&[u8])) {
        if self.in_flight > 0 {
            return;
        }
        let out = &mut self.out;
        super::connection::deadline::part(&mut self.session, self.stopping, |b| out.extend_from_slice(b));
        if self.sent < self.out.len() {
            send(&self.out[self.sent..]);
        }
    }

    /// It is closing: the work its responses wait for in the server's pool is dropped (a
    /// closed connection's work is dead work).
    pub fn cancel_all(&mut self, w: Worker<'_>) {
        if let Some(pool) = w.ctx.offload.get() {
            let waiting = self.session.tickets();
            if !waiting.is_empty() {
                pool.cancel(w, &waiting);
            }
        }
    }

    /// Tells the server's pool which responses will never be written (their streams were
    /// reset), so their work is dropped.
    fn cancel(&mut self, w: Worker<'_>) {
        if let Some(pool) = w.ctx.offload.get() {
            let gone = self.session.cancelled();
            if !gone.is_empty() {
                pool.cancel(w, &gone);
            }
        }
    }
}

/// The connection's rules, stepped by hand with scripted events: no socket, no wiring.
#[cfg(test)]
mod tests;
