//! One connection slot of an engine thread: its socket (and TLS), the requests in flight on
//! it, what it has yet to write, its readers, and the state of its life cycle.
//!
//! Its invariants live here, in methods, not in fields the engine sets: the life cycle moves
//! Down → Connecting → (Handshaking →) Up → Down only through [`Conn::connecting`],
//! [`Conn::handshaking`], [`Conn::up`] and [`Conn::close_socket`], each setting what goes with
//! it (the socket, the times connect and handshake are measured from); what is to be written
//! is an [`Outbox`] (bytes go on at the end, leave from the front); the requests reserved for
//! a socket are [`Tickets`] (never more counted than held).

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::load::h2::H2Conn;
use crate::load::keyed::KeyedConn;
use crate::load::{EchoReader, HttpReader};
use crate::timer::Armed;

/// First and largest pause before reconnecting after a failure.
pub(super) const BACKOFF_MIN: Duration = Duration::from_millis(10);
pub(super) const BACKOFF_MAX: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Down,
    Connecting,
    /// TCP is up, the TLS handshake is not done (https targets).
    Handshaking,
    Up,
}

/// A request sent and not answered yet.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sent {
    /// When it was meant to go (open loop: its scheduled time).
    pub(super) intended: Instant,
    /// When it went.
    pub(super) at: Instant,
    /// Its class (`--mix`; 0 without).
    pub(super) class: u8,
    /// HTTP/2: its stream, and the lane (of the connection's `--streams`) it took.
    pub(super) stream: u32,
    pub(super) lane: u16,
    /// HTTP/2: times it was sent again (refused, above a GOAWAY's last stream, or waiting when
    /// its connection failed).
    pub(super) tries: u8,
}

/// What a connection has yet to write: requests go on at the end, the socket takes from the
/// front, and once it has taken all the buffer is empty again.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    buf: Vec<u8>,
    sent: usize,
}

impl Outbox {
    /// Where the next request is written: after everything waiting (append only).
    pub(super) fn queue(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// What the socket has not taken yet.
    pub(super) fn unsent(&self) -> &[u8] {
        &self.buf[self.sent.min(self.buf.len())..]
    }

    /// The socket took `n` more bytes.
    pub(super) fn took(&mut self, n: usize) {
        self.sent += n;
        debug_assert!(self.sent <= self.buf.len(), "took more than was queued");
        if self.sent >= self.buf.len() {
            self.clear();
        }
    }

    /// Nothing is waiting.
    pub(super) fn is_empty(&self) -> bool {
        self.sent >= self.buf.len()
    }

    fn clear(&mut self) {
        self.buf.clear();
        self.sent = 0;
    }
}

/// The requests reserved for a socket when it opened, with a per-socket limit (`--close`,
/// `--requests-per-conn`), and how many of them were counted against the quota then (never
/// more than it holds).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Tickets {
    left: u64,
    counted: u64,
}

impl Tickets {
    /// `left` reserved, `counted` of them counted already.
    pub(super) fn reserve(&mut self, left: u64, counted: u64) {
        debug_assert!(counted <= left);
        *self = Tickets { left, counted };
    }

    /// Reserved and not used yet.
    pub(super) fn left(&self) -> u64 {
        self.left
    }

    /// One is used: `Some(true)` when it had been counted against the quota at reservation,
    /// `None` when none was left.
    pub(super) fn take(&mut self) -> Option<bool> {
        self.left = self.left.checked_sub(1)?;
        let counted = self.counted > 0;
        self.counted -= u64::from(counted);
        Some(counted)
    }

    /// The socket is done with them: those unused (and how many of them were counted) go
    /// back; none are left.
    pub(super) fn give_back(&mut self) -> (u64, u64) {
        let Tickets { left, counted } = std::mem::take(self);
        (left, counted)
    }
}

