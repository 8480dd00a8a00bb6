//! Reading frames out of any split of the bytes, for the server's session and the load
//! generator's client alike (as hyper/h2's `codec/framed_read.rs` does for both roles): a frame
//! cut by the end of one input is kept for the next, and a header block is handed over whole,
//! assembled from HEADERS and its CONTINUATIONs within the reader's limits. Each role turns a
//! [`ReadError`] into its own answer (the server's GOAWAY, the client's fault).

use crate::proto::h2::frame::{
    unpad, Code, Head, CONTINUATION, END_HEADERS, HEADERS, HEADER_LEN, MAX_FRAME, PRIORITY_FLAG,
};

/// The capacity of a buffer kept once it is empty: what small frames and blocks need.
const SPARE: usize = 4 * 1024;

/// One thing read: a frame, or a whole header block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// Any frame but HEADERS and CONTINUATION: its header and its payload.
    Single(Head, &'a [u8]),
    /// A header block: HEADERS and every CONTINUATION after it.
    Headers(Block<'a>),
    /// A HEADERS frame without END_HEADERS arrived: its block is being assembled (a server
    /// may refuse it at once, before its CONTINUATIONs come).
    Opening(Head),
}

/// A header block, assembled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block<'a> {
    /// The HEADERS frame's header: its stream, its END_STREAM.
    pub head: Head,
    /// The stream its PRIORITY fields depend on, where it carried them.
    pub dependency: Option<u32>,
    /// The encoded block: HEADERS' fragment (its padding and priority taken off) and every
    /// CONTINUATION's, in order.
    pub fragment: &'a [u8],
}

impl Block<'_> {
    pub fn stream(&self) -> u32 {
        self.head.stream
    }

    /// The request or response ends with this block (END_STREAM).
    pub fn ends_stream(&self) -> bool {
        self.head.flags & crate::proto::h2::frame::END_STREAM != 0
    }
}

/// What the bytes did wrong, as the reader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadError {
    /// A frame longer than SETTINGS_MAX_FRAME_SIZE.
    FrameTooLarge,
    /// HEADERS or CONTINUATION on stream 0.
    StreamZero,
    /// Padding longer than its frame, or a padded frame with no pad length.
    Padding(Code),
    /// HEADERS too short for the priority fields its flag promises.
    ShortPriority,
    /// A header block not followed by its CONTINUATION (another frame type came).
    ContinuationExpected,
    /// A CONTINUATION on a stream other than its block's.
    ContinuationElsewhere,
    /// A CONTINUATION with no header block open.
    StrayContinuation,
    /// A header block larger than the reader takes.
    BlockTooLarge,
    /// More CONTINUATIONs in one block than the reader takes (the CONTINUATION flood).
    TooManyContinuations,
}

impl ReadError {
    /// The connection error a server answers it with (RFC 9113).
    pub fn code(self) -> Code {
        match self {
            ReadError::FrameTooLarge | ReadError::ShortPriority => Code::FrameSize,
            ReadError::Padding(code) => code,
            ReadError::BlockTooLarge | ReadError::TooManyContinuations => Code::EnhanceYourCalm,
            ReadError::StreamZero
            | ReadError::ContinuationExpected
            | ReadError::ContinuationElsewhere
            | ReadError::StrayContinuation => Code::Protocol,
        }
    }
}

/// A header block being assembled from more than one frame.
#[derive(Debug, Clone, Copy)]
struct Open {
    head: Head,
    dependency: Option<u32>,
    continuations: usize,
}

/// Frames out of a byte stream.
#[derive(Debug, Default)]
pub struct Reader {
    /// An incomplete frame, kept for the next input.
    partial: Vec<u8>,
    /// The header block being assembled (HEADERS without END_HEADERS), and its bytes.
    open: Option<Open>,
    block: Vec<u8>,
    /// The largest block, and the most CONTINUATIONs in one.
    max_block: usize,
    max_continuations: usize,
    /// Whole frames read so far (a block's CONTINUATIONs each count).
    frames: u64,
}

impl Reader {
    /// A reader of blocks up to `max_block` bytes in up to `max_continuations` CONTINUATIONs.
    pub fn new(max_block: usize, max_continuations: usize) -> Reader {
        Reader {
            max_block,
            max_continuations,
            ..Reader::default()
        }
    }

    /// The bytes of a frame not yet whole, kept from earlier input.
    pub fn buffered(&self) -> &[u8] {
        &self.partial
    }

    /// Whole frames read so far, each CONTINUATION of a block counted.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The frame not yet whole is one that asks nothing of its peer whatever it holds (PING,
    /// SETTINGS, PRIORITY, RST_STREAM, WINDOW_UPDATE, a type unknown): as far as its type is
    /// known, and not inside a header block.
    pub fn partial_is_quiet(&self) -> bool {
        self.open.is_none()
            && self.partial.get(3).is_some_and(|&t| {
                !matches!(
                    t,
                    crate::proto::h2::frame::DATA | HEADERS | CONTINUATION | crate::proto::h2::frame::GOAWAY
                )
            })
    }

