//! One client connection's life, sans I/O: the engine opens its socket, moves its bytes and
//! keeps its timers; the connection keeps everything else — its life cycle, its protocol's
//! session, the requests in flight and those to send again, what it has yet to write, the
//! requests its socket reserved, its back-off and its stall.
//!
//! The engine tells it what happened — the connect began ([`Connection::connecting`]), TCP is
//! up ([`Connection::connected`]), a TLS handshake began and ended, it is up
//! ([`Connection::up`]), bytes came ([`Connection::input`]) or the server closed
//! ([`Connection::closed`]), the wire took bytes ([`Connection::wrote`]), time passed
//! ([`Connection::late`]) — hands it requests to send ([`Connection::send`],
//! [`Connection::resend`]), and asks what to do next ([`Connection::next`]: send, read, wait
//! until a time, or close). What it reads reaches the run through [`Books`], the engine's.
//!
//! Its life moves Down → Connecting → (Handshaking →) Up → Down only through these methods,
//! each setting what goes with it (the times connect and handshake are measured from).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::ctx::again;
use super::{Books, ClientProtocol, Ctx, Link, Outbox, Sent, Session, Tickets};
use crate::load::{ErrorClass, Tally};

/// First and largest pause before reconnecting after a failure.
pub const BACKOFF_MIN: Duration = Duration::from_millis(10);
pub const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Down,
    Connecting,
    /// TCP is up, the TLS handshake is not done (https targets).
    Handshaking,
    Up,
}

/// What a connection asks of its engine next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Write what it holds ([`Connection::unsent`]).
    Send,
    /// Wait for the server's bytes.
    Read,
    /// Nothing until this time (a reconnect's back-off).
    Wait(Instant),
    /// Its socket is done: close it (and connect again, if the run goes on).
    Close,
}

/// How many requests one socket carries, and who hands them out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reuse {
    /// All it can (keep-alive: `None`), or this many (`--close`: 1, `--requests-per-conn K`).
    pub per_socket: Option<u64>,
    /// An open loop's schedule hands it its requests (it reserves none for its socket).
    pub open_loop: bool,
}

/// What a failed connection leaves the engine to settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed {
    /// The oldest request in flight's class: the failure is its.
    pub class: Option<u8>,
    /// The requests its socket reserved and never sent, and how many of them were counted.
    pub unused: (u64, u64),
    /// Nothing was in flight or waiting to be sent again: the attempt itself used a request.
    pub idle: bool,
}

/// A client connection.
#[derive(Debug)]
pub struct Connection {
    /// Its slot over the run (patterns and bodies differ by it), and in its thread.
    slot: u64,
    index: usize,
    state: State,
    /// When the current connect began, and the TLS handshake.
    started: Instant,
    tls_started: Instant,
    /// Requests awaiting responses, oldest first.
    inflight: VecDeque<Sent>,
    /// Requests the server did not process (HTTP/2: refused, above a GOAWAY's last stream),
    /// to be sent again, keeping when they were meant to go.
    retry: VecDeque<Sent>,
    /// Requests sent on the current socket.
    on_socket: u64,
    out: Outbox,
    session: Session,
    /// Messages sent on this slot (the body pattern's sequence number).
    send_seq: u64,
    backoff: Duration,
    /// When it may connect again after a failure.
    reconnect_at: Option<Instant>,
    connected_once: bool,
    /// The server said it closes after its last response.
    server_closing: bool,
    /// Since when the server has left no room for a request while nothing is in flight
    /// (HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS of 0): stuck, timed out like a request.
    stalled: Option<Instant>,
    /// Requests reserved for this socket when it was opened, so no socket opens for nothing
    /// at the end.
    tickets: Tickets,
    /// How many requests a socket carries.
    reuse: Reuse,
    /// Every response is an event stream (`--sse`): none is awaited after the window, and each
    /// one's first event is waited for at the close.
    all_streams: bool,
}

