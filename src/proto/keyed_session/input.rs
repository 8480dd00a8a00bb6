//! A keyed session's input: its bytes, how far they were run, the spans of the command being
//! parsed, and how much of it was already searched.

use crate::proto::keyed::Args;

/// A keyed session's input (RESP's, memcache's): the bytes not run yet, from `pos` on, and
/// the spans of the command being run. The sessions parse it; this keeps it from growing.
///
/// A parse that stops for want of bytes says how many it needs ([`Input::wait`]) and how far
/// it searched for a line's end ([`Input::line`]), so a command trickled in a byte at a time
/// is parsed once, not once per read (which would cost time quadratic in its length).
#[derive(Debug, Default)]
pub(crate) struct Input {
    pub(crate) buf: Vec<u8>,
    pub(crate) pos: usize,
    pub(crate) spans: Vec<(u32, u32)>,
    /// Bytes from `pos` the parse needs before it can get further.
    need: usize,
    /// Bytes from `pos` already searched for a line's end.
    seen: usize,
    /// The parse's work, in bytes searched for a line's end and bulk headers read (tests
    /// check that it grows with the input, not with its square).
    #[cfg(test)]
    pub(crate) looked: usize,
}

impl Input {
    /// Bytes not run yet.
    pub(crate) fn behind(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The arguments in `spans`.
    pub(crate) fn args(&self) -> Args<'_> {
        Args::new(&self.buf, &self.spans)
    }

    /// Gives up the buffers a burst grew, once idle: the bytes given up.
    pub(crate) fn trim(&mut self) -> usize {
        crate::proto::shed(&mut self.buf, 4096) + crate::proto::shed_spans(&mut self.spans)
    }

    /// The command ends at `end`: what follows is next, parsed afresh.
    pub(crate) fn to(&mut self, end: usize) {
        self.pos = end;
        self.spans.clear();
        (self.need, self.seen) = (0, 0);
    }

    /// Whether there is input and as much of it as the last parse said it needs.
    pub(crate) fn ready(&self) -> bool {
        self.behind() > 0 && self.behind() >= self.need
    }

    /// The parse needs `n` bytes from `pos` before it can get further.
    pub(crate) fn wait(&mut self, n: usize) {
        self.need = n;
    }

    /// Where the line at `pos` ends (its `\n`, from `pos`), searching only what was not
    /// searched before: `None` while it has not come, an error past `max` bytes.
    pub(crate) fn line(&mut self, max: usize) -> Result<Option<usize>, ()> {
        let b = &self.buf[self.pos..];
        let from = self.seen.min(b.len());
        #[cfg(test)]
        {
            self.looked += b.len() - from;
        }
        match b[from..]
            .iter()
            .take((max + 1).saturating_sub(from))
            .position(|&c| c == b'\n')
        {
            Some(i) => Ok(Some(from + i)),
            None if b.len() > max => Err(()),
            None => {
                self.seen = b.len();
                self.need = b.len() + 1;
                Ok(None)
            }
        }
    }

    /// Drops what was run: all of it at once, or the front once it is most of a large buffer
    /// (the spans of a command parsed in part move with it).
    pub(crate) fn compact(&mut self) {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 64 * 1024 && self.pos > self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            let d = self.pos as u32;
            for s in &mut self.spans {
                (s.0, s.1) = (s.0 - d, s.1 - d);
            }
            self.pos = 0;
        }
    }
}
