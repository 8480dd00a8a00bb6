//! `proto`: sans-I/O protocol sessions. Bytes in, bytes out, and whether to keep the connection.
//!
//! No sockets here. Every model drives the same [`Session`], so two models differ only in how
//! they wait for and dispatch I/O, and comparing them is fair.

pub(crate) mod chunked;
pub(crate) mod echo;
pub(crate) mod http;
pub(crate) mod packet;
pub(crate) mod tls;

use std::fmt;

/// Which protocol a server speaks (the `--proto` flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Http,
    Echo,
    /// Fixed-size frames of this many bytes.
    Packet(usize),
}

impl Proto {
    pub fn name(&self) -> &'static str {
        match self {
            Proto::Http => "http",
            Proto::Echo => "echo",
            Proto::Packet(_) => "packet",
        }
    }
}

impl fmt::Display for Proto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A request about to be answered, as a server's hook sees it ([`Session::feed_each`]).
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// HTTP's request target (path and query); empty for echo and packet.
    pub target: &'a [u8],
}

/// What a server's hook says about a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Answer it as the protocol does.
    Serve,
    /// Refuse it: HTTP's 400, and the connection closes (echo and packet serve it anyway).
    Refuse,
}

/// What one call to [`Session::feed`] produced besides output bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fed {
    /// Requests (HTTP requests, echo reads, packet frames) answered by this call.
    pub requests: u64,
    /// The connection must be closed once the output is written.
    pub close: bool,
}

/// One connection's protocol state.
#[derive(Debug)]
pub enum Session {
    Http(http::HttpSession),
    Echo(echo::EchoSession),
    Packet(packet::PacketSession),
    /// Any of the others behind TLS (`serve --tls`).
    Tls(Box<tls::TlsSession>),
}

impl Session {
    pub fn new(proto: Proto) -> Session {
        Session::with_max_body(proto, http::MAX_BODY)
    }

    /// A session whose HTTP requests may carry bodies up to `max_body` bytes.
    pub fn with_max_body(proto: Proto, max_body: usize) -> Session {
        match proto {
            Proto::Http => Session::Http(http::HttpSession::new(max_body)),
            Proto::Echo => Session::Echo(echo::EchoSession),
            Proto::Packet(size) => Session::Packet(packet::PacketSession::new(size)),
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

    /// Inside an HTTP request head that is not complete yet, or a TLS handshake (what
    /// `--header-timeout` limits).
    pub fn head_pending(&self) -> bool {
        match self {
            Session::Http(s) => s.head_pending(),
            Session::Tls(s) => s.head_pending(),
            _ => false,
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
        self.feed_each(input, out, &mut |_, _| Answer::Serve)
    }

    /// [`Session::feed`], calling `each` for every request right before its response is
    /// written, with the output so far (the responses to the requests before it, which `each`
    /// may send and take out): what a server's per-request work runs in, so the response to a
    /// request waits for its own work only, not for the work of requests pipelined after it.
    #[inline]
    pub fn feed_each<F: FnMut(Request<'_>, &mut Vec<u8>) -> Answer>(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        each: &mut F,
    ) -> Fed {
        match self {
            Session::Http(s) => s.feed(input, out, each),
            Session::Echo(s) => s.feed(input, out, each),
            Session::Packet(s) => s.feed(input, out, each),
            Session::Tls(s) => s.feed(input, out, each),
        }
    }
}
