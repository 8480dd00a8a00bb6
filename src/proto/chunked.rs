//! Chunked transfer coding (RFC 9112 §7.1), decoded incrementally: chunk-size lines with
//! extensions, chunk data, the CRLF after it, and trailer lines up to an empty one. Any split of
//! the input decodes the same.

/// The longest chunk-size line (size, extensions) accepted.
const MAX_CHUNK_LINE: usize = 4 * 1024;
/// The largest trailer section accepted (as large as a request head).
const MAX_TRAILERS: usize = 8 * 1024;

/// Why a chunked body cannot be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkError {
    /// Bad framing: a chunk-size line, a missing CRLF, an extension over 4 KiB.
    Malformed,
    /// The body would pass the limit.
    TooLarge,
    /// The trailer section is over 8 KiB.
    TrailersTooLarge,
}

/// A chunked body being decoded.
#[derive(Debug)]
pub struct Chunked {
    pub phase: Phase,
    /// The body so far, when it is to be echoed (POST / PUT); `None`: skipped.
    pub body: Option<Vec<u8>>,
    /// Body bytes received so far (against `max_body`).
    pub size: usize,
    pub keep: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A chunk-size line.
    Size,
    /// Chunk data, `left` bytes to go.
    Data { left: usize },
    /// The CRLF after chunk data.
    DataEnd,
    /// Trailer lines, up to an empty line; `seen` bytes of them so far.
    Trailers { seen: usize },
    /// The last chunk and the trailers are in: the body is complete.
    Done,
}

impl Chunked {
    pub fn complete(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Decodes what it can of `data`: `Some(bytes used)`, or `None` when a framing line is
    /// incomplete.
    pub fn step(&mut self, data: &[u8], max_body: usize) -> Result<Option<usize>, ChunkError> {
        match self.phase {
            Phase::Size => {
                let Some((n, used)) = size_line(data)? else {
                    return Ok(None);
                };
                if self.size.saturating_add(n) > max_body {
                    return Err(ChunkError::TooLarge);
                }
                self.phase = if n == 0 {
                    Phase::Trailers { seen: 0 }
                } else {
                    Phase::Data { left: n }
                };
                Ok(Some(used))
            }
            Phase::Data { left } => {
                if data.is_empty() {
                    return Ok(None);
                }
                let n = left.min(data.len());
                if let Some(body) = &mut self.body {
                    body.extend_from_slice(&data[..n]);
                }
                self.size += n;
                self.phase = if n == left {
                    Phase::DataEnd
                } else {
                    Phase::Data { left: left - n }
                };
                Ok(Some(n))
            }
            Phase::DataEnd => match data {
                [b'\r', b'\n', ..] => {
                    self.phase = Phase::Size;
                    Ok(Some(2))
                }
                [] | [b'\r'] => Ok(None),
                _ => Err(ChunkError::Malformed),
            },
            Phase::Trailers { seen } => {
                let Some(lf) = data.iter().position(|&b| b == b'\n') else {
                    return if seen + data.len() > MAX_TRAILERS {
                        Err(ChunkError::TrailersTooLarge)
                    } else {
                        Ok(None)
                    };
                };
                if seen + lf + 1 > MAX_TRAILERS {
                    return Err(ChunkError::TrailersTooLarge);
                }
                // A head line: its CR is optional, as in the request head (RFC 9112 §2.2).
                let line = data[..lf].strip_suffix(b"\r").unwrap_or(&data[..lf]);
                if line.is_empty() {
                    self.phase = Phase::Done;
                } else if !trailer_field(line) {
                    return Err(ChunkError::Malformed);
                } else {
                    self.phase = Phase::Trailers { seen: seen + lf + 1 };
                }
                Ok(Some(lf + 1))
            }
            Phase::Done => Ok(None),
        }
    }
}

/// The chunk-size line at the start of `data`, by RFC 9112 §7.1: `chunk-size [ chunk-ext ]
/// CRLF`, where `chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )`.
/// `Some((size, bytes of the line))`, `None` while the line is not complete. Anything else is
/// malformed: a line ended by a bare LF, a bare CR, whitespace that is not around an extension's
/// `;` or `=`, an empty or bad extension, a size over 16 hex digits, a line over 4 KiB. A front
/// end that reads the same bytes more leniently would see another request where this one sees a
/// body: the shape of request smuggling, so nothing lenient is accepted here.
fn size_line(data: &[u8]) -> Result<Option<(usize, usize)>, ChunkError> {
    let Some(lf) = data.iter().position(|&b| b == b'\n') else {
        return if data.len() > MAX_CHUNK_LINE + 18 {
            Err(ChunkError::Malformed)
        } else {
            Ok(None)
        };
    };
    let line = data[..lf].strip_suffix(b"\r").ok_or(ChunkError::Malformed)?;
    if line.len() > MAX_CHUNK_LINE + 16 {
        return Err(ChunkError::Malformed);
    }
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > 16 || !extensions(&line[digits..]) {
        return Err(ChunkError::Malformed);
    }
    let size = std::str::from_utf8(&line[..digits]).expect("hex digits");
    let n = usize::from_str_radix(size, 16).map_err(|_| ChunkError::Malformed)?;
    Ok(Some((n, lf + 1)))
}

/// `ext` is a list of chunk extensions, each `BWS ";" BWS name [ BWS "=" BWS value ]`.
fn extensions(ext: &[u8]) -> bool {
    let ws = |i: usize| i + ext[i..].iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    let mut i = 0;
    while i < ext.len() {
        i = ws(i);
        if ext.get(i) != Some(&b';') {
            return false;
        }
        i = ws(i + 1);
        let name = token_len(&ext[i..]);
        if name == 0 {
            return false;
        }
        i += name;
        let eq = ws(i);
        if ext.get(eq) == Some(&b'=') {
            i = ws(eq + 1);
            let value = match ext.get(i) {
                Some(b'"') => quoted_len(&ext[i..]),
                _ => token_len(&ext[i..]),
            };
            if value == 0 {
                return false;
            }
            i += value;
        }
    }
    true
}

/// A trailer field line (CR and LF taken off): `name ":" OWS value OWS`, the name a token right
/// against the colon (no whitespace before it, no obs-fold), the value visible characters,
/// spaces and tabs only.
fn trailer_field(line: &[u8]) -> bool {
    let name = token_len(line);
    name > 0
        && line.get(name) == Some(&b':')
        && line[name + 1..]
            .iter()
            .all(|&b| b == b'\t' || b == b' ' || (0x21..=0x7e).contains(&b) || b >= 0x80)
}

/// The length of the token (RFC 9110 §5.6.2) at the start of `b`.
fn token_len(b: &[u8]) -> usize {
    b.iter()
        .take_while(|&&c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
        .count()
}

/// The length of the quoted-string (RFC 9110 §5.6.4) at the start of `b`, 0 if there is none.
fn quoted_len(b: &[u8]) -> usize {
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => return i + 1,
            b'\\' => match b.get(i + 1) {
                Some(&c) if c == b'\t' || c >= 0x20 && c != 0x7f => i += 2,
                _ => return 0,
            },
            c if c == b'\t' || c >= 0x20 && c != 0x7f => i += 1,
            _ => return 0,
        }
    }
    0
}
