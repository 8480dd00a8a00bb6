//! What the load generator sends and how it checks what comes back: HTTP requests and
//! responses, and echo / packet messages whose every byte is verified.

use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};

use crate::proto::chunked::{Chunked, Phase};

/// A target URL: `http://host:port/path`, `echo://host:port`, `packet://host:port`.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: String,
    pub addr: SocketAddr,
    pub host: String,
    pub kind: Kind,
    pub path: String,
    /// `https://`: HTTP over TLS.
    pub tls: bool,
}

/// The protocol spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Http,
    Echo,
    Packet,
}

impl Kind {
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Http => "http",
            Kind::Echo => "echo",
            Kind::Packet => "packet",
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
    pub fn parse(url: &str) -> Result<Target, super::error::Error> {
        let (scheme, rest) = url.split_once("://").ok_or_else(|| {
            format!("'{url}' is not a target URL: write http://HOST:PORT/PATH, echo://HOST:PORT or packet://HOST:PORT")
        })?;
        let kind = match scheme {
            "http" | "https" => Kind::Http,
            "echo" => Kind::Echo,
            "packet" => Kind::Packet,
            s => return Err(format!("unknown scheme '{s}': use http://, https://, echo:// or packet://").into()),
        };
        let tls = scheme == "https";
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(format!("'{url}' has no host").into());
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
            return Err(format!("'{url}' needs a port: {scheme}://HOST:PORT").into());
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve '{authority}': {e}"))?
            .next()
            .ok_or_else(|| format!("'{authority}' resolved to no address"))?;
        if kind != Kind::Http && path != "/" {
            return Err(format!("'{url}': {scheme} targets have no path").into());
        }
        Ok(Target {
            url: url.to_string(),
            addr,
            host: authority.to_string(),
            kind,
            path: path.to_string(),
            tls,
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
    let mut r = format!("{method} {} HTTP/1.1\r\nHost: {}\r\n", target.path, target.host);
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

/// What reading a response produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// A whole response; `close`: the server will close after it.
    Done { status: u16, close: bool },
    /// Not complete yet.
    More,
    /// Not HTTP, or not something this client can frame.
    Bad,
    /// A 200's body is not the generated body the request carried.
    Mismatch,
}

/// What parsing a head found.
enum Head {
    /// A final response's head.
    Parsed,
    /// An interim (1xx) response, dropped: the final one follows.
    Skipped,
    /// Not all of it yet.
    Partial,
}

/// How the body of the response being read is delimited (RFC 9112 §6.3).
#[derive(Debug)]
enum Body {
    /// By Content-Length (or none): bytes still expected.
    Length(usize),
    /// By chunked transfer coding, trailers included.
    Chunked(Chunked),
    /// By the server closing the connection (HTTP/1.0, or no length given).
    UntilClose,
}

/// Incremental HTTP/1.1 response reader: the head by `httparse`; the body by Content-Length,
/// chunked coding (trailers included) or the connection's close; 1xx interim responses are
/// skipped, HEAD responses have no body.
#[derive(Debug, Default)]
pub struct HttpReader {
    buf: Vec<u8>,
    /// How the body of the response being read ends (`None`: no head parsed yet).
    body: Option<Body>,
    /// Head of the response being read, once parsed.
    head: Option<(u16, bool)>,
    /// The request was HEAD: responses have no body.
    pub head_only: bool,
    /// Verify 200 bodies: (connection slot, body size) of `--body-size` requests.
    verify: Option<(u64, usize)>,
    /// Sequence number of the request the response being read answers.
    seq: u64,
    /// Body bytes of the response being read so far.
    body_off: usize,
    /// The expected bytes of a verified body, reused from read to read.
    scratch: Vec<u8>,
}

/// The largest response head accepted.
const MAX_RESPONSE_HEAD: usize = 64 * 1024;

impl HttpReader {
    pub fn new(head_only: bool) -> Self {
        HttpReader {
            head_only,
            ..Default::default()
        }
    }

    /// Verifies every 200 body against the body generated for connection `slot`'s requests.
    pub fn verifying(mut self, slot: u64, size: usize) -> Self {
        self.verify = Some((slot, size));
        self
    }

    /// A new socket: the next response answers request `next_seq`.
    pub fn reset(&mut self, next_seq: u64) {
        self.buf.clear();
        self.body = None;
        self.head = None;
        self.seq = next_seq;
        self.body_off = 0;
    }

    /// Appends received bytes.
    pub fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// Parses a response head at the start of the buffer.
    fn parse_head(&mut self) -> Result<Head, Read> {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut resp = httparse::Response::new(&mut headers);
        let n = match resp.parse(&self.buf) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if self.buf.len() > MAX_RESPONSE_HEAD => return Err(Read::Bad),
            Ok(httparse::Status::Partial) => return Ok(Head::Partial),
            Err(_) => return Err(Read::Bad),
        };
        let status = resp.code.unwrap_or(0);
        if (100..200).contains(&status) && status != 101 {
            // An interim response (100 Continue, 103 Early Hints): the real one follows.
            self.buf.drain(..n);
            return Ok(Head::Skipped);
        }
        let mut len = None;
        let mut coding: Option<&[u8]> = None;
        let mut close = resp.version == Some(0);
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                let l = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|v| v.trim().parse::<usize>().ok());
                if l.is_none() || (len.is_some() && len != l) {
                    return Err(Read::Bad);
                }
                len = l;
            } else if h.name.eq_ignore_ascii_case("connection") {
                let v = h.value.to_ascii_lowercase();
                close = v.windows(5).any(|w| w == b"close") || (close && !v.windows(10).any(|w| w == b"keep-alive"));
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                coding = Some(h.value);
            }
        }
        let no_body = self.head_only || status == 204 || status == 304;
        let body = if no_body {
            Body::Length(0)
        } else if let Some(te) = coding {
            // The final coding decides: chunked, or the body runs to the close.
            let last = te.rsplit(|&b| b == b',').next().unwrap_or(b"").trim_ascii();
            if last.eq_ignore_ascii_case(b"chunked") {
                Body::Chunked(Chunked {
                    phase: Phase::Size,
                    body: self.verify.filter(|_| status == 200).map(|_| Vec::new()),
                    size: 0,
                    keep: true,
                })
            } else {
                close = true;
                Body::UntilClose
            }
        } else {
            match len {
                Some(l) => Body::Length(l),
                None => {
                    close = true;
                    Body::UntilClose
                }
            }
        };
        if let (Some((_, size)), 200, Body::Length(l)) = (self.verify, status, &body) {
            if *l != size {
                return Err(Read::Mismatch);
            }
        }
        self.buf.drain(..n);
        self.head = Some((status, close));
        self.body = Some(body);
        self.body_off = 0;
        Ok(Head::Parsed)
    }

    /// Checks `data`, the next body bytes of a 200 being verified.
    fn verify_bytes(&mut self, data_len: usize, from_chunks: bool) -> bool {
        let Some((slot, _)) = self.verify else { return true };
        if self.head.map(|h| h.0) != Some(200) {
            return true;
        }
        self.scratch.resize(data_len, 0);
        pattern(slot, self.seq, self.body_off, &mut self.scratch);
        let ok = if from_chunks {
            match &self.body {
                Some(Body::Chunked(c)) => c.body.as_deref() == Some(&self.scratch[..]),
                _ => false,
            }
        } else {
            self.scratch[..] == self.buf[..data_len]
        };
        self.body_off += data_len;
        ok
    }

    /// Takes the next complete response out of the buffered bytes.
    pub fn next_response(&mut self) -> Read {
        while self.head.is_none() {
            match self.parse_head() {
                Ok(Head::Parsed) | Ok(Head::Skipped) => {}
                Ok(Head::Partial) => return Read::More,
                Err(r) => return r,
            }
        }
        match self.body.as_mut().expect("a head has its body") {
            Body::Length(left) => {
                let take = (*left).min(self.buf.len());
                *left -= take;
                let done = *left == 0;
                if !self.verify_bytes(take, false) {
                    return Read::Mismatch;
                }
                self.buf.drain(..take);
                if !done {
                    return Read::More;
                }
            }
            Body::Chunked(c) => {
                let mut used = 0;
                loop {
                    match c.step(&self.buf[used..], usize::MAX) {
                        Ok(Some(n)) => used += n,
                        Ok(None) => break,
                        Err(_) => return Read::Bad,
                    }
                    if c.complete() {
                        break;
                    }
                }
                let complete = c.complete();
                self.buf.drain(..used);
                if !complete {
                    return Read::More;
                }
                let got = match &self.body {
                    Some(Body::Chunked(c)) => c.body.as_ref().map_or(0, Vec::len),
                    _ => 0,
                };
                if self
                    .verify
                    .is_some_and(|(_, size)| got != size && self.head.map(|h| h.0) == Some(200))
                    || !self.verify_bytes(got, true)
                {
                    return Read::Mismatch;
                }
            }
            Body::UntilClose => {
                self.body_off += self.buf.len();
                self.buf.clear();
                return Read::More;
            }
        }
        self.seq += 1;
        self.body = None;
        let (status, close) = self.head.take().expect("head parsed above");
        Read::Done { status, close }
    }

    /// The connection closed: a response delimited by the close is complete; anything else
    /// unfinished is not (`None`).
    pub fn at_close(&mut self) -> Option<Read> {
        if !matches!(self.body, Some(Body::UntilClose)) {
            return None;
        }
        self.body = None;
        self.seq += 1;
        let (status, _) = self.head.take()?;
        Some(Read::Done { status, close: true })
    }

    /// `true` when bytes of an unfinished response are buffered.
    pub fn mid_response(&self) -> bool {
        !self.buf.is_empty() || self.head.is_some()
    }
}

/// Fills `out` with bytes `start..start + out.len()` of message `seq` of connection `conn`.
/// The pattern depends on all three, so a flipped, lost, duplicated or reordered byte is caught.
/// It is made a 64-bit word at a time: one mix per 8 bytes.
pub fn pattern(conn: u64, seq: u64, start: usize, out: &mut [u8]) {
    let base = conn.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seq.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let word = |k: u64| {
        let mut x = base ^ k.wrapping_mul(0x1656_67B1_9E37_79F9);
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (x ^ (x >> 32)).to_le_bytes()
    };
    let mut pos = start;
    let mut i = 0;
    while i < out.len() {
        let w = word((pos / 8) as u64);
        let from = pos % 8;
        let n = (8 - from).min(out.len() - i);
        out[i..i + n].copy_from_slice(&w[from..from + n]);
        i += n;
        pos += n;
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
