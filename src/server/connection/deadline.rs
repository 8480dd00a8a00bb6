//! A connection's deadlines: silence between requests (`--idle-timeout`), output that makes no
//! progress (the same timeout, nginx's `send_timeout`), and a request head that takes too long
//! (`--header-timeout`: a dribbling client must not hold a connection for ever). The
//! connection keeps them, tells them when input arrives and output moves, and asks them for
//! their earliest ([`Deadlines::next`]), which its wiring's one timer brings.

use crate::proto::Protocol;
use std::time::Instant;

use crate::proto::Session;
use crate::server::Config;
use crate::server::Counter;
use crate::timer::Stamp;

/// When a connection last moved, and since when it has been inside a request head (kept as
/// [`Stamp`]s: 16 bytes where two `Instant`s took 32).
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// Last time input arrived or output made progress.
    last: Stamp,
    /// When the request head being received began; `None` between requests.
    head_since: Option<Stamp>,
}

/// Why a connection must be closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expired {
    /// Silent between requests.
    Idle,
    /// Its output made no progress.
    Send,
    /// Its output waited for the client's flow-control window (HTTP/2) with nothing moving:
    /// a client that reads but never grants window (its streams are reset as it closes).
    WindowStall,
    /// Its request head did not complete in time: answer 408, then close.
    Header,
}

impl Expired {
    /// The counter of connections closed this way.
    pub fn counter(self) -> Counter {
        match self {
            Expired::Idle => Counter::ClosedIdle,
            Expired::Send => Counter::ClosedSendTimeout,
            Expired::WindowStall => Counter::ClosedWindowStall,
            Expired::Header => Counter::ClosedHeaderTimeout,
        }
    }
}

/// What every model does with a connection it closes, handed to `send` (best effort: whatever
/// the socket takes now): a stopping server's farewell ([`Session::farewell`]: an event
/// stream's last chunk, HTTP/2's END_STREAMs and GOAWAY), or, closed for any other reason, the
/// cut ([`Session::cut`]: no last chunk; HTTP/2's RST_STREAMs and GOAWAY). Nothing for the
/// other protocols, and nothing allocated for them.
pub fn part(session: &mut Session, stopping: bool, send: impl FnOnce(&[u8])) {
    let mut last = Vec::new();
    match stopping {
        true => session.farewell(&mut last),
        false => session.cut(&mut last),
    }
    if !last.is_empty() {
        send(&last);
    }
}

impl Deadlines {
    pub fn new(now: Instant) -> Deadlines {
        Deadlines {
            last: Stamp::of(now),
            head_since: None,
        }
    }

    /// Input arrived and was fed to `session`; `answered`: it completed at least one request;
    /// `quiet`: it was only frames that ask nothing of the server (HTTP/2's PING, PRIORITY,
    /// empty DATA...: [`crate::proto::Fed::quiet`]), which do not keep the connection from
    /// being idle. The head timer runs from the first byte of each request head until that
    /// head completes: a head still pending after a request was answered is the next one's,
    /// begun in this input (a pipelining client that always sends the start of its next
    /// request with the end of the last is not timed from its first request).
    pub fn input(&mut self, session: &Session, answered: bool, quiet: bool, now: Instant) {
        let now = Stamp::of(now);
        if !quiet {
            self.last = now;
        }
        self.head_since = match (session.head_pending(), self.head_since) {
            (false, _) => None,
            (true, Some(since)) if !answered => Some(since),
            (true, _) => Some(now),
        };
    }

    /// When input last arrived or output last moved.
    pub fn last(&self) -> Instant {
        self.last.instant()
    }

    /// Output made progress. A head pending meanwhile is timed from now: while replies were
    /// going out (a blocking write, or output past `--max-output`) the server was not reading,
    /// so the time the head took is not the client's.
    pub fn output(&mut self, now: Instant) {
        let now = Stamp::of(now);
        self.last = now;
        if self.head_since.is_some() {
            self.head_since = Some(now);
        }
    }

