//! http: the seed's "hello" server as a sans-I/O HTTP/1.1 session (RFC 9112 framing).
//!
//! GET / HEAD -> 200 `<html>hello</html>`. POST / PUT -> 200 with the request body echoed; the
//! body is framed by `Content-Length` (echoed as it arrives) or chunked coding with trailers
//! (collected, then answered with a `Content-Length`). HTTP/1.0 closes unless
//! `Connection: keep-alive`; HTTP/1.1 keeps alive unless `Connection: close`. Pipelined
//! requests are answered in order; requests may arrive split at any byte.
//!
//! Refused, each with its status and `Connection: close`: malformed syntax, an HTTP/1.1 request
//! without exactly one valid `Host`, `Transfer-Encoding` with `Content-Length`, an unusable
//! `Content-Length`, bad chunk framing or a chunk extension over 4 KiB -> 400; a head over
//! 8 KiB or too many headers -> 431; a body over `max_body` -> 413; a `Transfer-Encoding` other
//! than `chunked` -> 501; an `Expect` other than `100-continue` -> 417. `Expect: 100-continue`
//! gets `100 Continue` before the body. Other methods -> 405 (their body, if any, is skipped).
//! Parsing of heads is `httparse`.

use std::io::Write;

use super::chunked::{ChunkError, Chunked, Phase};
use super::{Answer, Fed, Request};

/// The largest request head (request line + headers) accepted, and of a trailer section.
pub const MAX_HEAD: usize = 8 * 1024;
/// The most headers one request may carry.
const MAX_HEADERS: usize = 64;
/// The default largest request body (`--max-body`).
pub const MAX_BODY: usize = 1024 * 1024;

/// The body every 200 to GET carries (seed 000's).
pub const BODY: &[u8] = b"<html>hello</html>";

const OK_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nServer: muxlab\r\nContent-Type: text/html\r\nContent-Length: 18\r\n";
const ECHO_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nServer: muxlab\r\nContent-Type: application/octet-stream\r\n";
const KEEP: &[u8] = b"Connection: keep-alive\r\n";
const CLOSE: &[u8] = b"Connection: close\r\n";
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
const NOT_ALLOWED_HEAD: &[u8] =
    b"HTTP/1.1 405 Method Not Allowed\r\nServer: muxlab\r\nAllow: GET, HEAD, POST, PUT\r\nContent-Length: 19\r\n";
const NOT_ALLOWED_BODY: &[u8] = b"method not allowed\n";
/// The answer to a request head that did not complete in time (`--header-timeout`).
pub const REQUEST_TIMEOUT: &[u8] =
    b"HTTP/1.1 408 Request Timeout\r\nServer: muxlab\r\nContent-Length: 23\r\nConnection: close\r\n\r\nrequest head timed out\n";

/// A refusal: the status line and a one-line body; the connection closes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    BadRequest,
    ExpectationFailed,
    TooLarge,
    HeadTooLarge,
    NotImplemented,
}