impl Connection {
    /// Slot `slot` (the `index`th of its thread), down, from `t0`, speaking `session`, its
    /// sockets used as `reuse` says (`all_streams`: `--sse`).
    pub fn new(slot: u64, index: usize, t0: Instant, session: Session, reuse: Reuse, all_streams: bool) -> Connection {
        Connection {
            slot,
            index,
            state: State::Down,
            started: t0,
            tls_started: t0,
            inflight: VecDeque::new(),
            retry: VecDeque::new(),
            on_socket: 0,
            out: Outbox::default(),
            session,
            send_seq: 0,
            backoff: BACKOFF_MIN,
            reconnect_at: None,
            connected_once: false,
            server_closing: false,
            stalled: None,
            tickets: Tickets::default(),
            reuse,
            all_streams,
        }
    }

    /// The session's view of the connection, with the run's `books`.
    fn parts<'a, B: Books + ?Sized>(&'a mut self, books: &'a mut B) -> (&'a mut Session, Ctx<'a, B>) {
        let cx = Ctx {
            index: self.index,
            slot: self.slot,
            inflight: &mut self.inflight,
            retry: &mut self.retry,
            closing: &mut self.server_closing,
            out: self.out.queue(),
            books,
        };
        (&mut self.session, cx)
    }

    // --- Its life.

    pub fn state(&self) -> State {
        self.state
    }

    pub fn is_up(&self) -> bool {
        self.state == State::Up
    }

    /// A connect began at `now`.
    pub fn connecting(&mut self, now: Instant) {
        debug_assert_eq!(self.state, State::Down);
        self.state = State::Connecting;
        self.started = now;
        self.reconnect_at = None;
    }

    /// TCP is up: how long the connect took. The back-off starts over.
    pub fn connected(&mut self, now: Instant) -> Duration {
        self.connected_once = true;
        self.backoff = BACKOFF_MIN;
        now.duration_since(self.started)
    }

    /// A TLS handshake began at `now`.
    pub fn handshaking(&mut self, now: Instant) {
        debug_assert_eq!(self.state, State::Connecting);
        self.state = State::Handshaking;
        self.tls_started = now;
    }

    /// The TLS handshake ended at `now`: how long it took.
    pub fn handshake_took(&self, now: Instant) -> Option<Duration> {
        (self.state == State::Handshaking).then(|| now.duration_since(self.tls_started))
    }

    /// It can carry requests, over `link`: its protocol says what it says first (to be sent).
    /// An error where the protocol cannot be spoken over this link.
    pub fn up(&mut self, link: Link) -> Result<(), ErrorClass> {
        debug_assert!(matches!(self.state, State::Connecting | State::Handshaking));
        self.state = State::Up;
        self.session.start(link, self.out.queue())
    }

    /// When the current connect began (with `--close` a request's clock starts there).
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Its connect or handshake has taken longer than `limit` by `now`.
    pub fn setting_up_past(&self, now: Instant, limit: Duration) -> bool {
        match self.state {
            State::Connecting => now.duration_since(self.started) > limit,
            State::Handshaking => now.duration_since(self.tls_started) > limit,
            State::Up | State::Down => false,
        }
    }

    /// It has been up at least once.
    pub fn connected_once(&self) -> bool {
        self.connected_once
    }

    // --- Sending.

    /// Whether it may have one more request in flight: fewer than `pipeline` (`--pipeline`,
    /// `--streams`), and the server leaves room.
    pub fn has_room(&self, pipeline: usize) -> bool {
        self.inflight.len() < pipeline && self.session.room() > 0
    }

    /// Sends a request of `class` meant for `intended`, timed from `at`.
    #[inline]
    pub fn send<B: Books + ?Sized>(&mut self, intended: Instant, at: Instant, class: u8, now: Instant, books: &mut B) {
        let r = Sent {
            intended,
            at,
            class,
            stream: 0,
            lane: 0,
            tries: 0,
        };
        self.write(r, false, now, books);
    }

    /// Sends the oldest request waiting to be sent again, as it was meant to go: `false` if
    /// none waits.
    pub fn resend<B: Books + ?Sized>(&mut self, now: Instant, books: &mut B) -> bool {
        let Some(r) = self.retry.pop_front() else {
            return false;
        };
        self.write(Sent { at: now, ..r }, true, now, books);
        true
    }

    /// The session writes request `r` (`retried`: sent again); it is in flight on its stream
    /// and lane.
    #[inline]
    fn write<B: Books + ?Sized>(&mut self, r: Sent, retried: bool, now: Instant, books: &mut B) {
        let mut seq = self.send_seq;
        let (session, mut cx) = self.parts(books);
        let (stream, lane) = session.write(r.class, &mut seq, retried, now, &mut cx);
        self.send_seq = seq;
        self.inflight.push_back(Sent { stream, lane, ..r });
        self.on_socket += 1;
    }

    /// A batch of sends is done: the session's counts go to the books, and a server that
    /// leaves no room while nothing is in flight is noticed (stuck since the first time).
    pub fn sends_done<B: Books + ?Sized>(&mut self, now: Instant, books: &mut B) {
        self.session.sent(now, books);
        let stuck = self.inflight.is_empty() && self.session.room() == 0 && !self.session.closing();
        self.stalled = if stuck { self.stalled.or(Some(now)) } else { None };
    }

    /// What the wire has not taken yet.
    pub fn unsent(&self) -> &[u8] {
        self.out.unsent()
    }

    /// The wire took `n` more bytes.
    pub fn wrote(&mut self, n: usize) {
        self.out.took(n);
    }

    /// Nothing waits to be written.
    pub fn all_sent(&self) -> bool {
        self.out.is_empty()
    }

    // --- Receiving.

    /// Bytes the server sent, at `now`. An error where the connection cannot go on: the class
    /// it fails with.
    #[inline]
    pub fn input<B: Books + ?Sized>(&mut self, bytes: &[u8], now: Instant, books: &mut B) -> Result<(), ErrorClass> {
        let (session, mut cx) = self.parts(books);
        session.input(bytes, now, &mut cx)
    }

    /// The server closed, at `now`: a response delimited by the close completes, and what the
    /// close cut is the error (`Ok`: it closed an idle connection, to be opened again).
    pub fn closed<B: Books + ?Sized>(&mut self, now: Instant, books: &mut B) -> Result<(), ErrorClass> {
        let (session, mut cx) = self.parts(books);
        session.closed(now, &mut cx)?;
        if self.session.streams().is_some_and(|s| !s.is_empty()) {
            // An event stream the server ended before its end: an error of its own.
            return Err(ErrorClass::StreamCut);
        }
        if !self.inflight.is_empty() || self.session.mid_message() {
            return Err(ErrorClass::UnexpectedClose);
        }
        Ok(())
    }

    // --- What next.

    /// What it asks of the engine now: a socket that takes no new request
    /// ([`Connection::finishing`]) closes once nothing is in flight on it, whatever it has
    /// left to write (a body the server answered before reading it all); otherwise what it
    /// holds goes out; a failed one waits out its back-off; a closed one asks for nothing
    /// (`Read`: the engine opens it again when its pacing says so).
    #[inline]
    pub fn next(&self) -> Next {
        match self.state {
            State::Down => self.reconnect_at.map_or(Next::Read, Next::Wait),
            State::Up if self.finishing() && self.inflight.is_empty() => Next::Close,
            _ if !self.out.is_empty() => Next::Send,
            _ => Next::Read,
        }
    }

    /// Its socket takes no new request: the server closes it, it carried its share
    /// ([`Reuse::per_socket`]), or (closed loop) the requests it reserved are used.
    #[inline]
    pub fn finishing(&self) -> bool {
        let Reuse { per_socket, open_loop } = self.reuse;
        self.server_closing
            || per_socket.is_some_and(|k| self.on_socket >= k)
            || (per_socket.is_some() && self.tickets.left() == 0 && !open_loop)
    }

    /// Its socket carried all the requests one may ([`Reuse::per_socket`]).
    pub fn used_up(&self) -> bool {
        self.reuse.per_socket.is_some_and(|k| self.on_socket >= k)
    }

    /// The server said it closes after its last response.
    pub fn server_closing(&self) -> bool {
        self.server_closing
    }

    /// No request is in flight.
    pub fn idle(&self) -> bool {
        self.inflight.is_empty()
    }

    /// Requests wait to be sent again.
    pub fn resends_waiting(&self) -> bool {
        !self.retry.is_empty()
    }

    /// Requests its socket reserved and has not used.
    pub fn tickets_left(&self) -> u64 {
        self.tickets.left()
    }

    /// The requests its socket reserved.
    pub fn tickets(&mut self) -> &mut Tickets {
        &mut self.tickets
    }

    /// Every request sent and not answered: in flight, and waiting to be sent again.
    pub fn pending(&self) -> impl Iterator<Item = &Sent> {
        self.inflight.iter().chain(&self.retry)
    }

    /// Whether, by `now`, its connect, its oldest request (an event stream from its last event)
    /// or its stall has taken longer than `limit`.
    pub fn late(&self, now: Instant, limit: Duration) -> bool {
        match self.state {
            State::Connecting | State::Handshaking => self.setting_up_past(now, limit),
            // Nothing in flight but requests to send again that the server leaves no room
            // for (HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS of 0) is stuck as well.
            State::Up => {
                let oldest = self
                    .inflight
                    .front()
                    .or(self.retry.front().filter(|_| self.inflight.is_empty()));
                oldest.is_some_and(|r| {
                    let since = self.session.streams().map_or(r.at, |s| s.quiet_since(r));
                    now.duration_since(since) > limit
                }) || self.stalled.is_some_and(|t| now.duration_since(t) > limit)
            }
            State::Down => false,
        }
    }

    // --- Its end.

    /// It failed at `now`: its event streams are cut, what waits to be sent again is charged
    /// a try (it waits for the next socket), and what its socket reserved is handed back. The
    /// socket is still to be closed ([`Connection::close`]), then a back-off waited out
    /// ([`Connection::back_off`]).
    pub fn fail<B: Books + ?Sized>(&mut self, now: Instant, books: &mut B) -> Failed {
        if let Some(s) = self.session.streams_mut() {
            s.end(None, now, true, books);
        }
        let class = self.inflight.front().map(|r| r.class);
        let waiting: Vec<Sent> = self.retry.drain(..).collect();
        let none_waiting = waiting.is_empty();
        for r in waiting {
            again(&mut self.retry, books, r, now);
        }
        let unused = self.tickets.give_back();
        Failed {
            class,
            unused,
            idle: self.inflight.is_empty() && none_waiting,
        }
    }

    /// After a failure, closed: it connects again no sooner than a back-off from `now`, which
    /// doubles with each failure up to [`BACKOFF_MAX`] and starts over once it connects
    /// ([`Connection::next`] says until when).
    pub fn back_off(&mut self, now: Instant) {
        let b = self.backoff;
        self.backoff = (b * 2).min(BACKOFF_MAX);
        self.reconnect_at = Some(now + b);
    }

    /// Its socket is gone: what belonged to it is forgotten; returns the requests that were in
    /// flight on it (those to send again stay).
    pub fn close(&mut self) -> Vec<Sent> {
        self.state = State::Down;
        self.reconnect_at = None;
        let lost: Vec<Sent> = self.inflight.drain(..).collect();
        self.session.reset(self.send_seq, &lost);
        self.on_socket = 0;
        self.out.clear();
        self.server_closing = false;
        self.stalled = None;
        lost
    }

    /// After the window: the classes of its requests still awaited — in flight, or waiting to
    /// be sent again, and not event streams (`--sse`: none is awaited).
    pub fn awaited(&self) -> Vec<u8> {
        if self.all_streams {
            return Vec::new();
        }
        let s = &self.session;
        self.inflight
            .iter()
            .enumerate()
            .filter(|(pos, r)| !s.streaming(*pos, r))
            .map(|(_, r)| r)
            .chain(&self.retry)
            .map(|r| r.class)
            .collect()
    }

    /// After the window: what waits to be sent again will not be.
    pub fn forget_resends(&mut self) {
        self.retry.clear();
    }

    /// At the window's close (`now`): its event streams still going count their open gap as
    /// of the close, and each request known to be a stream (`--sse`: every one) whose first
    /// event has not come counts its wait so far.
    pub fn streams_at_close(&self, now: Instant, tally: &mut Tally) {
        let sse = self.all_streams;
        let unstarted: Vec<Instant> = self
            .inflight
            .iter()
            .enumerate()
            .filter(|(pos, r)| self.session.unstarted_stream(*pos, r, sse))
            .map(|(_, r)| r.intended)
            .collect();
        let open = self.session.streams().filter(|s| !s.is_empty());
        if unstarted.is_empty() && open.is_none() {
            return;
        }
        let t = tally.sse.get_or_insert_with(Default::default);
        if let Some(s) = open {
            s.at_close(now, t);
        }
        for intended in unstarted {
            crate::load::SseStream::new(intended).at_close(now, t);
        }
    }
}
