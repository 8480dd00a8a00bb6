//! What the load generator sends and how it checks echoes: the target, HTTP requests, and echo
//! / packet messages whose every byte is verified (HTTP responses are read in `response`).

use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};

use super::bad_target::{BadTarget, TargetFault};
use super::byte_pattern::pattern;

/// A target URL: `http://host:port/path`, `https://…`, `h2c://host:port/path` (HTTP/2 without
/// TLS, by prior knowledge), `echo://host:port`, `packet://host:port`, and the keyed stores'
/// `resp://host:port` and `memcache://host:port`.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: String,
    pub addr: SocketAddr,
    pub host: String,
    pub kind: Kind,
    pub path: String,
    /// `https://`: HTTP over TLS.
    pub tls: bool,
    /// `h2c://`: HTTP/2 from the first byte.
    pub h2c: bool,
}

/// The protocol spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Http,
    Echo,
    Packet,
    /// A keyed store spoken to in RESP (redis).
    Resp,
    /// A keyed store spoken to in memcached's text protocol.
    Memcache,
}

impl Kind {
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Http => "http",
            Kind::Echo => "echo",
            Kind::Packet => "packet",
            Kind::Resp => "resp",
            Kind::Memcache => "memcache",
        }
    }

    /// A keyed store's protocol: SETs and GETs of keys.
    pub fn keyed(&self) -> Option<super::keyed::Dialect> {
        match self {
            Kind::Resp => Some(super::keyed::Dialect::Resp),
            Kind::Memcache => Some(super::keyed::Dialect::Memcache),
            _ => None,
        }
    }
}

impl Target {
    /// The host name without its port (and without an IPv6 literal's brackets): what TLS's SNI
    /// and certificate check use.
    pub fn host_name(&self) -> &str {
        let h = match self.host.rsplit_once(':') {
            Some((h, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && !self.host.ends_with(']') => h,
            _ => &self.host,
        };
        h.trim_start_matches('[').trim_end_matches(']')
    }

    /// Parses and resolves a target URL.
    pub fn parse(url: &str) -> Result<Target, BadTarget> {
        let bad = |fault| BadTarget {
            url: url.to_string(),
            fault,
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad(TargetFault::NotAUrl))?;
        let kind = match scheme {
            "http" | "https" | "h2c" => Kind::Http,
            "echo" => Kind::Echo,
            "packet" => Kind::Packet,
            "resp" => Kind::Resp,
            "memcache" => Kind::Memcache,
            _ => return Err(bad(TargetFault::UnknownScheme)),
        };
        let tls = scheme == "https";
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(bad(TargetFault::NoHost));
        }
        let with_port = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty())
            && !authority.ends_with(']')
        {
            authority.to_string()
        } else if tls {
            format!("{authority}:443")
        } else if kind == Kind::Http {
            format!("{authority}:80")
        } else {
            return Err(bad(TargetFault::NoPort));
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|source| {
                bad(TargetFault::Unresolved {
                    authority: authority.to_string(),
                    source,
                })
            })?
            .next()
            .ok_or_else(|| {
                bad(TargetFault::NoAddress {
                    authority: authority.to_string(),
                })
            })?;
        if kind != Kind::Http && path != "/" {
            return Err(bad(TargetFault::HasPath));
        }
        Ok(Target {
            url: url.to_string(),
            addr,
            host: authority.to_string(),
            kind,
            path: path.to_string(),
            tls,
            h2c: scheme == "h2c",
        })
    }
}

/// What an HTTP request carries after its head.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Payload {
    #[default]
    None,
    /// The same bytes in every request (`--body STRING` or `--body @FILE`).
    Fixed(Vec<u8>),
    /// A body of this many bytes made for each request from the connection and the request's
    /// sequence number (`--body-size`), so an echoed body can be verified byte for byte.
    Generated(usize),
}