impl Refusal {
    fn write(self, out: &mut Vec<u8>) {
        let (status, body) = match self {
            Refusal::BadRequest => ("400 Bad Request", "bad request\n"),
            Refusal::ExpectationFailed => ("417 Expectation Failed", "only 100-continue is expected\n"),
            Refusal::TooLarge => ("413 Content Too Large", "request body over the limit\n"),
            Refusal::HeadTooLarge => ("431 Request Header Fields Too Large", "request head over 8 KiB\n"),
            Refusal::NotImplemented => ("501 Not Implemented", "only chunked transfer coding is supported\n"),
        };
        out.extend_from_slice(
            format!(
                "HTTP/1.1 {status}\r\nServer: muxlab\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    }
}

/// Where the session is in the request stream.
#[derive(Debug, Default)]
enum State {
    /// Waiting for (the rest of) a request head.
    #[default]
    Head,
    /// Inside a `Content-Length` body: `left` bytes to go; echoed or skipped. `announce`: the
    /// echo's head (for a body of that length) goes out with the first body byte.
    Body {
        left: usize,
        echo: bool,
        keep: bool,
        announce: Option<usize>,
    },
    /// Inside a chunked body.
    Chunked(Chunked),
    /// A response said `Connection: close`; everything after is ignored.
    Closed,
}

/// One connection's HTTP state.
#[derive(Debug)]
pub struct HttpSession {
    /// Bytes not yet consumed (an incomplete head, chunk-size line or trailer line).
    buf: Vec<u8>,
    state: State,
    /// The largest request body accepted.
    max_body: usize,
}

impl Default for HttpSession {
    fn default() -> Self {
        HttpSession::new(MAX_BODY)
    }
}

/// What one step over the input did.
enum Step {
    /// Used this many bytes; go on.
    Used(usize),
    /// Needs more input than there is.
    More,
    /// A request head is next.
    Head,
}

impl HttpSession {
    /// A session accepting request bodies up to `max_body` bytes.
    pub fn new(max_body: usize) -> HttpSession {
        HttpSession {
            buf: Vec::new(),
            state: State::Head,
            max_body,
        }
    }

    /// Part of a request head has arrived, not all of it.
    pub fn head_pending(&self) -> bool {
        matches!(self.state, State::Head) && !self.buf.is_empty()
    }

    /// Consumes `input`, answering every request in it; `each` sees each request (its target)
    /// right before its response is written, and may refuse it (400).
    pub fn feed<F: FnMut(Request<'_>, &mut Vec<u8>) -> Answer>(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        each: &mut F,
    ) -> Fed {
        let mut fed = Fed::default();
        if matches!(self.state, State::Closed) {
            fed.close = true;
            return fed;
        }
        if self.buf.is_empty() {
            // Fast path: work straight from the read buffer, keep only an incomplete tail.
            let used = self.run(input, out, &mut fed, each);
            self.buf.extend_from_slice(&input[used..]);
        } else {
            let mut data = std::mem::take(&mut self.buf);
            data.extend_from_slice(input);
            let used = self.run(&data, out, &mut fed, each);
            data.drain(..used);
            self.buf = data;
        }
        if fed.close {
            self.state = State::Closed;
            self.buf = Vec::new();
        }
        fed
    }

    /// Steps over `data` until it needs more input or the connection ends; returns the bytes used.
    fn run<F: FnMut(Request<'_>, &mut Vec<u8>) -> Answer>(
        &mut self,
        data: &[u8],
        out: &mut Vec<u8>,
        fed: &mut Fed,
        each: &mut F,
    ) -> usize {
        let mut pos = 0;
        while !fed.close {
            let step = match &mut self.state {
                State::Head if pos == data.len() => Step::More,
                State::Head => Step::Head,
                State::Body {
                    left,
                    echo,
                    keep,
                    announce,
                } => {
                    let n = (*left).min(data.len() - pos);
                    if *echo && n > 0 {
                        if let Some(len) = announce.take() {
                            echo_head(len, *keep, out);
                        }
                        out.extend_from_slice(&data[pos..pos + n]);
                    }
                    *left -= n;
                    if *left == 0 {
                        finish(*keep, fed);
                        self.state = State::Head;
                    }
                    if n == 0 && pos == data.len() {
                        Step::More
                    } else {
                        Step::Used(n)
                    }
                }
                State::Chunked(c) => match c.step(&data[pos..], self.max_body) {
                    Ok(Some(used)) => Step::Used(used),
                    Ok(None) => Step::More,
                    Err(e) => refuse(
                        match e {
                            ChunkError::Malformed => Refusal::BadRequest,
                            ChunkError::TooLarge => Refusal::TooLarge,
                            ChunkError::TrailersTooLarge => Refusal::HeadTooLarge,
                        },
                        out,
                        fed,
                    ),
                },
                State::Closed => Step::More,
            };
            if let State::Chunked(c) = &self.state {
                if c.complete() {
                    let State::Chunked(c) = std::mem::take(&mut self.state) else {
                        unreachable!()
                    };
                    if let Some(body) = c.body {
                        echo_head(body.len(), c.keep, out);
                        out.extend_from_slice(&body);
                    }
                    finish(c.keep, fed);
                }
            }
            match step {
                Step::Head => match self.head(&data[pos..], out, fed, each) {
                    Step::Used(n) => pos += n,
                    _ => break,
                },
                Step::Used(n) => pos += n,
                Step::More => break,
            }
        }
        if fed.close {
            data.len()
        } else {
            pos
        }
    }

    /// Parses a request head at the start of `data` and answers or starts its body.
    fn head<F: FnMut(Request<'_>, &mut Vec<u8>) -> Answer>(
        &mut self,
        data: &[u8],
        out: &mut Vec<u8>,
        fed: &mut Fed,
        each: &mut F,
    ) -> Step {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        let n = match req.parse(data) {
            Ok(httparse::Status::Complete(n)) if n > MAX_HEAD => return refuse(Refusal::HeadTooLarge, out, fed),
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if data.len() > MAX_HEAD => return refuse(Refusal::HeadTooLarge, out, fed),
            Ok(httparse::Status::Partial) => return Step::More,
            Err(httparse::Error::TooManyHeaders) => return refuse(Refusal::HeadTooLarge, out, fed),
            Err(_) => return refuse(Refusal::BadRequest, out, fed),
        };
        let h = match Head::read(&req) {
            Ok(h) => h,
            Err(r) => return refuse(r, out, fed),
        };
        let method = req.method.unwrap_or("");
        let echo = matches!(method, "POST" | "PUT");
        if h.content_length.is_some_and(|n| n > self.max_body) {
            return refuse(Refusal::TooLarge, out, fed);
        }
        // The request's own work, before its response is written.
        let served = matches!(method, "GET" | "HEAD" | "POST" | "PUT");
        let target = req.path.unwrap_or("").as_bytes();
        if served && each(Request { target }, out) == Answer::Refuse {
            return refuse(Refusal::BadRequest, out, fed);
        }
        if h.continue_expected && (h.chunked || h.content_length.is_some_and(|n| n > 0)) {
            out.extend_from_slice(CONTINUE);
        }
        let conn_line = if h.keep { KEEP } else { CLOSE };
        match method {
            "GET" | "HEAD" => {
                out.extend_from_slice(OK_HEAD);
                out.extend_from_slice(conn_line);
                out.extend_from_slice(b"\r\n");
                if method == "GET" {
                    out.extend_from_slice(BODY);
                }
            }
            // The echo's head goes out with the first body byte (or now, for an empty body).
            "POST" | "PUT" if !h.chunked && h.content_length.unwrap_or(0) == 0 => echo_head(0, h.keep, out),
            "POST" | "PUT" => {}
            _ => {
                out.extend_from_slice(NOT_ALLOWED_HEAD);
                out.extend_from_slice(conn_line);
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(NOT_ALLOWED_BODY);
            }
        }
        self.state = if h.chunked {
            State::Chunked(Chunked {
                phase: Phase::Size,
                body: echo.then(Vec::new),
                size: 0,
                keep: h.keep,
            })
        } else {
            match h.content_length.unwrap_or(0) {
                0 => {
                    finish(h.keep, fed);
                    State::Head
                }
                left => State::Body {
                    left,
                    echo,
                    keep: h.keep,
                    announce: Some(left),
                },
            }
        };
        Step::Used(n)
    }
}

/// What a request head says about the connection and the body.
struct Head {
    keep: bool,
    content_length: Option<usize>,
    chunked: bool,
    continue_expected: bool,
}

impl Head {
    /// Applies RFC 9112's rules on `Host`, `Content-Length`, `Transfer-Encoding` and `Expect`.
    fn read(req: &httparse::Request<'_, '_>) -> Result<Head, Refusal> {
        let http10 = req.version == Some(0);
        let mut h = Head {
            keep: !http10,
            content_length: None,
            chunked: false,
            continue_expected: false,
        };
        let (mut hosts, mut te) = (0, false);
        for header in req.headers.iter() {
            let (name, value) = (header.name, header.value.trim_ascii());
            if name.eq_ignore_ascii_case("connection") {
                for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                    if token.eq_ignore_ascii_case(b"close") {
                        h.keep = false;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                        h.keep = true;
                    }
                }
            } else if name.eq_ignore_ascii_case("host") {
                hosts += 1;
                if !value
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:[]%".contains(&b))
                {
                    return Err(Refusal::BadRequest);
                }
            } else if name.eq_ignore_ascii_case("content-length") {
                // Digits only (no sign, no list); repeated values must agree.
                if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
                    return Err(Refusal::BadRequest);
                }
                let n = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
                let n = n.ok_or(Refusal::TooLarge)?;
                if h.content_length.is_some_and(|m| m != n) {
                    return Err(Refusal::BadRequest);
                }
                h.content_length = Some(n);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                if te || !value.eq_ignore_ascii_case(b"chunked") {
                    // One coding we can decode, and nothing layered on it.
                    let known = value
                        .split(|&b| b == b',')
                        .all(|c| c.trim_ascii().eq_ignore_ascii_case(b"chunked"));
                    return Err(if known {
                        Refusal::BadRequest
                    } else {
                        Refusal::NotImplemented
                    });
                }
                te = true;
            } else if name.eq_ignore_ascii_case("expect") {
                if !value.eq_ignore_ascii_case(b"100-continue") {
                    return Err(Refusal::ExpectationFailed);
                }
                h.continue_expected = !http10;
            }
        }
        // RFC 9112 §3.2: exactly one Host in HTTP/1.1 (at most one in 1.0); §6.1: a message with
        // both Transfer-Encoding and Content-Length, or Transfer-Encoding in HTTP/1.0, is faulty.
        if (!http10 && hosts != 1) || hosts > 1 || (te && (h.content_length.is_some() || http10)) {
            return Err(Refusal::BadRequest);
        }
        h.chunked = te;
        Ok(h)
    }
}

/// Writes the head of a 200 echoing a body of `len` bytes.
fn echo_head(len: usize, keep: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(ECHO_HEAD);
    let _ = write!(out, "Content-Length: {len}\r\n");
    out.extend_from_slice(if keep { KEEP } else { CLOSE });
    out.extend_from_slice(b"\r\n");
}

/// A request is answered: count it; end the connection after it unless kept alive.
fn finish(keep: bool, fed: &mut Fed) {
    fed.requests += 1;
    fed.close |= !keep;
}

/// Answers with a refusal; it counts as a request answered, and the connection ends here.
fn refuse(r: Refusal, out: &mut Vec<u8>, fed: &mut Fed) -> Step {
    r.write(out);
    finish(false, fed);
    Step::More
}

#[cfg(test)]
mod proto_http {
    use crate::proto::http::*;
    use crate::proto::Fed;

