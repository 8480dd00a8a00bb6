//! What an HTTP/1.1 session writes: the response heads and bodies it sends, and its refusals.

use std::io::Write;

/// The body every 200 to GET carries (seed 000's).
pub const BODY: &[u8] = b"<html>hello</html>";

/// The answer to a request head that did not complete in time (`--header-timeout`).
pub const REQUEST_TIMEOUT: &[u8] =
    b"HTTP/1.1 408 Request Timeout\r\nServer: muxlab\r\nContent-Length: 23\r\nConnection: close\r\n\r\nrequest head timed out\n";

pub(super) const STREAM_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nServer: muxlab\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n";
pub(super) const OK_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nServer: muxlab\r\nContent-Type: text/html\r\nContent-Length: 18\r\n";
pub(super) const ECHO_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nServer: muxlab\r\nContent-Type: application/octet-stream\r\n";
pub(super) const KEEP: &[u8] = b"Connection: keep-alive\r\n";
pub(super) const CLOSE: &[u8] = b"Connection: close\r\n";
pub(super) const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
pub(super) const NOT_ALLOWED_HEAD: &[u8] =
    b"HTTP/1.1 405 Method Not Allowed\r\nServer: muxlab\r\nAllow: GET, HEAD, POST, PUT\r\nContent-Length: 19\r\n";
pub(super) const NOT_ALLOWED_BODY: &[u8] = b"method not allowed\n";

/// A refusal: the status line and a one-line body; the connection closes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    BadRequest,
    ExpectationFailed,
    TooLarge,
    HeadTooLarge,
    NotImplemented,
}

impl Refusal {
    pub(super) fn write(self, out: &mut Vec<u8>) {
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

/// Writes a GET's (or a HEAD's) 200.
pub(super) fn ok_response(get: bool, keep: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(OK_HEAD);
    out.extend_from_slice(if keep { KEEP } else { CLOSE });
    out.extend_from_slice(b"\r\n");
    if get {
        out.extend_from_slice(BODY);
    }
}

/// Writes the head of a 200 echoing a body of `len` bytes.
pub(super) fn echo_head(len: usize, keep: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(ECHO_HEAD);
    let _ = write!(out, "Content-Length: {len}\r\n");
    out.extend_from_slice(if keep { KEEP } else { CLOSE });
    out.extend_from_slice(b"\r\n");
}
