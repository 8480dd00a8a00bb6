//! A non-blocking connection driven by readiness — its socket and the [`Connection`] it
//! steps — and the fd-indexed table of them that the event loops share.
//!
//! `drive` does what a readiness event asks: it steps the connection, writing what it has to
//! send while the socket takes it and reading (once, or until EAGAIN for edge-triggered loops)
//! while it wants input. What is read, answered, held back or owed later is the
//! [`Connection`]'s: this file does the reads and writes. While output is pending it stops
//! reading (back-pressure) and asks for writability. While a response is owed later and input
//! waits behind it (HTTP/1.x behind an event stream or pooled work) it reads nothing and asks
//! for nothing ([`Want::Pending`]): the client's further requests wait in TCP. When the
//! response has gone it reads again at once (an edge-triggered loop gets no new edge for bytes
//! already queued).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Instant;

use crate::server::connection::{wire, Connection, Next};
use crate::server::Worker;
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

/// One connection of an event loop: its socket and the [`Connection`] it steps.
pub struct Conn {
    pub fd: OwnedFd,
    conn: Connection,
    /// What the last step asked for.
    want: Want,
}

/// A connection dropped without [`Conn::end`] (a stopping queue-pool's) still says its
/// parting words, after whatever output it holds (best effort, what the socket takes now).
impl Drop for Conn {
    fn drop(&mut self) {
        let fd = &self.fd;
        self.conn.close(|b| {
            let _ = sys::fd::try_write(fd, b);
        });
    }
}

impl Conn {
    /// A new connection of worker `w`'s on `fd` (its token is the descriptor number).
    pub fn new(w: Worker<'_>, fd: OwnedFd) -> Conn {
        let token = fd.as_raw_fd() as u64;
        Conn {
            fd,
            conn: Connection::new(w, token, Instant::now()),
            want: Want::Read,
        }
    }

    /// The server is stopping: this connection's close is its farewell.
    pub fn stopping(&mut self) {
        self.conn.server_stopping();
    }

    /// The time its loop must add a timer entry for at `now`, if it needs a new one.
    #[inline]
    pub fn timer(&mut self, w: Worker<'_>, now: Instant) -> Option<Instant> {
        self.conn.timer(w, now)
    }

    /// The work of `ticket` is done (a pool posted it): its response goes out, then what the
    /// session held behind it; reading at once if the connection had stopped reading for the
    /// response (`buf`, `edge`: as for [`Conn::drive`]).
    pub fn complete(&mut self, w: Worker<'_>, ticket: u64, buf: &mut [u8], edge: bool, now: Instant) -> Want {
        self.conn.complete(w, ticket, None, &mut wire::early(w, &self.fd));
        self.resume(w, buf, edge, now)
    }

    /// Keyed commands run on other threads came back with these answers (their tickets and
    /// bytes, in any order): each fills its place, then the connection steps once, so the
    /// answers of one batch go out in one write.
    pub fn answered(
        &mut self,
        w: Worker<'_>,
        answers: &mut [(u64, u64, crate::proto::keyed::Answered)],
        buf: &mut [u8],
        edge: bool,
        now: Instant,
    ) -> Want {
        for (_, ticket, bytes) in answers {
            let bytes = std::mem::take(bytes);
            self.conn.complete(w, *ticket, Some(bytes), &mut |_: &mut Vec<u8>| {});
        }
        self.resume(w, buf, edge, now)
    }

    /// Its loop's timer entry for `at` is its current one (not stale).
    pub fn armed_for(&self, at: Instant) -> bool {
        self.conn.armed_for(at)
    }

    /// Its loop's timer entry for `at` came up: what has come due is done, then as
    /// [`Conn::complete`] (`None` when the entry was stale: nothing to do).
    pub fn on_timer(&mut self, w: Worker<'_>, at: Instant, buf: &mut [u8], edge: bool, now: Instant) -> Option<Want> {
        if !self.conn.handle_timeout(w, Some(at), now) {
            return None;
        }
        Some(self.resume(w, buf, edge, now))
    }

    /// After a completion or a timer: a connection that had stopped reading for a response
    /// that has now gone reads what waited in the socket at once (no new readiness comes for
    /// it in an edge-triggered loop, and a level-triggered one was watching for nothing).
    fn resume(&mut self, w: Worker<'_>, buf: &mut [u8], edge: bool, now: Instant) -> Want {
        self.step(w, buf, edge, Cause::Later, now)
    }

    /// What the connection waits for (the interest a select / poll loop should register).
    pub fn want(&self) -> Want {
        self.want
    }

    /// Its end, as every wiring's ([`wire::end`]); the loop then closes it.
    pub fn end(&mut self, w: Worker<'_>) {
        wire::end(w, &mut self.conn, &self.fd);
    }