    fn run(chunks: &[&[u8]]) -> (String, Fed) {
        let mut s = HttpSession::default();
        let mut out = Vec::new();
        let mut total = Fed::default();
        for c in chunks {
            let f = s.feed(c, &mut out, &mut |_, _| crate::proto::Answer::Serve);
            total.requests += f.requests;
            total.close |= f.close;
        }
        (String::from_utf8(out).unwrap(), total)
    }

    #[test]
    fn http10_closes_by_default_and_keeps_alive_on_request() {
        let (out, fed) = run(&[b"GET / HTTP/1.0\r\n\r\n"]);
        assert!(
            out.starts_with("HTTP/1.1 200 OK")
                && out.contains("Connection: close")
                && out.ends_with("<html>hello</html>")
        );
        assert!(fed.close);
        let (out, fed) = run(&[b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"]);
        assert!(out.contains("Connection: keep-alive") && !fed.close);
    }

    #[test]
    fn http11_keeps_alive_unless_close() {
        let (_, fed) = run(&[b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
        assert!(!fed.close);
        let (out, fed) =
            run(&[b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
        assert!(
            fed.close && fed.requests == 1,
            "nothing after a close is answered: {out}"
        );
    }

    #[test]
    fn head_has_no_body_and_other_methods_get_405() {
        let (out, _) = run(&[b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"]);
        assert!(out.contains("Content-Length: 18") && !out.contains("<html>"));
        let (out, fed) =
            run(&[b"DELETE / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
        assert!(out.starts_with("HTTP/1.1 405") && out.contains("Allow: GET, HEAD, POST, PUT"));
        assert_eq!(
            fed.requests, 2,
            "the DELETE body is skipped and the next request answered"
        );
        assert!(out.ends_with("<html>hello</html>"));
    }

    #[test]
    fn post_and_put_echo_their_body_however_it_is_framed() {
        let (out, fed) =
            run(&[b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
        assert!(
            out.starts_with("HTTP/1.1 200 OK") && out.contains("Content-Length: 5\r\n"),
            "{out}"
        );
        assert!(out.contains("\r\n\r\nhelloHTTP/1.1 200 OK"), "{out}");
        assert_eq!(fed.requests, 2);
        let chunked = b"PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n4;a=b\r\nabcd\r\n2\r\nef\r\n0\r\nT: 1\r\n\r\n";
        // The same answer for every split of the stream.
        let whole = run(&[chunked]);
        for cut in 1..chunked.len() {
            assert_eq!(run(&[&chunked[..cut], &chunked[cut..]]), whole, "cut at {cut}");
        }
        assert!(
            whole.0.contains("Content-Length: 6\r\n") && whole.0.ends_with("\r\n\r\nabcdef"),
            "{}",
            whole.0
        );
        assert_eq!(
            whole.1,
            Fed {
                requests: 1,
                ..Fed::default()
            }
        );
        let (out, _) = run(&[b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"]);
        assert_eq!(
            out, "HTTP/1.1 100 Continue\r\n\r\n",
            "100 Continue before the body arrives"
        );
    }

    #[test]
    fn framing_errors_get_their_status_and_close() {
        for (req, want) in [
            (&b"GET / HTTP/1.1\r\n\r\n"[..], "HTTP/1.1 400"),
            (b"GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", "HTTP/1.1 400"),
            (
                b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
                "HTTP/1.1 400",
            ),
            (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 400"),
            (
                b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
                "HTTP/1.1 501",
            ),
            (
                b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\n",
                "HTTP/1.1 400",
            ),
            (
                b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n",
                "HTTP/1.1 413",
            ),
            (
                b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "HTTP/1.1 400",
            ),
            (b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", "HTTP/1.1 417"),
        ] {
            let (out, fed) = run(&[req]);
            assert!(
                out.starts_with(want) && fed.close,
                "{}: {out}",
                String::from_utf8_lossy(req)
            );
        }
        // HTTP/1.0 needs no Host.
        assert!(run(&[b"GET / HTTP/1.0\r\n\r\n"]).0.starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn malformed_is_400_and_oversized_is_431() {
        let (out, fed) = run(&[b"GARBAGE\x01\r\n\r\n"]);
        assert!(out.starts_with("HTTP/1.1 400") && fed.close);
        let (out, fed) = run(&[b"GET / HTTP/1.1\r\nContent-Length: nope\r\n\r\n"]);
        assert!(out.starts_with("HTTP/1.1 400") && fed.close);
        let big = format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(9000));
        let (out, fed) = run(&[big.as_bytes()]);
        assert!(out.starts_with("HTTP/1.1 431") && fed.close);
        // Incomplete but already too long: 431 without waiting for the end.
        let partial = format!("GET / HTTP/1.1\r\nX-Big: {}", "a".repeat(9000));
        let (out, fed) = run(&[partial.as_bytes()]);
        assert!(out.starts_with("HTTP/1.1 431") && fed.close);
        let many: String = (0..100).map(|i| format!("X-{i}: v\r\n")).collect();
        let (out, _) = run(&[format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes()]);
        assert!(out.starts_with("HTTP/1.1 431"));
    }

    #[test]
    fn pipelined_requests_are_answered_in_order() {
        let req =
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\nHEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n";
        let (out, fed) = run(&[req]);
        assert_eq!(fed.requests, 3);
        assert_eq!(out.matches("200 OK").count(), 3);
        assert_eq!(out.matches("<html>hello</html>").count(), 2);
    }
}