impl Payload {
    /// Body bytes per request.
    pub fn len(&self) -> usize {
        match self {
            Payload::None => 0,
            Payload::Fixed(b) => b.len(),
            Payload::Generated(n) => *n,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The bytes of one HTTP request's head, followed by the body when it is [`Payload::Fixed`]
/// (a generated body is appended per request with [`append_body`]).
pub fn http_request(
    method: &str,
    target: &Target,
    headers: &[String],
    close: bool,
    payload: &Payload,
    chunked: bool,
) -> Vec<u8> {
    let mut r = format!("{method} {} HTTP/1.1\r\n", target.path);
    // A `-H 'Host: ...'` replaces the default Host (two would make the request invalid).
    let own_host = headers.iter().any(|h| {
        h.split_once(':')
            .is_some_and(|(name, _)| name.trim().eq_ignore_ascii_case("host"))
    });
    if !own_host {
        r.push_str(&format!("Host: {}\r\n", target.host));
    }
    for h in headers {
        r.push_str(h);
        r.push_str("\r\n");
    }
    if close {
        r.push_str("Connection: close\r\n");
    }
    match payload {
        Payload::None => {}
        _ if chunked => r.push_str("Transfer-Encoding: chunked\r\n"),
        p => r.push_str(&format!("Content-Length: {}\r\n", p.len())),
    }
    r.push_str("\r\n");
    let mut r = r.into_bytes();
    if let Payload::Fixed(body) = payload {
        append_body(&mut r, body.len(), chunked, |off, out| {
            out.copy_from_slice(&body[off..off + out.len()])
        });
    }
    r
}

/// Appends a body of `len` bytes, made by `fill(offset, piece)`, as it is or in 16 KiB chunks.
pub fn append_body(out: &mut Vec<u8>, len: usize, chunked: bool, mut fill: impl FnMut(usize, &mut [u8])) {
    const CHUNK: usize = 16 * 1024;
    let mut off = 0;
    while off < len {
        let n = if chunked { CHUNK.min(len - off) } else { len - off };
        if chunked {
            let _ = write!(out, "{n:x}\r\n");
        }
        let start = out.len();
        out.resize(start + n, 0);
        fill(off, &mut out[start..]);
        if chunked {
            out.extend_from_slice(b"\r\n");
        }
        off += n;
    }
    if chunked {
        out.extend_from_slice(b"0\r\n\r\n");
    }
}

/// Echoed bytes differ from the bytes sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch;

/// Verifies echoed bytes against the messages sent, whatever the read boundaries.
#[derive(Debug, Default)]
pub struct EchoReader {
    /// Message size.
    pub size: usize,
    /// Message being received and offset in it.
    seq: u64,
    off: usize,
    scratch: Vec<u8>,
}

impl EchoReader {
    pub fn new(size: usize) -> Self {
        EchoReader {
            size,
            ..Default::default()
        }
    }

    pub fn reset(&mut self, next_seq: u64) {
        self.seq = next_seq;
        self.off = 0;
    }

    /// Checks `data`; returns how many whole messages it completed, or `Err(Mismatch)`.
    pub fn push(&mut self, conn: u64, mut data: &[u8]) -> Result<u64, Mismatch> {
        let mut done = 0;
        while !data.is_empty() {
            let n = (self.size - self.off).min(data.len());
            self.scratch.resize(n, 0);
            pattern(conn, self.seq, self.off, &mut self.scratch);
            if self.scratch[..] != data[..n] {
                return Err(Mismatch);
            }
            data = &data[n..];
            self.off += n;
            if self.off == self.size {
                self.off = 0;
                self.seq += 1;
                done += 1;
            }
        }
        Ok(done)
    }

    pub fn mid_message(&self) -> bool {
        self.off != 0
    }
}

#[cfg(test)]
mod load_workload {
    use crate::load::request::*;
    use crate::load::{HttpReader, Read};

    #[test]
    fn a_host_header_of_the_users_replaces_the_default_and_is_sent_once() {
        let t = Target::parse("http://127.0.0.1:8080/x").unwrap();
        let req = |headers: &[&str]| {
            let h: Vec<String> = headers.iter().map(|s| s.to_string()).collect();
            String::from_utf8(http_request("GET", &t, &h, false, &Payload::None, false)).unwrap()
        };
        let plain = req(&["Accept: */*"]);
        assert_eq!(plain.matches("Host: ").count(), 1, "{plain}");
        assert!(plain.contains("Host: 127.0.0.1:8080\r\n"), "{plain}");
        for own in ["Host: example.test", "HOST:example.test", "host:example.test"] {
            let r = req(&[own]);
            assert_eq!(r.to_ascii_lowercase().matches("host").count(), 1, "{r}");
            assert!(r.contains(own), "{r}");
        }
    }

    #[test]
    fn targets_parse_and_bad_ones_explain() {
        use crate::load::TargetFault;
        let t = Target::parse("http://127.0.0.1:8080/x?y").unwrap();
        assert_eq!((t.kind, t.addr.port(), t.path.as_str()), (Kind::Http, 8080, "/x?y"));
        assert_eq!(Target::parse("http://127.0.0.1").unwrap().addr.port(), 80);
        assert_eq!(Target::parse("echo://127.0.0.1:9000").unwrap().kind, Kind::Echo);
        type Is = fn(&TargetFault) -> bool;
        let cases: [(&str, Is, &str); 6] = [
            (
                "echo://127.0.0.1",
                |f| matches!(f, TargetFault::NoPort),
                "'echo://127.0.0.1' needs a port: echo://HOST:PORT",
            ),
            (
                "127.0.0.1:80",
                |f| matches!(f, TargetFault::NotAUrl),
                "'127.0.0.1:80' is not a target URL: write http://",
            ),
            (
                "ftp://x:1",
                |f| matches!(f, TargetFault::UnknownScheme),
                "unknown scheme 'ftp': use http://",
            ),
            (
                "http:///x",
                |f| matches!(f, TargetFault::NoHost),
                "'http:///x' has no host",
            ),
            (
                "packet://127.0.0.1:9/p",
                |f| matches!(f, TargetFault::HasPath),
                "'packet://127.0.0.1:9/p': packet targets have no path",
            ),
            (
                "http://no-such-host.invalid:80/",
                |f| matches!(f, TargetFault::Unresolved { .. }),
                "cannot resolve 'no-such-host.invalid:80': ",
            ),
        ];
        for (url, fault, says) in cases {
            let e = Target::parse(url).unwrap_err();
            assert!(fault(&e.fault), "{url}: {e:?}");
            assert!(e.to_string().starts_with(says), "{url}: {e}");
        }
    }

    #[test]
    fn http_reader_frames_split_and_pipelined_responses() {
        let one = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let stream = [
            &one[..],
            &one[..],
            b"HTTP/1.1 404 No\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        ]
        .concat();
        for cut in 0..stream.len() {
            let mut r = HttpReader::new(false);
            let mut got = Vec::new();
            for part in [&stream[..cut], &stream[cut..]] {
                r.push(part);
                while let Read::Done { status, close } = r.next_response() {
                    got.push((status, close));
                }
            }
            assert_eq!(got, vec![(200, false), (200, false), (404, true)], "cut at {cut}");
        }
        let mut r = HttpReader::new(false);
        r.push(b"SSH-2.0-OpenSSH\r\n\r\n");
        assert_eq!(r.next_response(), Read::Bad);
    }

    #[test]
    fn echo_reader_catches_one_flipped_byte_at_any_boundary() {
        let size = 128;
        let mut msgs = vec![0u8; size * 3];
        for s in 0..3 {
            pattern(7, s as u64, 0, &mut msgs[s * size..(s + 1) * size]);
        }
        let mut r = EchoReader::new(size);
        assert_eq!(r.push(7, &msgs[..100]), Ok(0));
        assert_eq!(r.push(7, &msgs[100..300]), Ok(2));
        assert_eq!(r.push(7, &msgs[300..]), Ok(1));
        let mut bad = msgs.clone();
        bad[200] ^= 1;
        let mut r = EchoReader::new(size);
        assert_eq!(r.push(7, &bad), Err(Mismatch));
        // Another connection's bytes do not pass either.
        let mut r = EchoReader::new(size);
        assert_eq!(r.push(8, &msgs[..size]), Err(Mismatch));
    }
}