/// A connection slot.
pub(super) struct Conn {
    /// Global slot number (echo patterns and bodies differ per slot).
    pub(super) slot: u64,
    fd: Option<OwnedFd>,
    /// The TLS connection over `fd` (https targets).
    tls: Option<Box<rustls::ClientConnection>>,
    /// When the TLS handshake began.
    tls_started: Instant,
    state: State,
    /// When the current connect began.
    started: Instant,
    /// Requests awaiting responses, oldest first.
    pub(super) inflight: VecDeque<Sent>,
    /// Requests sent on the current socket.
    on_socket: u64,
    /// Bytes to write.
    pub(super) out: Outbox,
    pub(super) http: HttpReader,
    /// The event streams being received, by HTTP/2 stream (HTTP/1.1's, the oldest request's
    /// response, is 0).
    pub(super) sse: Vec<(u32, crate::load::SseStream)>,
    pub(super) echo: EchoReader,
    /// The HTTP/2 session (h2 targets).
    pub(super) h2: Option<Box<H2Conn>>,
    /// A keyed target's commands: what goes next, what is expected back.
    pub(super) keyed: Option<Box<KeyedConn>>,
    /// HTTP/2 requests the server did not process (refused, or above a GOAWAY's last stream),
    /// to be sent again, keeping when they were meant to go.
    pub(super) retry: VecDeque<Sent>,
    /// HTTP/2 lanes free for a new stream, the one freed longest ago first (so each lane is
    /// a closed loop of its own, and an open loop's requests take them in turn).
    pub(super) lanes: VecDeque<u16>,
    /// Messages sent on this slot (the pattern's sequence number).
    send_seq: u64,
    /// A timer (think time, a booked connect, a reconnect back-off) is set for this instant.
    pub(super) wake: Armed,
    /// A connect time under `--connect-rate` is booked for this slot (its timer is set).
    connect_booked: bool,
    /// Counted among the connections up before sending started (`--connect-first`).
    counted_up: bool,
    /// Its first connect attempt has ended (up, or failed).
    tried: bool,
    backoff: Duration,
    connected_once: bool,
    /// The server announced it will close after the last response.
    server_closing: bool,
    /// Offered to the open loop's schedule as free.
    in_free: bool,
    /// HTTP/2: since when the server has left no room for a stream (its
    /// SETTINGS_MAX_CONCURRENT_STREAMS) while nothing is in flight: stuck, and timed out by
    /// `--timeout` like a request.
    stalled: Option<Instant>,
    /// Requests reserved for this socket when it was opened, so no socket opens for nothing
    /// at the end.
    pub(super) tickets: Tickets,
}

impl Conn {
    /// Slot `slot`, down, from `t0`, reading HTTP responses with `http` (an HTTP/2 session
    /// `h2` of `streams` lanes, a keyed target's commands `keyed`).
    pub(super) fn new(
        slot: u64,
        t0: Instant,
        http: HttpReader,
        size: usize,
        h2: Option<H2Conn>,
        streams: usize,
        keyed: Option<KeyedConn>,
    ) -> Conn {
        Conn {
            slot,
            fd: None,
            tls: None,
            tls_started: t0,
            state: State::Down,
            started: t0,
            inflight: VecDeque::new(),
            on_socket: 0,
            out: Outbox::default(),
            http,
            sse: Vec::new(),
            echo: EchoReader::new(size),
            lanes: match h2 {
                Some(_) => (0..streams as u16).collect(),
                None => VecDeque::new(),
            },
            h2: h2.map(Box::new),
            keyed: keyed.map(Box::new),
            retry: VecDeque::new(),
            send_seq: 0,
            wake: Armed::default(),
            connect_booked: false,
            counted_up: false,
            tried: false,
            backoff: BACKOFF_MIN,
            connected_once: false,
            server_closing: false,
            in_free: false,
            stalled: None,
            tickets: Tickets::default(),
        }
    }

    /// Closes the socket and forgets what belonged to it; returns the requests that were in
    /// flight on it (those to send again stay).
    pub(super) fn close_socket(&mut self) -> Vec<Sent> {
        self.tls = None;
        self.fd = None;
        self.state = State::Down;
        let lost: Vec<Sent> = self.inflight.drain(..).collect();
        if let Some(h) = self.h2.as_mut() {
            h.reset();
            self.lanes.extend(lost.iter().map(|r| r.lane));
        }
        self.on_socket = 0;
        self.out.clear();
        self.http.reset(self.send_seq);
        self.echo.reset(self.send_seq);
        if let Some(k) = self.keyed.as_mut() {
            k.socket_closed();
        }
        self.server_closing = false;
        self.stalled = None;
        lost
    }

