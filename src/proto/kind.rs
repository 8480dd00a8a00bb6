//! Which protocol a server speaks: the `--proto` flag's values.

use std::fmt;

/// Which protocol a server speaks (the `--proto` flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Http,
    Echo,
    /// Fixed-size frames of this many bytes.
    Packet(usize),
    /// HTTP/2 with prior knowledge, or over TLS by ALPN; HTTP/1.1 on the same port.
    H2,
    /// RESP2, redis's protocol: keyed commands run against the server's store.
    Resp,
    /// memcached's text protocol: keyed commands run against the server's store.
    Memcache,
}

impl Proto {
    pub fn name(&self) -> &'static str {
        match self {
            Proto::Http => "http",
            Proto::Echo => "echo",
            Proto::Packet(_) => "packet",
            Proto::H2 => "h2",
            Proto::Resp => "resp",
            Proto::Memcache => "memcache",
        }
    }

    /// Its requests are keyed commands, run against a store ([`super::keyed`]).
    pub fn keyed(&self) -> bool {
        matches!(self, Proto::Resp | Proto::Memcache)
    }
}

impl fmt::Display for Proto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
