//! A request head read for what it says about the connection and the body: keep-alive,
//! Content-Length or chunked, `Expect: 100-continue`, or why it is refused.

use super::response::Refusal;

/// The bytes a `Host` value may hold: a reg-name's (RFC 3986: unreserved, sub-delims,
/// percent-encoding), an IP literal's brackets and the port's colon.
const HOST_BYTE: [bool; 256] = byte_table!(b => b.is_ascii_alphanumeric()
|| matches!(
    b,
    b'-' | b'.' | b'_' | b'~' | b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b':' | b'[' | b']' | b'%'
));

/// What a request head says about the connection and the body.
pub(super) struct Head {
    pub(super) keep: bool,
    pub(super) content_length: Option<usize>,
    pub(super) chunked: bool,
    pub(super) continue_expected: bool,
    /// An HTTP/1.0 request (no chunked coding in its response).
    pub(super) http10: bool,
}

impl Head {
    /// Applies RFC 9112's rules on `Host`, `Content-Length`, `Transfer-Encoding` and `Expect`.
    pub(super) fn read<'a>(http10: bool, headers: impl Iterator<Item = (&'a [u8], &'a [u8])>) -> Result<Head, Refusal> {
        let mut h = Head {
            keep: !http10,
            content_length: None,
            chunked: false,
            continue_expected: false,
            http10,
        };
        let (mut hosts, mut te) = (0, false);
        for (name, value) in headers {
            // Only these names matter here; their lengths tell most others apart at once.
            if !matches!(name.len(), 4 | 6 | 10 | 14 | 17) {
                continue;
            }
            let value = value.trim_ascii();
            if name.eq_ignore_ascii_case(b"connection") {
                for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                    if token.eq_ignore_ascii_case(b"close") {
                        h.keep = false;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                        h.keep = true;
                    }
                }
            } else if name.eq_ignore_ascii_case(b"host") {
                hosts += 1;
                if !value.iter().all(|&b| HOST_BYTE[usize::from(b)]) {
                    return Err(Refusal::BadRequest);
                }
            } else if name.eq_ignore_ascii_case(b"content-length") {
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
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
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
            } else if name.eq_ignore_ascii_case(b"expect") {
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