    /// The earliest deadline of a connection that has `pending` unsent output, and why it
    /// would close then, if any. While output is pending the server is not reading
    /// (back-pressure: the client has not taken its replies), so a head that is not complete may
    /// be waiting, whole, in the socket: the head timer does not run then (the send timeout
    /// covers a client that takes nothing), and a 408 never lands behind unsent replies.
    ///
    /// A connection whose session owes a later response ([`Session::owes`]: an event stream
    /// between events, a response whose work is in a pool) is not idle: the silence is the
    /// server's. Its output not moving still is a send timeout, in the socket or held for an
    /// HTTP/2 client's window ([`Session::window_held`]: a flow-control stall, nginx's
    /// send_timeout applied there too).
    pub fn next(&self, cfg: &Config, session: &Session, pending: bool) -> Option<(Instant, Expired)> {
        let last = self.last.instant();
        let quiet = match (cfg.idle(), pending) {
            (None, _) => None,
            (Some(idle), true) => Some((last + idle, Expired::Send)),
            (Some(_), false) if session.window_held() => Some((last + cfg.idle_timeout, Expired::WindowStall)),
            (Some(_), false) if session.owes() => None,
            (Some(idle), false) => Some((last + idle, Expired::Idle)),
        };
        let head = match (self.head_since, pending) {
            (Some(since), false) => cfg.header_deadline().map(|t| (since.instant() + t, Expired::Header)),
            _ => None,
        };
        match (head, quiet) {
            (Some(h), Some(q)) if q.0 < h.0 => Some(q),
            (Some(h), _) => Some(h),
            (None, q) => q,
        }
    }

    /// What has expired at `now` for a connection that has `pending` unsent output, if
    /// anything: its earliest deadline, once it has come ([`Deadlines::next`]).
    pub fn expired(&self, cfg: &Config, session: &Session, pending: bool, now: Instant) -> Option<Expired> {
        self.next(cfg, session, pending)
            .filter(|(at, _)| *at <= now)
            .map(|(_, why)| why)
    }
}

#[cfg(test)]
mod server_deadline {
    use std::time::{Duration, Instant};

    use super::{Deadlines, Expired};
    use crate::proto::{Proto, Protocol, Session};
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        cfg: crate::server::ServeArgs,
    }

    fn cfg() -> crate::server::Config {
        // A one-worker model with no flags of its own, as a model descriptor would say.
        Flags::parse_from(["t", "--header-timeout", "1s", "--idle-timeout", "30s"])
            .cfg
            .validate("epoll", crate::server::Workers::None, &[])
            .unwrap()
    }

    /// A session holding the start of a head after one whole request.
    fn half_head() -> Session {
        let mut s = Session::new(Proto::Http);
        let mut out = Vec::new();
        let fed = s.feed(b"GET / HTTP/1.1\r\nHost: t\r\n\r\nGET / HT", &mut out);
        assert_eq!(fed.requests, 1);
        assert!(s.head_pending());
        s
    }

    #[test]
    fn the_head_timer_starts_at_each_head_and_stops_while_replies_wait() {
        let (cfg, t0) = (cfg(), Instant::now());
        let s = half_head();
        let mut d = Deadlines::new(t0);
        // A dribbled head: timed from its first byte, however often bytes come.
        d.input(&s, false, false, t0);
        d.input(&s, false, false, t0 + Duration::from_millis(900));
        assert_eq!(
            d.expired(&cfg, &s, false, t0 + Duration::from_millis(1100)),
            Some(Expired::Header)
        );
        // A request answered in this input: the pending head is the next one's, timed from now.
        d.input(&s, true, false, t0 + Duration::from_millis(1000));
        assert_eq!(d.expired(&cfg, &s, false, t0 + Duration::from_millis(1900)), None);
        assert_eq!(
            d.expired(&cfg, &s, false, t0 + Duration::from_millis(2000)),
            Some(Expired::Header)
        );
        // Replies not taken (the server is not reading): no 408, the rest may wait in the socket.
        assert_eq!(d.expired(&cfg, &s, true, t0 + Duration::from_secs(5)), None);
        // Output moved: the time the server was not reading is not the head's.
        d.output(t0 + Duration::from_secs(5));
        assert_eq!(d.expired(&cfg, &s, false, t0 + Duration::from_millis(5900)), None);
        assert_eq!(
            d.expired(&cfg, &s, false, t0 + Duration::from_secs(6)),
            Some(Expired::Header)
        );
    }
}