    /// Inside a header block, or a HEADERS or CONTINUATION frame not yet whole.
    pub fn head_pending(&self) -> bool {
        self.open.is_some() || self.partial.get(3).is_some_and(|&t| t == HEADERS || t == CONTINUATION)
    }

    /// Gives up the buffers a burst or a large frame grew, once they are empty (an idle
    /// connection's): the bytes given up.
    pub fn trim(&mut self) -> usize {
        let block = match self.open {
            None => crate::proto::shed(&mut self.block, SPARE),
            Some(_) => 0,
        };
        block + crate::proto::shed(&mut self.partial, SPARE)
    }

    /// Keeps `input` unread, after what earlier calls left, for the next call.
    pub fn keep(&mut self, input: &[u8]) {
        self.partial.extend_from_slice(input);
    }

    /// Reads every whole frame of what earlier calls left and `input`, handing each frame (a
    /// header block whole) to `each` in order. Stops at the first error, the reader's or
    /// `each`'s (one that only stops reading is an error of `each`'s own); what is not read
    /// waits for the next call.
    pub fn read<E: From<ReadError>>(
        &mut self,
        input: &[u8],
        each: &mut dyn FnMut(Frame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.partial.is_empty() {
            let (used, r) = self.whole_frames(input, each);
            self.partial.extend_from_slice(&input[used..]);
            return r;
        }
        let mut buf = std::mem::take(&mut self.partial);
        buf.extend_from_slice(input);
        let (used, r) = self.whole_frames(&buf, each);
        buf.drain(..used);
        self.partial = buf;
        r
    }

    /// The whole frames at the start of `b`: the bytes used, and how it ended.
    fn whole_frames<E: From<ReadError>>(
        &mut self,
        b: &[u8],
        each: &mut dyn FnMut(Frame<'_>) -> Result<(), E>,
    ) -> (usize, Result<(), E>) {
        let mut at = 0;
        while b.len() - at >= HEADER_LEN {
            let head = Head::parse(&b[at..]);
            if head.len > MAX_FRAME {
                return (at, Err(ReadError::FrameTooLarge.into()));
            }
            let end = at + HEADER_LEN + head.len;
            if b.len() < end {
                break;
            }
            let payload = &b[at + HEADER_LEN..end];
            at = end;
            self.frames += 1;
            if let Err(e) = self.frame(head, payload, each) {
                return (at, Err(e));
            }
        }
        (at, Ok(()))
    }

    /// One whole frame.
    fn frame<E: From<ReadError>>(
        &mut self,
        head: Head,
        payload: &[u8],
        each: &mut dyn FnMut(Frame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some(open) = self.open {
            if head.kind != CONTINUATION {
                return Err(ReadError::ContinuationExpected.into());
            }
            if head.stream != open.head.stream {
                return Err(ReadError::ContinuationElsewhere.into());
            }
        }
        match head.kind {
            HEADERS => self.headers(head, payload, each),
            CONTINUATION => self.continuation(head, payload, each),
            _ => each(Frame::Single(head, payload)),
        }
    }

    fn headers<E: From<ReadError>>(
        &mut self,
        head: Head,
        payload: &[u8],
        each: &mut dyn FnMut(Frame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if head.stream == 0 {
            return Err(ReadError::StreamZero.into());
        }
        let mut fragment = unpad(head, payload).map_err(ReadError::Padding)?;
        let mut dependency = None;
        if head.flags & PRIORITY_FLAG != 0 {
            if fragment.len() < 5 {
                return Err(ReadError::ShortPriority.into());
            }
            dependency = Some(crate::proto::h2::frame::dependency(fragment));
            fragment = &fragment[5..];
        }
        if fragment.len() > self.max_block {
            return Err(ReadError::BlockTooLarge.into());
        }
        if head.flags & END_HEADERS != 0 {
            // The whole block in one frame: handed over where it lies.
            return each(Frame::Headers(Block {
                head,
                dependency,
                fragment,
            }));
        }
        self.block.clear();
        self.block.extend_from_slice(fragment);
        self.open = Some(Open {
            head,
            dependency,
            continuations: 0,
        });
        each(Frame::Opening(head))
    }

    fn continuation<E: From<ReadError>>(
        &mut self,
        head: Head,
        payload: &[u8],
        each: &mut dyn FnMut(Frame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(open) = self.open.as_mut() else {
            return Err(ReadError::StrayContinuation.into());
        };
        open.continuations += 1;
        if open.continuations > self.max_continuations {
            return Err(ReadError::TooManyContinuations.into());
        }
        if self.block.len() + payload.len() > self.max_block {
            return Err(ReadError::BlockTooLarge.into());
        }
        self.block.extend_from_slice(payload);
        if head.flags & END_HEADERS == 0 {
            return Ok(());
        }
        let open = self.open.take().expect("a block is open");
        let r = each(Frame::Headers(Block {
            head: open.head,
            dependency: open.dependency,
            fragment: &self.block,
        }));
        if self.block.capacity() > SPARE {
            // A large block's buffer is not kept for the life of the connection.
            self.block = Vec::new();
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use crate::proto::h2::frame::reader::*;
    use crate::proto::h2::frame::{head, END_STREAM, PADDED};

    /// Everything a reader hands over for `input` cut at every byte, as (kind, stream, bytes):
    /// the same whatever the cuts.
    fn read_all(input: &[u8], cuts: &[usize]) -> Result<Vec<(u8, u32, Vec<u8>)>, ReadError> {
        let mut r = Reader::new(64 * 1024, 4);
        let mut got = Vec::new();
        let mut last = 0;
        for &c in cuts.iter().chain(std::iter::once(&input.len())) {
            r.read(&input[last..c], &mut |f| {
                match f {
                    Frame::Single(h, p) => got.push((h.kind, h.stream, p.to_vec())),
                    Frame::Headers(b) => got.push((HEADERS, b.stream(), b.fragment.to_vec())),
                    Frame::Opening(_) => {}
                }
                Ok::<(), ReadError>(())
            })?;
            last = c;
        }
        Ok(got)
    }

    fn frame(b: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        head(b, payload.len(), kind, flags, stream);
        b.extend_from_slice(payload);
    }

    #[test]
    fn a_block_comes_whole_from_headers_and_its_continuations_however_the_bytes_are_cut() {
        let mut b = Vec::new();
        frame(&mut b, crate::proto::h2::frame::PING, 0, 0, &[7; 8]);
        // Padded, with priority fields, then two CONTINUATIONs.
        let mut first = vec![2u8, 0, 0, 0, 3, 16];
        first.extend_from_slice(b"abc");
        first.extend_from_slice(&[0, 0]);
        frame(&mut b, HEADERS, PADDED | PRIORITY_FLAG | END_STREAM, 5, &first);
        frame(&mut b, CONTINUATION, 0, 5, b"def");
        frame(&mut b, CONTINUATION, END_HEADERS, 5, b"g");
        frame(&mut b, HEADERS, END_HEADERS, 7, b"xyz");
        let whole = read_all(&b, &[]).unwrap();
        assert_eq!(
            whole,
            vec![
                (crate::proto::h2::frame::PING, 0, vec![7; 8]),
                (HEADERS, 5, b"abcdefg".to_vec()),
                (HEADERS, 7, b"xyz".to_vec())
            ]
        );
        for cut in 1..b.len() {
            assert_eq!(read_all(&b, &[cut]).unwrap(), whole, "cut at {cut}");
        }
    }

    #[test]
    fn continuation_rules_and_limits_are_errors_of_their_own() {
        let open = |b: &mut Vec<u8>| frame(b, HEADERS, 0, 1, b"a");
        let mut b = Vec::new();
        open(&mut b);
        frame(&mut b, crate::proto::h2::frame::DATA, 0, 1, b"");
        assert_eq!(read_all(&b, &[]), Err(ReadError::ContinuationExpected));
        let mut b = Vec::new();
        open(&mut b);
        frame(&mut b, CONTINUATION, END_HEADERS, 3, b"");
        assert_eq!(read_all(&b, &[]), Err(ReadError::ContinuationElsewhere));
        let mut b = Vec::new();
        frame(&mut b, CONTINUATION, END_HEADERS, 1, b"");
        assert_eq!(read_all(&b, &[]), Err(ReadError::StrayContinuation));
        // Four CONTINUATIONs pass, the fifth is one too many.
        let mut b = Vec::new();
        open(&mut b);
        for _ in 0..5 {
            frame(&mut b, CONTINUATION, 0, 1, b"");
        }
        assert_eq!(read_all(&b, &[]), Err(ReadError::TooManyContinuations));
        let mut b = Vec::new();
        open(&mut b);
        for _ in 0..4 {
            frame(&mut b, CONTINUATION, 0, 1, &[0; MAX_FRAME]);
        }
        assert_eq!(read_all(&b, &[]), Err(ReadError::BlockTooLarge), "past 64 KiB");
        let mut b = Vec::new();
        frame(&mut b, HEADERS, END_HEADERS, 0, b"a");
        assert_eq!(read_all(&b, &[]), Err(ReadError::StreamZero));
        let mut b = Vec::new();
        frame(&mut b, HEADERS, END_HEADERS | PRIORITY_FLAG, 1, b"ab");
        assert_eq!(read_all(&b, &[]), Err(ReadError::ShortPriority));
        let mut b = Vec::new();
        head(&mut b, MAX_FRAME + 1, crate::proto::h2::frame::DATA, 0, 1);
        assert_eq!(
            read_all(&b, &[]),
            Err(ReadError::FrameTooLarge),
            "known from its header"
        );
    }
}
