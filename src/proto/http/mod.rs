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
//! `Content-Length`, chunk framing that is not exactly RFC 9112 §7.1's (a chunk-size line or
//! chunk data ended by anything but CRLF, an extension outside its grammar or over 4 KiB) -> 400;
//! a head over
//! 8 KiB or too many headers -> 431; a body over `max_body` -> 413; a `Transfer-Encoding` other
//! than `chunked` -> 501; an `Expect` other than `100-continue` -> 417. `Expect: 100-continue`
//! gets `100 Continue` before the body. Other methods -> 405 (their body, if any, is skipped).
//! Parsing of heads is `httparse`, behind a one-pass read of the common head (`scan`: a strict
//! subset of what httparse accepts, read alike; anything else goes to httparse). A head line may end in a bare LF (RFC 9112 §2.2 lets a
//! recipient accept one), alike in the request line, the fields and the trailers; a bare CR, a
//! folded line (obs-fold) or whitespace before a field's colon is 400.

/// A table of the 256 bytes: `true` where `$keep` holds of byte `$b`.
macro_rules! byte_table {
    ($b:ident => $keep:expr) => {{
        let mut t = [false; 256];
        let mut i = 0;
        while i < 256 {
            let $b = i as u8;
            t[i] = $keep;
            i += 1;
        }
        t
    }};
}

mod head;
mod parse;
mod response;
mod scan;
mod session;
#[cfg(test)]
mod tests;

pub use parse::MAX_HEAD;
pub use response::BODY;
pub use session::HttpSession;
