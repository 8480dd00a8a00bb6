//! One connection slot of an engine thread: its socket (and TLS), the requests in flight on
//! it, what it has yet to write, its readers, and the state of its life cycle.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::load::h2::H2Conn;
use crate::load::request::{EchoReader, HttpReader};
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

/// A connection slot.
pub(super) struct Conn {
    /// Global slot number (echo patterns and bodies differ per slot).
    pub(super) slot: u64,
    pub(super) fd: Option<OwnedFd>,
    /// The TLS connection over `fd` (https targets).
    pub(super) tls: Option<Box<rustls::ClientConnection>>,
    /// When the TLS handshake began.
    pub(super) tls_started: Instant,
    pub(super) state: State,
    /// When the current connect began.
    pub(super) started: Instant,
    /// Requests awaiting responses, oldest first.
    pub(super) inflight: VecDeque<Sent>,
    /// Requests sent on the current socket.
    pub(super) on_socket: u64,
    /// Bytes to write, from `out_pos` on.
    pub(super) out: Vec<u8>,
    pub(super) out_pos: usize,
    pub(super) http: HttpReader,
    /// The event streams being received, by HTTP/2 stream (HTTP/1.1's, the oldest request's
    /// response, is 0).
    pub(super) sse: Vec<(u32, crate::load::sse::Stream)>,
    pub(super) echo: EchoReader,
    /// The HTTP/2 session (h2 targets).
    pub(super) h2: Option<Box<H2Conn>>,
    /// HTTP/2 requests the server did not process (refused, or above a GOAWAY's last stream),
    /// to be sent again, keeping when they were meant to go.
    pub(super) retry: VecDeque<Sent>,
    /// HTTP/2 lanes free for a new stream, the one freed longest ago first (so each lane is
    /// a closed loop of its own, and an open loop's requests take them in turn).
    pub(super) lanes: VecDeque<u16>,
    /// Messages sent on this slot (the pattern's sequence number).
    pub(super) send_seq: u64,
    /// A timer (think time, a booked connect, a reconnect back-off) is set for this instant.
    pub(super) wake: Armed,
    /// A connect time under `--connect-rate` is booked for this slot (its timer is set).
    pub(super) connect_booked: bool,
    /// Counted among the connections up before sending started (`--connect-first`).
    pub(super) counted_up: bool,
    /// Its first connect attempt has ended (up, or failed).
    pub(super) tried: bool,
    pub(super) backoff: Duration,
    pub(super) connected_once: bool,
    /// The server announced it will close after the last response.
    pub(super) server_closing: bool,
    /// Offered to the open loop's schedule as free.
    pub(super) in_free: bool,
    /// HTTP/2: since when the server has left no room for a stream (its
    /// SETTINGS_MAX_CONCURRENT_STREAMS) while nothing is in flight: stuck, and timed out by
    /// `--timeout` like a request.
    pub(super) stalled: Option<Instant>,

    /// Requests reserved (and counted) for this socket when it was opened, with a per-socket
    /// limit (`--close`, `--requests-per-conn`), so no socket opens for nothing at the end.
    pub(super) tickets: u64,
    /// How many of `tickets` were counted against the quota (reserved inside the window).
    pub(super) counted: u64,
}

impl Conn {
    /// Slot `slot`, down, from `t0`; its HTTP reader verifies echoed bodies of `verify` bytes.
    pub(super) fn new(
        slot: u64,
        t0: Instant,
        head_only: bool,
        verify: Option<usize>,
        size: usize,
        h2: Option<H2Conn>,
        streams: usize,
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
            out: Vec::new(),
            out_pos: 0,
            http: match verify {
                Some(size) => HttpReader::new(head_only).verifying(slot, size),
                None => HttpReader::new(head_only),
            },
            sse: Vec::new(),
            echo: EchoReader::new(size),
            lanes: match h2 {
                Some(_) => (0..streams as u16).collect(),
                None => VecDeque::new(),
            },
            h2: h2.map(Box::new),
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
            tickets: 0,
            counted: 0,
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
        self.out_pos = 0;
        self.http.reset(self.send_seq);
        self.echo.reset(self.send_seq);
        self.server_closing = false;
        self.stalled = None;
        lost
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
