//! A non-blocking connection driven by readiness, and the fd-indexed table of them that the
//! event loops share.
//!
//! `drive` does everything after a readiness event: flush pending output, go on with what the
//! session held back at `--max-output`, read (once, or until EAGAIN for edge-triggered loops),
//! feed the protocol session, do the `--work`, write. While output is pending it stops reading
//! (back-pressure) and asks for writability; within one read, the session itself stops at
//! `--max-output`. While a response is owed later and input waits behind it
//! ([`Session::paused`]: HTTP/1.x behind an event stream or pooled work) it reads nothing and
//! asks for nothing ([`Want::Pending`]): the client's further requests wait in TCP, and the
//! session holds one read at most. When the response has gone it reads again at once (an
//! edge-triggered loop gets no new edge for bytes already queued).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Instant;

use super::ctx::Worker;
use super::deadline::{Deadlines, Expired};
use super::idle::Shed;
use super::stats::Counter;
use super::timers::Armed;
use crate::proto::Session;
use crate::sys;

/// What the connection waits for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Read,
    /// Output is pending: wait for writability (reading is paused).
    Write,
    /// A response is owed later and input waits behind it: wait for nothing from the socket
    /// (the response's own wake — a completion, a timer — comes from the loop). A
    /// level-triggered loop watches it for nothing, so a wake-up then is an error or hang-up.
    Pending,
    /// Done: close it.
    Close,
}

/// One connection of an event loop.
pub struct Conn {
    pub fd: OwnedFd,
    session: Session,
    /// Output not yet taken by the kernel, from `sent` on.
    out: Vec<u8>,
    sent: usize,
    /// The session asked to close once `out` is written.
    closing: bool,
    /// Idle, send and header deadlines.
    deadlines: Deadlines,
    /// Input arrived during the current `drive`.
    got_input: bool,
    /// ... and it completed a request (the head timer restarts for the next head).
    answered: bool,
    /// ... and some of it asked something of the server (not only quiet frames: see
    /// [`crate::proto::Fed::quiet`]).
    heard: bool,
    /// What the last `drive` asked for.
    want: Want,
    /// Gave back its buffers since it last moved.
    shed: Shed,
    /// The due time its loop's timers hold for it (a later response's next piece).
    armed: Armed,
    /// Closed because the server is stopping (its farewell, not a cut).
    stopping: bool,
}

/// A connection the server closes parts first, after whatever output it still holds (best
/// effort, what the socket takes now): a stopping server's farewell, or, for any other close,
/// the cut ([`super::deadline::part`]).
impl Drop for Conn {
    fn drop(&mut self) {
        let fd = &self.fd;
        let (out, sent) = (&mut self.out, self.sent);
        super::deadline::part(&mut self.session, self.stopping, |b| {
            out.extend_from_slice(b);
            let _ = sys::fd::try_write(fd, &out[sent..]);
        });
    }
}

impl Conn {
    pub fn new(session: Session, fd: OwnedFd) -> Conn {
        Conn {
            fd,
            session,
            out: Vec::new(),
            sent: 0,
            closing: false,
            deadlines: Deadlines::new(Instant::now()),
            got_input: false,
            answered: false,
            heard: false,
            want: Want::Read,
            shed: Shed::default(),
            armed: Armed::default(),
            stopping: false,
        }
    }

    /// The server is stopping: this connection's close is its farewell.
    pub fn stopping(&mut self) {
        self.stopping = true;
    }

    /// When its loop must wake for it next (a later response's piece falls due), if that needs
    /// a new entry in the loop's [`super::timers::Timers`].
    /// None while its output is pending: writability drives it then.
    pub fn arm_next(&mut self) -> Option<Instant> {
        if self.sent < self.out.len() {
            return None;
        }
        self.armed.arm(self.session.due())
    }

