//! One connection slot of an engine thread ([`Slot`]): the I/O its client connection does not
//! do — its socket and TLS — and what the engine's pacing keeps of it: its timer, a connect
//! time booked under `--connect-rate`, whether it counted as up before sending started and
//! as tried, and whether the open loop's schedule holds it as free. Everything else of the
//! connection is the sans-I/O [`Connection`]'s.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::load::client::{Connection, Link};
use crate::load::ErrorClass;
use crate::timer::Armed;

/// A connection slot.
pub(super) struct Slot {
    fd: Option<OwnedFd>,
    /// The TLS connection over `fd` (https targets).
    tls: Option<Box<rustls::ClientConnection>>,
    conn: Connection,
    /// A timer (think time, a booked connect, a reconnect back-off) is set for this instant.
    wake: Armed,
    /// A connect time under `--connect-rate` is booked for this slot (its timer is set).
    booked: bool,
    /// Counted among the connections up before sending started (`--connect-first`).
    counted_up: bool,
    /// Its first connect attempt has ended (up, or failed).
    tried: bool,
    /// Offered to the open loop's schedule as free.
    in_free: bool,
    /// Sends nothing: it connects and holds (`--active`).
    holds: bool,
}

impl Slot {
    /// A slot for `conn`, down; one that `holds` connects and sends nothing.
    pub(super) fn new(conn: Connection, holds: bool) -> Slot {
        Slot {
            fd: None,
            tls: None,
            conn,
            wake: Armed::default(),
            booked: false,
            counted_up: false,
            tried: false,
            in_free: false,
            holds,
        }
    }

    /// It connects and sends nothing (`--active`).
    pub(super) fn holds(&self) -> bool {
        self.holds
    }

    pub(super) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(super) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Its socket (none while down).
    pub(super) fn fd(&self) -> Option<&OwnedFd> {
        self.fd.as_ref()
    }

    /// Its TLS connection (https targets, from the handshake on).
    pub(super) fn tls(&self) -> Option<&rustls::ClientConnection> {
        self.tls.as_deref()
    }

    /// Its socket, TLS connection and connection together (a flush uses all three).
    pub(super) fn wire(&mut self) -> (Option<&OwnedFd>, Option<&mut rustls::ClientConnection>, &mut Connection) {
        (self.fd.as_ref(), self.tls.as_deref_mut(), &mut self.conn)
    }

    /// A connect on `fd` began at `now`.
    pub(super) fn connecting(&mut self, fd: OwnedFd, now: Instant) {
        self.fd = Some(fd);
        self.conn.connecting(now);
    }

    /// A TLS handshake began at `now` over the socket.
    pub(super) fn handshaking(&mut self, tls: rustls::ClientConnection, now: Instant) {
        self.tls = Some(Box::new(tls));
        self.conn.handshaking(now);
    }

    /// The TLS handshake is done: how long it took, if one was going.
    pub(super) fn handshake_done(&self, now: Instant) -> Option<Duration> {
        match self.tls.as_ref() {
            Some(t) if !t.is_handshaking() => self.conn.handshake_took(now),
            _ => None,
        }
    }

    /// The connection is up over its link (TLS's ALPN told it).
    pub(super) fn go_up(&mut self) -> Result<(), ErrorClass> {
        let link = match self.tls.as_deref() {
            Some(t) => Link::Tls {
                alpn: t.alpn_protocol(),
            },
            None => Link::Plain,
        };
        self.conn.up(link)
    }

    /// Closes the socket: returns the requests that were in flight on it.
    pub(super) fn close(&mut self) -> Vec<crate::load::client::Sent> {
        self.tls = None;
        self.fd = None;
        self.conn.close()
    }

    /// Its timer.
    pub(super) fn wake(&mut self) -> &mut Armed {
        &mut self.wake
    }

    /// Whether its timer is set.
    pub(super) fn wake_set(&self) -> bool {
        self.wake.is_set()
    }

    /// Offered to the open loop's schedule as free: `true` if it was not already (and is up).
    pub(super) fn offer(&mut self) -> bool {
        let fresh = !self.in_free && self.conn.is_up();
        self.in_free |= fresh;
        fresh
    }

    /// The schedule took it.
    pub(super) fn taken(&mut self) {
        self.in_free = false;
    }

    /// A connect time under `--connect-rate` is booked for it (its timer is set).
    pub(super) fn book(&mut self) {
        self.booked = true;
    }

    /// Whether it had a connect time booked (now used).
    pub(super) fn take_booking(&mut self) -> bool {
        std::mem::take(&mut self.booked)
    }

    /// It is up before sending started (`--connect-first` counts it): `true` the first time.
    pub(super) fn up_before_sending(&mut self) -> bool {
        !std::mem::replace(&mut self.counted_up, true)
    }

    /// Its first attempt ended; `true` the first time.
    pub(super) fn first_try_over(&mut self) -> bool {
        !std::mem::replace(&mut self.tried, true)
    }
}
