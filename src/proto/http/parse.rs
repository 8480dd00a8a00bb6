//! Finding the request head at the start of the input ([`parse`]): the common head by the
//! one-pass scan (`scan`), any other by httparse; the limits on its size and its headers; and
//! what its headers say (`head`), or why it is refused.

use super::head::Head;
use super::response::Refusal;
use super::scan;

/// The largest request head (request line + headers) accepted, and of a trailer section.
pub const MAX_HEAD: usize = 8 * 1024;
/// The most headers one request may carry.
const MAX_HEADERS: usize = 64;

/// What the input begins with.
pub(super) enum Parsed<'a> {
    /// Part of a head: more input is needed.
    More,
    /// A head refused (too large, too many headers, malformed, or what its headers say).
    Refused(Refusal),
    /// A whole head, read.
    Read(Read<'a>),
}

/// A request head read: its request line, what its headers say and its length.
pub(super) struct Read<'a> {
    pub(super) method: &'a [u8],
    pub(super) target: &'a [u8],
    pub(super) head: Head,
    /// Its bytes, through its blank line.
    pub(super) len: usize,
}

/// Reads the request head at the start of `data`.
pub(super) fn parse(data: &[u8]) -> Parsed<'_> {
    let read = |method, target, head: Result<Head, Refusal>, len| match head {
        Ok(head) => Parsed::Read(Read {
            method,
            target,
            head,
            len,
        }),
        Err(r) => Parsed::Refused(r),
    };
    let mut common = [(&b""[..], &b""[..]); scan::MOST];
    if let Some(line) = scan::scan(data, &mut common) {
        if line.len > MAX_HEAD {
            return Parsed::Refused(Refusal::HeadTooLarge);
        }
        let head = Head::read(line.http10, common[..line.headers].iter().copied());
        return read(line.method, line.target, head, line.len);
    }
    // Left uninitialised: the parse writes the headers it finds (64 empty ones written first
    // cost more than the parse of a small request).
    let mut headers = [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let len = match req.parse_with_uninit_headers(data, &mut headers) {
        Ok(httparse::Status::Complete(n)) if n > MAX_HEAD => return Parsed::Refused(Refusal::HeadTooLarge),
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if data.len() > MAX_HEAD => return Parsed::Refused(Refusal::HeadTooLarge),
        Ok(httparse::Status::Partial) => return Parsed::More,
        Err(httparse::Error::TooManyHeaders) => return Parsed::Refused(Refusal::HeadTooLarge),
        Err(_) => return Parsed::Refused(Refusal::BadRequest),
    };
    let head = Head::read(
        req.version == Some(0),
        req.headers.iter().map(|h| (h.name.as_bytes(), h.value)),
    );
    read(
        req.method.unwrap_or("").as_bytes(),
        req.path.unwrap_or("").as_bytes(),
        head,
        len,
    )
}