    /// The work of `ticket` is done (a pool posted it): its response goes out, then what the
    /// session held behind it; as [`Conn::drive`] after, reading at once if the connection
    /// stopped reading for the response (`buf`, `edge`: as for [`Conn::drive`]).
    pub fn complete(&mut self, w: Worker<'_>, ticket: u64, buf: &mut [u8], edge: bool, now: Instant) -> Want {
        let was = self.want;
        self.completed(w, ticket, now);
        self.resume(w, was, buf, edge, now)
    }

    fn completed(&mut self, w: Worker<'_>, ticket: u64, now: Instant) {
        super::offload::serving(self.fd.as_raw_fd());
        let fed = w.on_complete(
            &mut self.session,
            ticket,
            &mut self.out,
            w.max_output(),
            &mut send_now(w, &self.fd),
        );
        self.closing |= fed.close;
        self.cancel(w);
        let mut moved = fed.requests > 0;
        let want = self.pump(w, now, &mut moved).unwrap_or_else(|| self.reading());
        if moved {
            self.deadlines.output(now);
            w.count(Counter::Useful, 1);
            self.shed.active();
        }
        self.want = want;
    }

    /// After a completion or a timer: a connection that had stopped reading for a response
    /// that has now gone reads what waited in the socket at once (no new readiness comes for
    /// it in an edge-triggered loop, and a level-triggered one was watching for nothing).
    fn resume(&mut self, w: Worker<'_>, was: Want, buf: &mut [u8], edge: bool, now: Instant) -> Want {
        match (was, self.want) {
            (Want::Pending, Want::Read) => self.drive(w, buf, edge, now),
            (_, want) => want,
        }
    }

