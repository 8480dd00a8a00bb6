//! One connection's protocol state ([`Session`]): which protocol, chosen by `--proto`, by the
//! first bytes of a cleartext h2 port ([`Detect`]) or by TLS's ALPN, and every call a server
//! makes of it, dispatched to that protocol's session.

use std::time::Instant;

use keyed::Framing;

use super::{echo, h2, http, keyed, memcache, packet, resp, tls};
use super::{Each, Fed, Limits, Proto, Protocol, ServeAll, MAX_BODY};

/// One connection's protocol state.
#[derive(Debug)]
pub enum Session {
    Http(http::HttpSession),
    Echo(echo::EchoSession),
    Packet(packet::PacketSession),
    /// HTTP/2, after its preface.
    H2(Box<h2::H2Session>),
    /// The first bytes of a cleartext `--proto h2` connection: the HTTP/2 preface makes it
    /// HTTP/2, anything else HTTP/1.1.
    Detect(Detect),
    /// Any of the others behind TLS (`serve --tls`).
    Tls(Box<tls::TlsSession<Session>>),
    Resp(resp::RespSession),
    Memcache(memcache::McSession),
}

/// A connection whose protocol its first bytes decide.
#[derive(Debug)]
pub struct Detect {
    /// Bytes of the preface seen so far (all of them matched).
    seen: usize,
    /// Once they did not match: the first line so far, to tell HTTP/1.1 from a bad preface.
    line: Vec<u8>,
    limits: Limits,
}

impl Session {
    pub fn new(proto: Proto) -> Session {
        Session::with_max_body(proto, MAX_BODY)
    }

    /// A session whose HTTP requests may carry bodies up to `max_body` bytes.
    pub fn with_max_body(proto: Proto, max_body: usize) -> Session {
        Session::with_limits(
            proto,
            Limits {
                max_body,
                ..Limits::default()
            },
        )
    }

    /// A session under a server's limits.
    pub fn with_limits(proto: Proto, limits: Limits) -> Session {
        match proto {
            Proto::Http => Session::Http(http::HttpSession::new(limits.max_body)),
            Proto::Echo => Session::Echo(echo::EchoSession::default()),
            Proto::Packet(size) => Session::Packet(packet::PacketSession::new(size)),
            Proto::H2 => Session::Detect(Detect {
                seen: 0,
                line: Vec::new(),
                limits,
            }),
            Proto::Resp => Session::Resp(resp::RespSession::new(limits.max_value)),
            Proto::Memcache => Session::Memcache(memcache::McSession::new(limits.max_value)),
        }
    }

    /// `session` behind TLS with `cfg` (what `serve --tls` gives every connection).
    pub fn with_tls(cfg: std::sync::Arc<rustls::ServerConfig>, session: Session) -> Session {
        match tls::TlsSession::new(cfg, session) {
            Ok(t) => Session::Tls(Box::new(t)),
            // rustls refuses only a configuration it cannot use, which `server_config` checked.
            Err(e) => panic!("TLS session: {e}"),
        }
    }

    /// What to send a client whose request head timed out, before closing (HTTP's 408; behind
    /// TLS nothing: the connection just closes).
    pub fn timeout_response(&self) -> &'static [u8] {
        match self {
            Session::Http(_) => http::REQUEST_TIMEOUT,
            _ => b"",
        }
    }

    /// Consumes `input` (any split of the stream), appends the responses to `out`.
    #[inline]
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Fed {
        self.feed_each(input, out, &mut ServeAll)
    }
}

impl Protocol for Session {
    /// The session for the protocol TLS's ALPN chose (`h2` or `http/1.1`); without a choice,
    /// the one the first bytes decide.
    fn for_alpn(&self, alpn: Option<&[u8]>) -> Option<Session> {
        let Session::Detect(d) = self else { return None };
        match alpn? {
            b"h2" => Some(Session::H2(Box::new(h2::H2Session::new(d.limits, true)))),
            _ => Some(Session::Http(http::HttpSession::new(d.limits.max_body))),
        }
    }

    /// What a stopping server sends before it closes the connection: HTTP/2's GOAWAY (its
    /// event streams ended first), HTTP/1.1's last chunk of an event stream going out (the
    /// others need nothing).
    fn farewell(&mut self, out: &mut Vec<u8>) {
        match self {
            Session::H2(s) => s.goaway(out),
            Session::Tls(s) => s.farewell(out),
            Session::Http(s) => s.farewell(out),
            _ => {}
        }
    }

