//! One connection's protocol state ([`Session`]): the protocol it speaks ([`Speaks`]), chosen
//! by `--proto`, by the first bytes of a cleartext h2 port ([`Detect`]) or by TLS's ALPN, in
//! the clear or behind TLS; and the one dispatch that forwards every [`Protocol`] call to the
//! session chosen.

use std::time::Instant;

use super::detect::Choice;
use super::{echo, h2, http, memcache, packet, resp, tls};
use super::{Detect, Each, Fed, Limits, Negotiate, Proto, Protocol, ServeAll, MAX_BODY};

/// One connection's protocol state: what it speaks, in the clear or behind TLS.
#[derive(Debug)]
pub enum Session {
    Plain(Speaks),
    /// `serve --tls`: TLS around what it speaks.
    Tls(Box<tls::TlsSession<Speaks>>),
}

/// The protocol a connection speaks, or [`Detect`] while its first bytes decide.
#[derive(Debug)]
pub enum Speaks {
    Http(http::HttpSession),
    Echo(echo::EchoSession),
    Packet(packet::PacketSession),
    /// HTTP/2, after its preface.
    H2(Box<h2::H2Session>),
    /// Boxed, as are HTTP/2 and [`Detect`]: each is larger than HTTP/1.1's session, and a
    /// held connection of any protocol would pay the largest variant's size
    /// (`server::connection`'s size test).
    Resp(Box<resp::RespSession>),
    Memcache(Box<memcache::McSession>),
    /// A cleartext `--proto h2` connection before its first bytes chose: it steps aside for
    /// the protocol chosen ([`Speaks::settle`]).
    Detect(Box<Detect>),
}

/// Forwards every [`Protocol`] call to the variant's own session: the one dispatch, written
/// once for both layers. A `match` with an arm per variant and none for "the others": a new
/// variant does not build until its session answers every call. After a feed the type's
/// `settle` runs (where a state that chose steps aside).
macro_rules! dispatch {
    ($ty:ident { $($v:ident),+ $(,)? }) => {
        impl Protocol for $ty {
            #[inline]
            fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
                let fed = match self { $($ty::$v(s) => s.feed_each(input, out, each),)+ };
                self.settle(fed, out, each)
            }

            fn advance_each<F: Each + ?Sized>(&mut self, now: Instant, out: &mut Vec<u8>, each: &mut F) -> Fed {
                match self { $($ty::$v(s) => s.advance_each(now, out, each),)+ }
            }

            fn complete_each<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed {
                match self { $($ty::$v(s) => s.complete_each(ticket, out, each),)+ }
            }

            #[inline]
            fn head_pending(&self) -> bool {
                match self { $($ty::$v(s) => s.head_pending(),)+ }
            }

            #[inline]
            fn holding(&self) -> bool {
                match self { $($ty::$v(s) => s.holding(),)+ }
            }

            fn trim(&mut self) -> usize {
                match self { $($ty::$v(s) => s.trim(),)+ }
            }

            #[inline]
            fn due(&self) -> Option<Instant> {
                match self { $($ty::$v(s) => s.due(),)+ }
            }

            #[inline]
            fn owes(&self) -> bool {
                match self { $($ty::$v(s) => s.owes(),)+ }
            }

            #[inline]
            fn answers_owed(&self) -> bool {
                match self { $($ty::$v(s) => s.answers_owed(),)+ }
            }

            #[inline]
            fn output_gone(&mut self, bound: usize) {
                match self { $($ty::$v(s) => s.output_gone(bound),)+ }
            }

            #[inline]
            fn paused(&self) -> bool {
                match self { $($ty::$v(s) => s.paused(),)+ }
            }

            fn window_held(&self) -> bool {
                match self { $($ty::$v(s) => s.window_held(),)+ }
            }

            fn behind(&self) -> usize {
                match self { $($ty::$v(s) => s.behind(),)+ }
            }

            fn tickets(&self) -> Vec<u64> {
                match self { $($ty::$v(s) => s.tickets(),)+ }
            }

            fn cancelled(&mut self) -> Vec<u64> {
                match self { $($ty::$v(s) => s.cancelled(),)+ }
            }

            fn cut(&mut self, out: &mut Vec<u8>) {
                match self { $($ty::$v(s) => s.cut(out),)+ }
            }

            fn farewell(&mut self, out: &mut Vec<u8>) {
                match self { $($ty::$v(s) => s.farewell(out),)+ }
            }

            fn timeout_response(&self) -> &'static [u8] {
                match self { $($ty::$v(s) => s.timeout_response(),)+ }
            }
        }
    };
}

