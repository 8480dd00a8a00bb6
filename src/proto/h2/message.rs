//! A request's head as HTTP/2 carries it (the decoded fields, checked by RFC 9113 8.2 and
//! 8.3) and the response heads the session writes (HPACK with static names only).

use crate::proto::h2::{frame, hpack};

/// What a request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Get,
    Head,
    /// POST or PUT: the body is echoed.
    Echo,
    Other,
}

/// The request head a block decoded to.
#[derive(Debug, Default)]
pub(super) struct Fields {
    pub(super) method: Option<Method>,
    pub(super) scheme: bool,
    pub(super) path: bool,
    pub(super) authority: bool,
    /// CONNECT, which carries neither :scheme nor :path (and gets 405 here).
    pub(super) connect: bool,
    /// A pseudo-header missing, repeated, unknown or after a regular field; a bad name or a
    /// connection-specific field.
    pub(super) malformed: bool,
    pub(super) regular_seen: bool,
    pub(super) content_length: Option<u64>,
    /// Bytes of the decoded header list (RFC 9113's size: name + value + 32 each).
    pub(super) list_size: usize,
}

/// One decoded request field, checked (RFC 9113 8.2 and 8.3).
pub(super) fn field(f: &mut Fields, path: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    f.list_size += name.len() + value.len() + 32;
    // RFC 9113 8.2.1: a name is lowercase token characters (a pseudo-header's after its
    // colon); a value holds no NUL, CR or LF and neither starts nor ends with whitespace.
    let token = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || b"!#$%&'*+-.^_`|~".contains(c);
    let bare = name.strip_prefix(b":").unwrap_or(name);
    let bad_value = value.iter().any(|c| matches!(c, 0 | b'\r' | b'\n'))
        || value.first().is_some_and(|c| matches!(c, b' ' | b'\t'))
        || value.last().is_some_and(|c| matches!(c, b' ' | b'\t'));
    if bare.is_empty() || !bare.iter().all(token) || bad_value {
        f.malformed = true;
        return;
    }
    if name[0] == b':' {
        if f.regular_seen {
            f.malformed = true;
            return;
        }
        match name {
            b":method" if f.method.is_none() => {
                f.method = Some(match value {
                    b"GET" => Method::Get,
                    b"HEAD" => Method::Head,
                    b"POST" | b"PUT" => Method::Echo,
                    _ => Method::Other,
                });
                f.connect = value == b"CONNECT";
            }
            b":scheme" if !f.scheme => f.scheme = true,
            b":path" if !f.path && !value.is_empty() => {
                f.path = true;
                path.extend_from_slice(value);
            }
            b":authority" if !f.authority => f.authority = true,
            _ => f.malformed = true,
        }
        return;
    }
    f.regular_seen = true;
    match name {
        b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade" => f.malformed = true,
        b"te" if value != b"trailers" => f.malformed = true,
        b"content-length" => {
            let n = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u64>().ok());
            match (n, f.content_length) {
                (Some(n), None) => f.content_length = Some(n),
                (Some(n), Some(m)) if n == m => {}
                _ => f.malformed = true,
            }
        }
        _ => {}
    }
}

/// The one-line body of a refusal.
pub(super) fn refusal_body(status: &[u8]) -> &'static [u8] {
    match status {
        b"400" => b"bad request\n",
        b"405" => b"method not allowed\n",
        b"413" => b"request body over the limit\n",
        _ => b"request head over 8 KiB\n",
    }
}

/// Appends a response's HEADERS frame: status, server, content type and length (`usize::MAX`:
/// none), END_STREAM when the response has no body.
pub(super) fn response_head(out: &mut Vec<u8>, id: u32, status: &[u8], ctype: Option<&[u8]>, len: usize, end: bool) {
    let at = out.len();
    frame::head(
        out,
        0,
        frame::HEADERS,
        frame::END_HEADERS | if end { frame::END_STREAM } else { 0 },
        id,
    );
    let start = out.len();
    if status == b"200" {
        hpack::put_indexed(out, hpack::STATUS);
    } else {
        hpack::put_literal(out, hpack::STATUS, status);
    }
    hpack::put_literal(out, hpack::SERVER, b"muxlab");
    if let Some(t) = ctype {
        hpack::put_literal(out, hpack::CONTENT_TYPE, t);
    }
    if len != usize::MAX {
        let mut digits = [0u8; 20];
        let mut n = len;
        let mut k = digits.len();
        loop {
            k -= 1;
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        hpack::put_literal(out, hpack::CONTENT_LENGTH, &digits[k..]);
    }
    let l = ((out.len() - start) as u32).to_be_bytes();
    out[at..at + 3].copy_from_slice(&l[1..]);
}
