//! Reading HTTP/1.x responses as they arrive: the head by `httparse`; the body by
//! Content-Length, chunked coding (trailers included) or the connection's close; interim 1xx
//! responses skipped (at most [`MAX_INTERIM`] before a final one, as Go's client); the bodies
//! of 200s to `--body-size` requests verified byte for byte as they stream, never kept whole
//! (a chunked or close-delimited body too). The server is hostile: what it sends is read in
//! time linear in its length and held no longer than it takes to frame.

use super::byte_pattern::pattern;
use crate::proto::chunked::{Chunked, Phase};

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
    /// Bytes received, not framed yet from `pos` on (what is before it was framed: dropped at
    /// the next push, so framing many responses from one read costs one move, not one each).
    buf: Vec<u8>,
    pos: usize,
    /// Interim responses before the final one of the response being read.
    interim: usize,
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
    /// Read every response as an event stream (`load --sse`); otherwise those whose
    /// Content-Type is `text/event-stream`.
    sse: bool,
    /// The response being read is an event stream: its body bytes, decoded, are handed out
    /// as they come ([`HttpReader::stream_bytes`]).
    event_stream: bool,
    streamed: Vec<u8>,
}

/// The largest response head accepted.
const MAX_RESPONSE_HEAD: usize = 64 * 1024;

/// The most interim (1xx) responses accepted before a final one (Go's client stops at 5).
pub const MAX_INTERIM: usize = 5;

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

    /// Reads every response as an event stream (`load --sse`) when `all` holds.
    pub fn all_event_streams(mut self, all: bool) -> Self {
        self.sse = all;
        self
    }

    /// A new socket: the next response answers request `next_seq`.
    pub fn reset(&mut self, next_seq: u64) {
        self.buf.clear();
        self.pos = 0;
        self.interim = 0;
        self.body = None;
        self.head = None;
        self.seq = next_seq;
        self.body_off = 0;
        self.event_stream = false;
        self.streamed.clear();
    }

    /// Appends received bytes.
    pub fn push(&mut self, data: &[u8]) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// The bytes not framed yet.
    fn rest(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Parses a response head at the start of the buffer.
    fn parse_head(&mut self) -> Result<Head, Read> {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut resp = httparse::Response::new(&mut headers);
        let n = match resp.parse(&self.buf[self.pos..]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if self.rest().len() > MAX_RESPONSE_HEAD => return Err(Read::Bad),
            Ok(httparse::Status::Partial) => return Ok(Head::Partial),
            Err(_) => return Err(Read::Bad),
        };
        let status = resp.code.unwrap_or(0);
        if (100..200).contains(&status) && status != 101 {
            // An interim response (100 Continue, 103 Early Hints): the real one follows, after
            // a few at most.
            self.interim += 1;
            if self.interim > MAX_INTERIM {
                return Err(Read::Bad);
            }
            self.pos += n;
            return Ok(Head::Skipped);
        }
        self.interim = 0;
        let mut len = None;
        let mut coding: Option<&[u8]> = None;
        let mut close = resp.version == Some(0);
        let mut event_stream = self.sse && status == 200;
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-type") {
                let v = h.value.trim_ascii();
                event_stream |= v.len() >= 17 && v[..17].eq_ignore_ascii_case(b"text/event-stream");
            }
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
                    body: (self.verify.is_some() && status == 200 || event_stream).then(Vec::new),
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
        self.pos += n;
        self.head = Some((status, close));
        self.body = Some(body);
        self.body_off = 0;
        self.event_stream = event_stream && !self.head_only;
        Ok(Head::Parsed)
    }

    /// Whether the response being read is a 200 whose body is verified.
    fn checks_body(&self) -> bool {
        self.verify.is_some() && self.head.map(|h| h.0) == Some(200) && !self.event_stream
    }

    /// Checks `data`, the next body bytes of a 200 being verified, against the generated body:
    /// `false` where they differ or run past its size.
    fn verify_bytes(&mut self, data: &[u8]) -> bool {
        let Some((slot, size)) = self.verify.filter(|_| self.checks_body()) else {
            return true;
        };
        if self.body_off + data.len() > size {
            return false;
        }
        self.scratch.resize(data.len(), 0);
        pattern(slot, self.seq, self.body_off, &mut self.scratch);
        self.body_off += data.len();
        self.scratch[..] == data[..]
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
        let (pos, verifying) = (self.pos, self.checks_body());
        match self.body.as_mut().expect("a head has its body") {
            Body::Length(left) => {
                let take = (*left).min(self.buf.len() - pos);
                *left -= take;
                let done = *left == 0;
                let data = std::mem::take(&mut self.buf);
                let ok = self.verify_bytes(&data[pos..pos + take]);
                if self.event_stream {
                    self.streamed.extend_from_slice(&data[pos..pos + take]);
                }
                self.buf = data;
                self.pos += take;
                if !ok {
                    return Read::Mismatch;
                }
                if !done {
                    return Read::More;
                }
            }
            Body::Chunked(c) => {
                // A verified body is checked chunk by chunk and let go; it may not run past
                // the size asked for.
                let limit = match (verifying, self.verify) {
                    (true, Some((_, size))) => size,
                    _ => usize::MAX,
                };
                let mut used = 0;
                let mut seen = Vec::new();
                let bad = loop {
                    match c.step(&self.buf[pos + used..], limit) {
                        Ok(Some(n)) => used += n,
                        Ok(None) => break None,
                        Err(crate::proto::chunked::ChunkError::TooLarge) => break Some(Read::Mismatch),
                        Err(_) => break Some(Read::Bad),
                    }
                    if verifying {
                        if let Some(b) = c.body.as_mut() {
                            seen.append(b);
                        }
                    }
                    if c.complete() {
                        break None;
                    }
                };
                let complete = c.complete();
                if self.event_stream {
                    if let Some(b) = c.body.as_mut() {
                        self.streamed.append(b);
                    }
                }
                self.pos += used;
                if let Some(r) = bad {
                    return r;
                }
                if !self.verify_bytes(&seen) {
                    return Read::Mismatch;
                }
                if !complete {
                    return Read::More;
                }
                if let Some((_, size)) = self.verify.filter(|_| verifying) {
                    if self.body_off != size {
                        return Read::Mismatch;
                    }
                }
            }
            Body::UntilClose => {
                let data = std::mem::take(&mut self.buf);
                let ok = self.verify_bytes(&data[pos..]);
                if self.event_stream {
                    self.streamed.extend_from_slice(&data[pos..]);
                }
                self.buf = data;
                self.pos = self.buf.len();
                return if ok { Read::More } else { Read::Mismatch };
            }
        }
        self.seq += 1;
        self.body = None;
        self.body_off = 0;
        let (status, close) = self.head.take().expect("head parsed above");
        Read::Done { status, close }
    }

    /// The response being read is an event stream (its head said so, or `--sse`).
    pub fn event_stream(&self) -> bool {
        self.event_stream && self.head.is_some()
    }

    /// The event stream's body bytes decoded since the last call (the caller gives the buffer
    /// back, emptied, with [`HttpReader::give_back`]).
    pub fn stream_bytes(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.streamed)
    }

    pub fn give_back(&mut self, mut buf: Vec<u8>) {
        buf.clear();
        self.streamed = buf;
    }

    /// The connection closed: a response delimited by the close is complete (a verified one
    /// whose body fell short of its size is a [`Read::Mismatch`]); anything else unfinished is
    /// not (`None`).
    pub fn at_close(&mut self) -> Option<Read> {
        if !matches!(self.body, Some(Body::UntilClose)) {
            return None;
        }
        let short = self
            .verify
            .is_some_and(|(_, size)| self.checks_body() && self.body_off != size);
        self.body = None;
        self.body_off = 0;
        self.seq += 1;
        let (status, _) = self.head.take()?;
        Some(match short {
            true => Read::Mismatch,
            false => Read::Done { status, close: true },
        })
    }

    /// `true` when bytes of an unfinished response are buffered.
    pub fn mid_response(&self) -> bool {
        !self.rest().is_empty() || self.head.is_some()
    }
}