    /// What a connection with nothing left to send waits for: input, unless a response owed
    /// later holds it back.
    fn reading(&self) -> Want {
        match self.session.paused() {
            true => Want::Pending,
            false => Want::Read,
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

    /// Its timer entry, if its time has passed by `now`, is spent (it came up while the
    /// connection was away from its table: queue-pool's workers hold it).
    pub fn timer_passed(&mut self, now: Instant) {
        self.armed.passed(now);
    }

    /// Its loop's timer entry for `at` is its current one (not stale).
    pub fn armed_for(&self, at: Instant) -> bool {
        self.armed.is(at)
    }

    /// Its loop's timer entry for `at` came up: writes what is due, then as
    /// [`Conn::complete`] (`None` when the entry was stale: nothing to do).
    pub fn on_timer(&mut self, w: Worker<'_>, at: Instant, buf: &mut [u8], edge: bool, now: Instant) -> Option<Want> {
        if !self.armed.fired(at) {
            return None;
        }
        let was = self.want;
        super::offload::serving(self.fd.as_raw_fd());
        let mut moved = false;
        let want = self.pump(w, now, &mut moved).unwrap_or_else(|| self.reading());
        if moved {
            self.deadlines.output(now);
            w.count(Counter::Useful, 1);
            self.shed.active();
        }
        self.want = want;
        Some(self.resume(w, was, buf, edge, now))
    }

    /// What the connection waits for (the interest a select / poll loop should register).
    pub fn want(&self) -> Want {
        self.want
    }

    /// What has expired for this connection at `now`, if anything.
    pub fn expired(&self, w: Worker<'_>, now: Instant) -> Option<Expired> {
        self.deadlines
            .expired(&w.ctx.cfg, &self.session, self.sent < self.out.len(), now)
    }

    /// Before it is closed for `why`: the last word and the count (see [`Expired::last_word`]).
    pub fn expire(&self, w: Worker<'_>, why: Expired) {
        why.last_word(w, &self.session, |b| {
            let _ = sys::fd::try_write(&self.fd, b);
        });
    }

    /// Handles readiness. `buf` is the worker's read buffer; `until_eagain` reads until the
    /// socket is drained (edge-triggered), otherwise one read per event (level-triggered);
    /// `now`: the loop's clock, read once per turn. Counts bytes, requests and, when anything
    /// moved, one useful event.
    pub fn drive(&mut self, w: Worker<'_>, buf: &mut [u8], until_eagain: bool, now: Instant) -> Want {
        super::offload::serving(self.fd.as_raw_fd());
        let mut moved = false;
        let want = self.drive_inner(w, buf, until_eagain, now, &mut moved);
        if moved {
            // Input (which also tells the header deadline where the session stands) or output.
            if std::mem::take(&mut self.got_input) {
                let answered = std::mem::take(&mut self.answered);
                let quiet = !std::mem::take(&mut self.heard);
                self.deadlines.input(&self.session, answered, quiet, now);
            } else {
                self.deadlines.output(now);
            }
            w.count(Counter::Useful, 1);
            self.shed.active();
        }
        self.want = want;
        want
    }

    fn drive_inner(
        &mut self,
        w: Worker<'_>,
        buf: &mut [u8],
        until_eagain: bool,
        now: Instant,
        moved: &mut bool,
    ) -> Want {
        if let Some(stop) = self.pump(w, now, moved) {
            return stop;
        }
        if self.session.paused() {
            // Watched for nothing while pending, a level-triggered loop hears only of an error
            // or a hang-up (the peer reset, its error pending or already taken by a write:
            // close) or of readiness it reported before the connection paused
            // in the same turn (stale: go on waiting). Edge-triggered, a new edge is input
            // that waits.
            return match (until_eagain, self.want) {
                (false, Want::Pending) if !matches!(sys::socket::peer_gone(&self.fd), Ok(false)) => Want::Close,
                _ => Want::Pending,
            };
        }
        loop {
            match sys::fd::read(&self.fd, buf) {
                Ok(0) => return Want::Close,
                Ok(n) => {
                    *moved = true;
                    self.feed(w, &buf[..n]);
                    if let Some(stop) = self.pump(w, now, moved) {
                        return stop;
                    }
                    if self.session.paused() {
                        return Want::Pending;
                    }
                    if !until_eagain {
                        return Want::Read;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Want::Read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Want::Close,
            }
        }
    }

    /// Feeds `bytes` to the session (none: it goes on with what it held back). Output goes to
    /// `out`, which holds only unsent bytes here: what the per-request hook sends is taken out.
    fn feed(&mut self, w: Worker<'_>, bytes: &[u8]) {
        let fed = w.on_input(
            &mut self.session,
            bytes,
            &mut self.out,
            w.max_output(),
            &mut send_now(w, &self.fd),
        );
        self.cancel(w);
        self.got_input = true;
        self.answered |= fed.requests > 0;
        self.heard |= !fed.quiet();
        self.closing |= fed.close;
    }

    /// Flushes output, writes what later responses have due at `now`, and goes on with what
    /// the session held back at `--max-output`, while the output drains at once; `Some(want)`
    /// when the connection must stop reading (see [`Conn::settle`]).
    fn pump(&mut self, w: Worker<'_>, now: Instant, moved: &mut bool) -> Option<Want> {
        loop {
            if let Some(stop) = self.settle(w, moved) {
                return Some(stop);
            }
            if self.session.due().is_some_and(|d| d <= now) {
                let fed = w.on_due(
                    &mut self.session,
                    now,
                    &mut self.out,
                    w.max_output(),
                    &mut send_now(w, &self.fd),
                );
                self.closing |= fed.close;
                if !self.out.is_empty() || fed.close {
                    *moved = true;
                    continue;
                }
            }
            if !self.session.holding() {
                return None;
            }
            *moved = true;
            self.feed(w, &[]);
        }
    }

    /// Flushes pending output; `Some(want)` when the connection must stop reading: output is
    /// still pending (back-pressure), the write failed, or the session asked to close.
    fn settle(&mut self, w: Worker<'_>, moved: &mut bool) -> Option<Want> {
        match self.flush(w, moved) {
            Ok(true) if self.closing => Some(Want::Close),
            Ok(true) => None,
            Ok(false) => Some(Want::Write),
            Err(_) => Some(Want::Close),
        }
    }

    /// Writes pending output; `Ok(true)` when all of it went out.
    fn flush(&mut self, w: Worker<'_>, moved: &mut bool) -> io::Result<bool> {
        while self.sent < self.out.len() {
            match sys::fd::write(&self.fd, &self.out[self.sent..]) {
                Ok(n) => {
                    *moved = true;
                    self.sent += n;
                    w.count(Counter::BytesOut, n as u64);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.sent = 0;
        Ok(true)
    }
}

/// What the per-request hook does with the replies before a request's work: sends what the
/// socket takes now, and takes it out of `out`.
fn send_now<'a>(w: Worker<'a>, fd: &'a OwnedFd) -> impl FnMut(&mut Vec<u8>) + 'a {
    move |out| {
        let mut sent = 0;
        w.count(Counter::BytesOut, sys::fd::send_now(fd, out, &mut sent) as u64);
        out.drain(..sent);
    }
}

/// Connections of one event loop, indexed by descriptor number.
#[derive(Default)]
pub struct ConnTable {
    slots: Vec<Option<Conn>>,
    len: usize,
}

impl ConnTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a connection under its descriptor number, which it returns.
    pub fn insert(&mut self, conn: Conn) -> RawFd {
        let fd = conn.fd.as_raw_fd();
        let i = fd as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        if self.slots[i].replace(conn).is_none() {
            self.len += 1;
        }
        fd
    }

    pub fn get(&self, fd: RawFd) -> Option<&Conn> {
        self.slots.get(fd as usize).and_then(Option::as_ref)
    }

    #[inline]
    pub fn get_mut(&mut self, fd: RawFd) -> Option<&mut Conn> {
        self.slots.get_mut(fd as usize).and_then(Option::as_mut)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Descriptors of the open connections, in increasing order.
    pub fn fds(&self) -> impl Iterator<Item = RawFd> + '_ {
        self.iter().map(|(fd, _)| fd)
    }

    /// `(fd, connection)` pairs, in increasing fd order.
    pub fn iter(&self) -> impl Iterator<Item = (RawFd, &Conn)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|c| (i as RawFd, c)))
    }

    /// Takes a connection out of the table (the caller closes it).
    pub fn take(&mut self, fd: RawFd) -> Option<Conn> {
        let conn = self.slots.get_mut(fd as usize).and_then(Option::take);
        if conn.is_some() {
            self.len -= 1;
        }
        conn
    }

    /// The periodic sweep: the connections past a deadline (idle, send, header), with which;
    /// the others that were quiet for a tick give back the buffers a burst grew (the caller
    /// then calls [`sys::mem::give_back`], outside any lock it holds).
    pub fn sweep(&mut self, w: Worker<'_>, now: Instant) -> Vec<(RawFd, Expired)> {
        let mut expired = Vec::new();
        for (fd, conn) in self.slots.iter_mut().enumerate() {
            let Some(conn) = conn else { continue };
            match conn.expired(w, now) {
                Some(why) => expired.push((fd as RawFd, why)),
                None => {
                    conn.shed
                        .idle(&mut conn.session, &mut conn.out, conn.deadlines.last(), now);
                }
            }
        }
        expired
    }
}

/// Runs `f` at most once per [`super::TICK`]: the periodic idle sweep of event loops.
pub struct Ticker {
    next: Instant,
}

impl Default for Ticker {
    fn default() -> Self {
        Ticker {
            next: Instant::now() + super::TICK,
        }
    }
}

impl Ticker {
    /// `true` when a tick has passed since the last `true`; `now`: the loop's clock.
    pub fn due(&mut self, now: Instant) -> bool {
        if now >= self.next {
            self.next = now + super::TICK;
            true
        } else {
            false
        }
    }
}