    /// Where it is in its life.
    pub(super) fn state(&self) -> State {
        self.state
    }

    pub(super) fn is_up(&self) -> bool {
        self.state == State::Up
    }

    /// Its socket (none while down).
    pub(super) fn fd(&self) -> Option<&OwnedFd> {
        self.fd.as_ref()
    }

    /// Its TLS connection (https targets, from the handshake on).
    pub(super) fn tls(&self) -> Option<&rustls::ClientConnection> {
        self.tls.as_deref()
    }

    /// Its socket, TLS connection and output together (a flush uses all three).
    pub(super) fn wire(&mut self) -> (Option<&OwnedFd>, Option<&mut rustls::ClientConnection>, &mut Outbox) {
        (self.fd.as_ref(), self.tls.as_deref_mut(), &mut self.out)
    }

    /// A connect on `fd` began at `now`.
    pub(super) fn connecting(&mut self, fd: OwnedFd, now: Instant) {
        debug_assert_eq!(self.state, State::Down);
        self.fd = Some(fd);
        self.state = State::Connecting;
        self.started = now;
    }

    /// TCP is up: how long the connect took. The back-off starts over.
    pub(super) fn connected(&mut self, now: Instant) -> Duration {
        self.connected_once = true;
        self.backoff = BACKOFF_MIN;
        now.duration_since(self.started)
    }

    /// A TLS handshake began at `now` over the socket.
    pub(super) fn handshaking(&mut self, tls: rustls::ClientConnection, now: Instant) {
        debug_assert_eq!(self.state, State::Connecting);
        self.tls = Some(Box::new(tls));
        self.state = State::Handshaking;
        self.tls_started = now;
    }

    /// The TLS handshake is done: how long it took, if one was going.
    pub(super) fn handshake_done(&self, now: Instant) -> Option<Duration> {
        (self.state == State::Handshaking && self.tls.as_ref().is_some_and(|t| !t.is_handshaking()))
            .then(|| now.duration_since(self.tls_started))
    }

    /// It can carry requests.
    pub(super) fn up(&mut self) {
        debug_assert!(matches!(self.state, State::Connecting | State::Handshaking));
        self.state = State::Up;
    }

    /// When the current connect began (with `--close` a request's clock starts there).
    pub(super) fn started(&self) -> Instant {
        self.started
    }

    /// Its connect or handshake has taken longer than `limit` by `now`.
    pub(super) fn setting_up_past(&self, now: Instant, limit: Duration) -> bool {
        match self.state {
            State::Connecting => now.duration_since(self.started) > limit,
            State::Handshaking => now.duration_since(self.tls_started) > limit,
            State::Up | State::Down => false,
        }
    }

    /// It has been up at least once.
    pub(super) fn connected_once(&self) -> bool {
        self.connected_once
    }

    /// The next message's sequence number (the body pattern's), taken.
    pub(super) fn next_seq(&mut self) -> u64 {
        self.send_seq += 1;
        self.send_seq - 1
    }

    /// A request went on the current socket.
    pub(super) fn sent_one(&mut self) {
        self.on_socket += 1;
    }

    /// Requests sent on the current socket.
    pub(super) fn on_socket(&self) -> u64 {
        self.on_socket
    }

    /// The server said it closes after its last response (`Connection: close`, GOAWAY).
    pub(super) fn server_closes(&mut self) {
        self.server_closing = true;
    }

    pub(super) fn server_closing(&self) -> bool {
        self.server_closing
    }

    /// Offered to the open loop's schedule as free: `true` if it was not already (and is up).
    pub(super) fn offer(&mut self) -> bool {
        let fresh = !self.in_free && self.state == State::Up;
        self.in_free |= fresh;
        fresh
    }

    /// The schedule took it.
    pub(super) fn taken(&mut self) {
        self.in_free = false;
    }

    /// HTTP/2: whether the server leaves it no room with nothing in flight (`stuck`) as of
    /// `now`; stuck since the first time it was.
    pub(super) fn stall(&mut self, stuck: bool, now: Instant) {
        self.stalled = if stuck { self.stalled.or(Some(now)) } else { None };
    }