#[cfg(test)]
mod response_framing {
    use crate::load::{HttpReader, Read};

    /// Feeds `wire` to a reader split at `cut`, collecting what it completes.
    fn read_all(wire: &[u8], cut: usize, head_only: bool) -> Vec<Read> {
        let mut r = HttpReader::new(head_only);
        let mut out = Vec::new();
        for part in [&wire[..cut], &wire[cut..]] {
            r.push(part);
            loop {
                match r.next_response() {
                    Read::More => break,
                    x => {
                        let stop = !matches!(x, Read::Done { .. });
                        out.push(x);
                        if stop {
                            return out;
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn chunked_bodies_with_trailers_interim_responses_and_head_frame_at_every_split() {
        let wire: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n\
            HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nDigest: abc\r\n\r\n\
            HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
            HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!\
            HTTP/1.1 204 No Content\r\n\r\n";
        for cut in 0..=wire.len() {
            let got = read_all(wire, cut, false);
            assert_eq!(
                got,
                vec![
                    Read::Done {
                        status: 200,
                        close: false
                    },
                    Read::Done {
                        status: 404,
                        close: false
                    },
                    Read::Done {
                        status: 204,
                        close: false
                    }
                ],
                "cut at {cut}"
            );
        }
        // HEAD: a Content-Length but no body.
        let head: &[u8] =
            b"HTTP/1.1 200 OK\r\nContent-Length: 9999\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(read_all(head, 3, true).len(), 2);
        // Broken chunk framing is a bad response.
        assert_eq!(
            read_all(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                10,
                false
            ),
            vec![Read::Bad]
        );
    }

    #[test]
    fn a_body_without_length_runs_to_the_close() {
        let mut r = HttpReader::new(false);
        r.push(b"HTTP/1.0 200 OK\r\nServer: old\r\n\r\nsome body, ");
        assert_eq!(r.next_response(), Read::More);
        r.push(b"more body");
        assert_eq!(r.next_response(), Read::More);
        assert_eq!(
            r.at_close(),
            Some(Read::Done {
                status: 200,
                close: true
            })
        );
        // A response cut short by the close is not complete.
        let mut r = HttpReader::new(false);
        r.push(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
        assert_eq!(r.next_response(), Read::More);
        assert_eq!(r.at_close(), None);
    }
}