    /// Handles readiness. `buf` is the worker's read buffer; `until_eagain` reads until the
    /// socket is drained (edge-triggered), otherwise one read per event (level-triggered);
    /// `now`: the loop's clock, read once per turn, which is also when it learned of the
    /// input (`learned`: another time, where the connection waited in a queue since).
    pub fn drive(&mut self, w: Worker<'_>, buf: &mut [u8], until_eagain: bool, now: Instant) -> Want {
        self.step(w, buf, until_eagain, Cause::Ready(now), now)
    }

    /// As [`Conn::drive`], the input learned of at `learned` (queue-pool: when its poller found
    /// the connection ready; its wait in the queue is the request's time in the server).
    pub fn drive_learned(&mut self, w: Worker<'_>, buf: &mut [u8], now: Instant, learned: Instant) -> Want {
        self.step(w, buf, false, Cause::Ready(learned), now)
    }

    /// Steps the connection: writes while it has output and the socket takes it, reads while
    /// it wants input and readiness was reported (or it had stopped reading for a response
    /// that has gone), once unless `until_eagain`.
    fn step(&mut self, w: Worker<'_>, buf: &mut [u8], until_eagain: bool, cause: Cause, now: Instant) -> Want {
        let (fd, was) = (&self.fd, self.want);
        let (ready, learned) = match cause {
            Cause::Ready(at) => (true, Some(at)),
            Cause::Later => (false, None),
        };
        let read = ready || was == Want::Pending;
        let conn = &mut self.conn;
        let mut reads = 0;
        let want = loop {
            match conn.next(w, now, &mut wire::early(w, fd)) {
                Next::Send => match sys::fd::write(fd, conn.output()) {
                    Ok(n) => conn.wrote(w, n, now),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        conn.blocked();
                        break Want::Write;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break Want::Close,
                },
                Next::Close => break Want::Close,
                // Watched for nothing while pending, a level-triggered loop hears only of an
                // error or a hang-up (the peer reset, its error pending or already taken by a
                // write: close) or of readiness it reported before the connection paused in
                // the same turn (stale: go on waiting). Edge-triggered, a new edge is input
                // that waits.
                Next::Pending | Next::Sending => {
                    let woke = ready && reads == 0 && !until_eagain && was == Want::Pending;
                    break match woke && !matches!(sys::socket::peer_gone(fd), Ok(false)) {
                        true => Want::Close,
                        false => Want::Pending,
                    };
                }
                Next::Read if !read || (reads > 0 && !until_eagain) => break Want::Read,
                Next::Read => match sys::fd::read(fd, buf) {
                    // The peer finished sending: closed once what it is owed has gone.
                    Ok(0) => {
                        reads += 1;
                        conn.peer_finished();
                    }
                    Ok(n) => {
                        reads += 1;
                        conn.input(w, &buf[..n], now, learned, &mut wire::early(w, fd));
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Want::Read,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break Want::Close,
                },
            }
        };
        conn.settle(w, now);
        wire::perform(w, conn);
        self.want = want;
        want
    }
}

/// Why a connection is stepped: readiness its loop learned of at a time, or a later response's
/// own wake-up (a completion, a timer).
#[derive(Clone, Copy)]
enum Cause {
    Ready(Instant),
    Later,
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
}

/// Runs `f` at most once per [`crate::server::TICK`]: a worker's own periodic chores (expired
/// keys, pages given back), never a visit to its connections.
pub struct Ticker {
    next: Instant,
}

impl Default for Ticker {
    fn default() -> Self {
        Ticker {
            next: Instant::now() + crate::server::TICK,
        }
    }
}

impl Ticker {
    /// `true` when a tick has passed since the last `true`; `now`: the loop's clock.
    pub fn due(&mut self, now: Instant) -> bool {
        if now >= self.next {
            self.next = now + crate::server::TICK;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an idle connection of an event loop keeps in user memory is its slot in the loop's
    /// table, a [`Conn`] (with its [`Connection`] inline), and a 16-byte timer entry: at most
    /// 256 bytes in all is issue 82's bound (measured: 223 B per idle connection at 100,000
    /// when the slot was 192 bytes, 381 B when it was 352). A field added to every connection
    /// shows here first.
    #[test]
    fn an_idle_event_loop_connection_fits_in_176_bytes_and_its_timer_entry_in_16() {
        assert!(
            std::mem::size_of::<Conn>() <= 176,
            "an event loop's connection slot takes {} bytes",
            std::mem::size_of::<Conn>()
        );
        assert!(std::mem::size_of::<Connection>() <= 168);
        assert_eq!(
            std::mem::size_of::<crate::proto::Session>(),
            56,
            "HTTP/1.1's session, the largest inline"
        );
        assert_eq!(std::mem::size_of::<(crate::timer::Stamp, u64)>(), 16);
        assert_eq!(std::mem::size_of::<Option<crate::timer::Stamp>>(), 8);
    }
}
