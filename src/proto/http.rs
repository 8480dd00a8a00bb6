//! http: the seed's "hello" server as a sans-I/O HTTP/1.x session.
//!
//! GET / HEAD -> 200 `<html>hello</html>`. HTTP/1.0 closes unless `Connection: keep-alive`;
//! HTTP/1.1 keeps alive unless `Connection: close`. Pipelined requests are answered in order;
//! requests may arrive split at any byte. Malformed -> 400 and close; a header section over
//! 8 KiB (or too many headers) -> 431 and close; other methods -> 405. Parsing is `httparse`.

use super::Fed;

/// The largest request head (request line + headers) accepted.
pub const MAX_HEAD: usize = 8 * 1024;
/// The most headers one request may carry.
const MAX_HEADERS: usize = 64;

/// The body every 200 carries (seed 000's).
pub const BODY: &[u8] = b"<html>hello</html>";

const OK_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nServer: muxlab\r\nContent-Type: text/html\r\nContent-Length: 18\r\n";
const KEEP: &[u8] = b"Connection: keep-alive\r\n";
const CLOSE: &[u8] = b"Connection: close\r\n";
const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nServer: muxlab\r\nContent-Length: 12\r\nConnection: close\r\n\r\nbad request\n";
const TOO_LARGE: &[u8] = b"HTTP/1.1 431 Request Header Fields Too Large\r\nServer: muxlab\r\nContent-Length: 24\r\nConnection: close\r\n\r\nrequest head over 8 KiB\n";
const NOT_ALLOWED_HEAD: &[u8] =
    b"HTTP/1.1 405 Method Not Allowed\r\nServer: muxlab\r\nAllow: GET, HEAD\r\nContent-Length: 19\r\n";
const NOT_ALLOWED_BODY: &[u8] = b"method not allowed\n";

/// One connection's HTTP state.
#[derive(Debug, Default)]
pub struct HttpSession {
    /// Bytes of a request not yet complete.
    buf: Vec<u8>,
    /// Body bytes still to skip (a request with Content-Length).
    skip: usize,
    /// A response said `Connection: close`; everything after is ignored.
    closed: bool,
}

/// What the parser decided about the bytes it was given.
struct Parsed {
    consumed: usize,
    requests: u64,
    close: bool,
}

impl HttpSession {
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Fed {
        if self.closed {
            return Fed {
                requests: 0,
                close: true,
            };
        }
        let p = if self.buf.is_empty() {
            // Fast path: parse straight from the read buffer, keep only an incomplete tail.
            let p = parse_all(input, &mut self.skip, out);
            self.buf.extend_from_slice(&input[p.consumed..]);
            p
        } else {
            self.buf.extend_from_slice(input);
            let p = parse_all(&self.buf, &mut self.skip, out);
            self.buf.drain(..p.consumed);
            p
        };
        if p.close {
            self.closed = true;
            self.buf = Vec::new();
        }
        Fed {
            requests: p.requests,
            close: p.close,
        }
    }
}

/// Answers every complete request in `data`; returns how much of it was used.
fn parse_all(data: &[u8], skip: &mut usize, out: &mut Vec<u8>) -> Parsed {
    let mut pos = 0;
    let mut requests = 0;
    loop {
        if *skip > 0 {
            let n = (*skip).min(data.len() - pos);
            *skip -= n;
            pos += n;
        }
        if pos == data.len() {
            return Parsed {
                consumed: pos,
                requests,
                close: false,
            };
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        let close = match req.parse(&data[pos..]) {
            Ok(httparse::Status::Complete(n)) if n > MAX_HEAD => {
                out.extend_from_slice(TOO_LARGE);
                true
            }
            Ok(httparse::Status::Complete(n)) => match respond(&req, out) {
                Some((keep, body_len)) => {
                    pos += n;
                    *skip = body_len;
                    requests += 1;
                    if keep {
                        continue;
                    }
                    return Parsed {
                        consumed: pos,
                        requests,
                        close: true,
                    };
                }
                None => {
                    out.extend_from_slice(BAD_REQUEST);
                    true
                }
            },
            Ok(httparse::Status::Partial) if data.len() - pos > MAX_HEAD => {
                out.extend_from_slice(TOO_LARGE);
                true
            }
            Ok(httparse::Status::Partial) => {
                return Parsed {
                    consumed: pos,
                    requests,
                    close: false,
                }
            }
            Err(httparse::Error::TooManyHeaders) => {
                out.extend_from_slice(TOO_LARGE);
                true
            }
            Err(_) => {
                out.extend_from_slice(BAD_REQUEST);
                true
            }
        };
        // An error response: it is a request answered, and the connection ends here.
        return Parsed {
            consumed: data.len(),
            requests: requests + 1,
            close,
        };
    }
}

/// Writes the response to a complete request head. Returns `(keep_alive, body_bytes_to_skip)`,
/// or `None` when the head is malformed (bad Content-Length).
fn respond(req: &httparse::Request<'_, '_>, out: &mut Vec<u8>) -> Option<(bool, usize)> {
    let http10 = req.version == Some(0);
    let mut keep = !http10;
    let mut body_len = 0usize;
    let mut chunked = false;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let t = token.trim_ascii();
                if t.eq_ignore_ascii_case(b"close") {
                    keep = false;
                } else if t.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    keep = true;
                }
            }
        } else if h.name.eq_ignore_ascii_case("content-length") {
            body_len = std::str::from_utf8(h.value).ok()?.trim().parse().ok()?;
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = true;
        }
    }
    // A body we cannot frame (chunked) means we cannot find the next request: close after.
    if chunked {
        keep = false;
    }
    let method = req.method.unwrap_or("");
    let conn_line = if keep { KEEP } else { CLOSE };
    match method {
        "GET" | "HEAD" => {
            out.extend_from_slice(OK_HEAD);
            out.extend_from_slice(conn_line);
            out.extend_from_slice(b"\r\n");
            if method == "GET" {
                out.extend_from_slice(BODY);
            }
        }
        _ => {
            out.extend_from_slice(NOT_ALLOWED_HEAD);
            out.extend_from_slice(conn_line);
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(NOT_ALLOWED_BODY);
        }
    }
    Some((keep, body_len))
}