    /// HTTP/2: stuck for longer than `limit` by `now`.
    pub(super) fn stalled_past(&self, now: Instant, limit: Duration) -> bool {
        self.stalled.is_some_and(|t| now.duration_since(t) > limit)
    }

    /// A connect time under `--connect-rate` is booked for it (its timer is set).
    pub(super) fn book(&mut self) {
        self.connect_booked = true;
    }

    /// Whether it had a connect time booked (now used).
    pub(super) fn take_booking(&mut self) -> bool {
        std::mem::take(&mut self.connect_booked)
    }

    /// It is up before sending started (`--connect-first` counts it): `true` the first time.
    pub(super) fn up_before_sending(&mut self) -> bool {
        !std::mem::replace(&mut self.counted_up, true)
    }

    /// Its first attempt ended; `true` the first time.
    pub(super) fn first_try_over(&mut self) -> bool {
        !std::mem::replace(&mut self.tried, true)
    }

    /// The pause before the next reconnect, doubling up to [`BACKOFF_MAX`].
    pub(super) fn next_backoff(&mut self) -> Duration {
        let b = self.backoff;
        self.backoff = (b * 2).min(BACKOFF_MAX);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outbox_gives_the_socket_what_was_queued_in_order_and_is_empty_once_all_is_taken() {
        let mut o = Outbox::default();
        assert!(o.is_empty());
        o.queue().extend_from_slice(b"GET /a");
        o.took(4);
        o.queue().extend_from_slice(b"GET /b");
        assert_eq!(o.unsent(), b"/aGET /b", "what the socket took does not come again");
        o.took(8);
        assert!(o.is_empty() && o.unsent().is_empty());
        o.queue().extend_from_slice(b"x");
        assert_eq!(o.unsent(), b"x", "emptied, it starts over at the front");
    }

    #[test]
    fn tickets_never_count_more_than_they_hold_and_what_is_unused_goes_back() {
        let mut t = Tickets::default();
        assert_eq!(t.take(), None, "none reserved");
        t.reserve(3, 2);
        assert_eq!((t.take(), t.take(), t.left()), (Some(true), Some(true), 1));
        assert_eq!(t.take(), Some(false), "the third was not counted at reservation");
        assert_eq!(t.take(), None);
        t.reserve(5, 1);
        t.take();
        assert_eq!(t.give_back(), (4, 0), "four unused, none of them counted");
        assert_eq!((t.left(), t.take()), (0, None), "given back: none left");
    }

    #[test]
    fn a_slot_is_up_only_through_its_connect_and_times_the_connect_from_its_start() {
        let t0 = Instant::now();
        let mut c = Conn::new(7, t0, HttpReader::new(false), 0, None, 1, None);
        assert_eq!((c.state(), c.fd().is_none()), (State::Down, true));
        let fd = OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
        c.connecting(fd, t0);
        assert_eq!(c.state(), State::Connecting);
        assert!(c.setting_up_past(t0 + Duration::from_secs(2), Duration::from_secs(1)));
        assert!(!c.setting_up_past(t0 + Duration::from_millis(500), Duration::from_secs(1)));
        assert!(!c.connected_once());
        assert_eq!(c.connected(t0 + Duration::from_millis(3)), Duration::from_millis(3));
        c.up();
        assert!(c.is_up() && c.connected_once() && c.fd().is_some());
        assert!(c.offer() && !c.offer(), "offered to the schedule once");
        c.out.queue().extend_from_slice(b"left over");
        c.server_closes();
        c.stall(true, t0);
        c.stall(true, t0 + Duration::from_secs(5));
        assert!(
            c.stalled_past(t0 + Duration::from_secs(2), Duration::from_secs(1)),
            "stuck since the first time"
        );
        c.close_socket();
        assert_eq!(
            (c.state(), c.fd().is_none(), c.out.is_empty()),
            (State::Down, true, true)
        );
        assert!(!c.server_closing() && !c.stalled_past(t0 + Duration::from_secs(9), Duration::ZERO));
        assert_eq!((c.next_seq(), c.next_seq()), (0, 1));
    }
}
