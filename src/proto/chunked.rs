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
                let Some(end) = line_end(data) else {
                    return if data.len() > MAX_CHUNK_LINE + 18 {
                        Err(ChunkError::Malformed)
                    } else {
                        Ok(None)
                    };
                };
                let line = &data[..end];
                let (size, ext) = match line.iter().position(|&b| b == b';') {
                    Some(i) => (&line[..i], &line[i..]),
                    None => (line, &line[line.len()..]),
                };
                let size = size.trim_ascii_end();
                if size.is_empty()
                    || size.len() > 16
                    || !size.iter().all(u8::is_ascii_hexdigit)
                    || ext.len() > MAX_CHUNK_LINE
                {
                    return Err(ChunkError::Malformed);
                }
                let n = usize::from_str_radix(std::str::from_utf8(size).expect("hex digits"), 16)
                    .map_err(|_| ChunkError::Malformed)?;
                if self.size.saturating_add(n) > max_body {
                    return Err(ChunkError::TooLarge);
                }
                self.phase = if n == 0 {
                    Phase::Trailers { seen: 0 }
                } else {
                    Phase::Data { left: n }
                };
                Ok(Some(end + 2))
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
                let Some(end) = line_end(data) else {
                    return if seen + data.len() > MAX_TRAILERS {
                        Err(ChunkError::TrailersTooLarge)
                    } else {
                        Ok(None)
                    };
                };
                if end == 0 {
                    self.phase = Phase::Done;
                } else if !data[..end].contains(&b':') {
                    return Err(ChunkError::Malformed);
                } else {
                    self.phase = Phase::Trailers { seen: seen + end + 2 };
                }
                Ok(Some(end + 2))
            }
            Phase::Done => Ok(None),
        }
    }
}

/// The index of the CRLF ending the first line of `data`, if it is there.
fn line_end(data: &[u8]) -> Option<usize> {
    data.windows(2).position(|w| w == b"\r\n")
}