dispatch!(Speaks {
    Http,
    Echo,
    Packet,
    H2,
    Resp,
    Memcache,
    Detect
});
dispatch!(Session { Plain, Tls });

impl Speaks {
    /// The protocol `proto` names, under a server's limits (`h2` starts undecided: its
    /// first bytes choose).
    pub fn with_limits(proto: Proto, limits: Limits) -> Speaks {
        match proto {
            Proto::Http => Speaks::Http(http::HttpSession::new(limits.max_body)),
            Proto::Echo => Speaks::Echo(echo::EchoSession::default()),
            Proto::Packet(size) => Speaks::Packet(packet::PacketSession::new(size)),
            Proto::H2 => Speaks::Detect(Box::new(Detect::new(limits))),
            Proto::Resp => Speaks::Resp(Box::new(resp::RespSession::new(limits.max_value))),
            Proto::Memcache => Speaks::Memcache(Box::new(memcache::McSession::new(limits.max_value))),
        }
    }

    /// The session for what a [`Detect`] chose.
    fn chosen(choice: Choice, limits: Limits) -> Speaks {
        match choice {
            Choice::Http1 => Speaks::Http(http::HttpSession::new(limits.max_body)),
            Choice::H2 { preface } => Speaks::H2(Box::new(h2::H2Session::new(limits, preface))),
        }
    }

    /// After a feed: a [`Detect`] that chose steps aside for the protocol chosen, which is
    /// fed what it held, in the same call.
    #[inline]
    fn settle<F: Each + ?Sized>(&mut self, fed: Fed, out: &mut Vec<u8>, each: &mut F) -> Fed {
        let Speaks::Detect(d) = self else { return fed };
        let Some((choice, held)) = d.chosen() else {
            return fed;
        };
        *self = Speaks::chosen(choice, d.limits());
        self.feed_each(&held, out, each)
    }
}

impl Negotiate for Speaks {
    /// The session for the protocol TLS's ALPN chose (`h2` or `http/1.1`); without a choice,
    /// the one the first bytes decide.
    fn for_alpn(&self, alpn: Option<&[u8]>) -> Option<Speaks> {
        let Speaks::Detect(d) = self else { return None };
        Some(Speaks::chosen(d.for_alpn(alpn)?, d.limits()))
    }
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

    /// A session under a server's limits, in the clear.
    pub fn with_limits(proto: Proto, limits: Limits) -> Session {
        Session::Plain(Speaks::with_limits(proto, limits))
    }

    /// `speaks` behind TLS with `cfg` (what `serve --tls` gives every connection).
    pub fn with_tls(cfg: std::sync::Arc<rustls::ServerConfig>, speaks: Speaks) -> Session {
        match tls::TlsSession::new(cfg, speaks) {
            Ok(t) => Session::Tls(Box::new(t)),
            // rustls refuses only a configuration it cannot use, which `server_config` checked.
            Err(e) => panic!("TLS session: {e}"),
        }
    }

    /// What it speaks, in the clear (`None` behind TLS): for tests that look inside.
    #[cfg(test)]
    pub(crate) fn plain(&self) -> Option<&Speaks> {
        match self {
            Session::Plain(s) => Some(s),
            Session::Tls(_) => None,
        }
    }

    /// Consumes `input` (any split of the stream), appends the responses to `out`.
    #[inline]
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Fed {
        self.feed_each(input, out, &mut ServeAll)
    }

    /// Nothing steps aside at this layer: what it speaks settled inside its own feed.
    #[inline(always)]
    fn settle<F: Each + ?Sized>(&mut self, fed: Fed, _: &mut Vec<u8>, _: &mut F) -> Fed {
        fed
    }
}
