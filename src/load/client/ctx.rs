//! [`Ctx`]: what a protocol session reaches of its connection while it writes and reads — the
//! requests in flight and those to send again, the output, the server's closing, and the
//! run's [`Books`] — and the rules every protocol shares for them: an answer completes the
//! request it answers (a reply to nothing is a bad response), a request the server did not
//! process is sent again at most [`MAX_TRIES`] times.

use std::collections::VecDeque;
use std::time::Instant;

use super::{Books, Sent};
use crate::load::ErrorClass;

/// Times a request is sent again before it counts as failed (`stream_reset`): a server that
/// refuses every stream must not keep the client resending forever.
pub const MAX_TRIES: u8 = 3;

/// A session's view of its connection.
pub struct Ctx<'a, B: Books + ?Sized> {
    /// The connection's slot in its thread, and its slot over the run (patterns differ by it).
    pub(super) index: usize,
    pub(super) slot: u64,
    pub(super) inflight: &'a mut VecDeque<Sent>,
    pub(super) retry: &'a mut VecDeque<Sent>,
    pub(super) closing: &'a mut bool,
    /// What the connection writes next.
    pub(super) out: &'a mut Vec<u8>,
    pub(super) books: &'a mut B,
}

impl<B: Books + ?Sized> Ctx<'_, B> {
    /// The request at `pos` in flight was answered (`status`: HTTP's): taken out and settled;
    /// with whether it counts in the run's figures. None there: a reply to nothing.
    #[inline]
    pub(super) fn complete(
        &mut self,
        pos: usize,
        status: Option<u16>,
        now: Instant,
    ) -> Result<(Sent, bool), ErrorClass> {
        // The oldest, for every protocol but HTTP/2.
        let r = match pos {
            0 => self.inflight.pop_front(),
            _ => self.inflight.remove(pos),
        };
        let r = r.ok_or(ErrorClass::BadResponse)?;
        let counts = self.books.answered(self.index, &r, status, now);
        Ok((r, counts))
    }

    /// Where the request of stream `id` is among those in flight.
    pub(super) fn position(&self, id: u32) -> Option<usize> {
        self.inflight.iter().position(|r| r.stream == id)
    }

    /// Takes the request of stream `id` out of those in flight.
    pub(super) fn take_stream(&mut self, id: u32) -> Option<Sent> {
        let pos = self.position(id)?;
        self.inflight.remove(pos)
    }

    /// Takes out the requests in flight on streams above `last` (a GOAWAY's).
    pub(super) fn take_above(&mut self, last: u32) -> Vec<Sent> {
        let (keep, above): (Vec<Sent>, Vec<Sent>) = self.inflight.drain(..).partition(|r| r.stream <= last);
        self.inflight.extend(keep);
        above
    }

    /// Request `r`, which the server did not process, is to be sent again, keeping its
    /// intended time; after [`MAX_TRIES`] it fails instead.
    pub(super) fn again(&mut self, r: Sent, now: Instant) {
        again(self.retry, self.books, r, now);
    }

    /// Request `r` will not complete: an error of `class`.
    pub(super) fn abandon(&mut self, r: Sent, class: ErrorClass, now: Instant) {
        self.books.abandoned(r, class, now);
    }

    /// The server said it closes after its last response (`Connection: close`, GOAWAY).
    pub(super) fn server_closes(&mut self) {
        *self.closing = true;
    }
}

/// [`Ctx::again`] over a connection's parts.
pub(super) fn again<B: Books + ?Sized>(retry: &mut VecDeque<Sent>, books: &mut B, mut r: Sent, now: Instant) {
    r.tries += 1;
    if r.tries <= MAX_TRIES {
        retry.push_back(r);
        return;
    }
    books.abandoned(r, ErrorClass::StreamReset, now);
}