    /// What a connection closed for a reason of its own (a deadline, the peer's close or
    /// error; not a stopping server) sends: a response still going out is cut, and looks cut.
    /// HTTP/1.x writes nothing (no last chunk: the close ends it short); HTTP/2 resets every
    /// stream whose response has not ended (RST_STREAM CANCEL), then GOAWAY.
    fn cut(&mut self, out: &mut Vec<u8>) {
        match self {
            Session::H2(s) => s.cut(out),
            Session::Tls(s) => s.cut(out),
            Session::Http(s) => s.cut(),
            _ => {}
        }
    }

    /// Inside an HTTP request head that is not complete yet, or a TLS handshake (what
    /// `--header-timeout` limits).
    fn head_pending(&self) -> bool {
        match self {
            Session::Http(s) => s.head_pending(),
            Session::Tls(s) => s.head_pending(),
            Session::H2(s) => s.head_pending(),
            Session::Detect(d) => d.seen > 0 || !d.line.is_empty(),
            _ => false,
        }
    }

    /// The session stopped consuming input at the bound on output ([`Each::room`]) and holds
    /// the rest: feed it again (with nothing new) once the output has drained, before reading
    /// more.
    fn holding(&self) -> bool {
        match self {
            Session::Http(s) => s.holding(),
            Session::Echo(s) => s.holding(),
            Session::Packet(s) => s.holding(),
            Session::Tls(s) => s.holding(),
            Session::H2(s) => s.holding(),
            Session::Resp(s) => s.core().holding(),
            Session::Memcache(s) => s.core().holding(),
            Session::Detect(_) => false,
        }
    }

    /// Gives up the buffers a burst grew that an idle connection does not need (the
    /// connection's model calls it once the connection is idle): the bytes given up.
    fn trim(&mut self) -> usize {
        match self {
            Session::Http(s) => s.trim(),
            Session::Echo(s) => s.trim(),
            Session::Packet(s) => s.trim(),
            Session::Tls(s) => s.trim(),
            Session::H2(s) => s.trim(),
            Session::Resp(s) => s.core_mut().trim(),
            Session::Memcache(s) => s.core_mut().trim(),
            Session::Detect(_) => 0,
        }
    }

    /// When a response that finishes later ([`later`](super::later)) has its next piece due: the model wakes
    /// then and calls [`Session::advance_each`]. `None`: nothing is owed.
    fn due(&self) -> Option<Instant> {
        match self {
            Session::Http(s) => s.due(),
            Session::Tls(s) => s.due(),
            Session::H2(s) => s.due(),
            _ => None,
        }
    }

    /// A response is owed later ([`later`](super::later)): an event stream going out, or a response waiting
    /// for its work. The connection is not idle meanwhile: the silence is the server's.
    fn owes(&self) -> bool {
        match self {
            Session::Http(s) => s.owes(),
            Session::Tls(s) => s.owes(),
            Session::H2(s) => s.owes(),
            Session::Resp(s) => s.core().owes(),
            Session::Memcache(s) => s.core().owes(),
            _ => false,
        }
    }

    /// A keyed session (RESP, memcache) owes answers other threads are running: a peer that
    /// has finished sending still gets them before the close (an HTTP response owed later
    /// is not held so: HTTP/1.x reads nothing while it owes, HTTP/2 needs its peer's window).
    fn answers_owed(&self) -> bool {
        match self {
            Session::Resp(s) => s.core().owes(),
            Session::Memcache(s) => s.core().owes(),
            Session::Tls(s) => s.answers_owed(),
            _ => false,
        }
    }

    /// A keyed session whose answers other threads build tells them the room its output has
    /// now: what they build from then on is not held to the room left when it was asked.
    fn output_gone(&mut self, bound: usize) {
        match self {
            Session::Resp(s) => s.core().slots.drained(bound),
            Session::Memcache(s) => s.core().slots.drained(bound),
            Session::Tls(s) => s.output_gone(bound),
            _ => {}
        }
    }

    /// Input waits behind a response owed later ([`later`](super::later)): HTTP/1.x answers in order, so a
    /// connection reads nothing more until the response has gone, and TCP holds what the
    /// client sends meanwhile (its writes wait). A wiring that stops reading then holds at most
    /// one read of input here. HTTP/2 never pauses: its other streams, window updates, pings
    /// and resets must flow, under its own bounds.
    fn paused(&self) -> bool {
        match self {
            Session::Http(s) => s.paused(),
            Session::Tls(s) => s.paused(),
            Session::Resp(s) => s.core().paused(),
            Session::Memcache(s) => s.core().paused(),
            _ => false,
        }
    }

    /// Output waits for the client's flow-control window (HTTP/2): nothing of it can go until
    /// the client grants more. A client that reads TCP but never grants is stalling it.
    fn window_held(&self) -> bool {
        match self {
            Session::H2(s) => s.window_held(),
            Session::Tls(s) => s.window_held(),
            _ => false,
        }
    }

    /// Bytes of input the session holds, not consumed yet (HTTP/1.x's, RESP's, memcache's and
    /// TLS's buffers; the others' are bounded by their own rules).
    fn behind(&self) -> usize {
        match self {
            Session::Http(s) => s.behind(),
            Session::Tls(s) => s.behind(),
            Session::Resp(s) => s.core().behind(),
            Session::Memcache(s) => s.core().behind(),
            _ => 0,
        }
    }

    /// Writes the pieces of later responses due at `now` to `out`, as far as [`Each::room`]
    /// lets them; a response that ended lets the input held behind it go on (HTTP/1.1's
    /// pipelined requests, answered through `each` as in a feed).
    fn advance_each<F: Each + ?Sized>(&mut self, now: Instant, out: &mut Vec<u8>, each: &mut F) -> Fed {
        match self {
            Session::Http(s) => s.advance(now, out, each),
            Session::Tls(s) => s.advance(now, out, each),
            Session::H2(s) => s.advance(now, out, each),
            _ => Fed::default(),
        }
    }

    /// Writes the response whose ticket is `ticket` ([`later::Later::Pending`](super::later::Later::Pending)), its work done;
    /// then goes on with the input held behind it (HTTP/1.1's pipelined requests, through
    /// `each`). Nothing when no response waits for that ticket (its stream was reset, or its
    /// connection is another one now): `Fed::requests` says whether one was answered.
    fn complete_each<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed {
        match self {
            Session::Http(s) => s.complete(ticket, out, each),
            Session::Tls(s) => s.complete(ticket, out, each),
            Session::H2(s) => s.complete(ticket, out, each),
            Session::Resp(s) => keyed::complete(s, ticket, out, each),
            Session::Memcache(s) => keyed::complete(s, ticket, out, each),
            _ => Fed::default(),
        }
    }

    /// The tickets of the responses waiting for their work ([`later::Later::Pending`](super::later::Later::Pending)): what a
    /// connection that closes cancels.
    fn tickets(&self) -> Vec<u64> {
        match self {
            Session::Http(s) => s.ticket().into_iter().collect(),
            Session::Tls(s) => s.tickets(),
            Session::H2(s) => s.tickets(),
            _ => Vec::new(),
        }
    }

    /// The tickets of responses that will never be written (their HTTP/2 streams were reset),
    /// since the last call: their work may be dropped.
    fn cancelled(&mut self) -> Vec<u64> {
        match self {
            Session::Tls(s) => s.cancelled(),
            Session::H2(s) => s.cancelled(),
            _ => Vec::new(),
        }
    }

    /// [`Session::feed`], calling `each` for every request right before its response is
    /// written, with the output so far (the responses to the requests before it, which `each`
    /// may send and take out): what a server's per-request work runs in, so the response to a
    /// request waits for its own work only, not for the work of requests pipelined after it.
    #[inline]
    fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        match self {
            Session::Http(s) => s.feed(input, out, each),
            Session::Echo(s) => s.feed(input, out, each),
            Session::Packet(s) => s.feed(input, out, each),
            Session::Tls(s) => s.feed(input, out, each),
            Session::H2(s) => s.feed(input, out, each),
            Session::Resp(s) => keyed::feed(s, input, out, each),
            Session::Memcache(s) => keyed::feed(s, input, out, each),
            Session::Detect(d) => {
                let preface = h2::frame::PREFACE;
                if d.line.is_empty() {
                    let n = (preface.len() - d.seen).min(input.len());
                    if input[..n] == preface[d.seen..d.seen + n] {
                        d.seen += n;
                        if d.seen < preface.len() {
                            return Fed::default();
                        }
                        *self = Session::H2(Box::new(h2::H2Session::new(d.limits, false)));
                        return self.feed_each(&input[n..], out, each);
                    }
                    d.line.extend_from_slice(&preface[..d.seen]);
                }
                // Not the preface: HTTP/1.1 if its first line is an HTTP/1.x request line, else
                // HTTP/2 with a bad preface (its connection error: GOAWAY and close).
                d.line.extend_from_slice(input);
                let end = d.line.iter().position(|&c| c == b'\n');
                if end.is_none() && d.line.len() < http::MAX_HEAD {
                    return Fed::default();
                }
                let http1 = end.is_none_or(|e| {
                    let l = d.line[..e].strip_suffix(b"\r").unwrap_or(&d.line[..e]);
                    l.ends_with(b" HTTP/1.1") || l.ends_with(b" HTTP/1.0")
                });
                let (limits, line) = (d.limits, std::mem::take(&mut d.line));
                *self = if http1 {
                    Session::Http(http::HttpSession::new(limits.max_body))
                } else {
                    Session::H2(Box::new(h2::H2Session::new(limits, true)))
                };
                self.feed_each(&line, out, each)
            }
        }
    }
}
