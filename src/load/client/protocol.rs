//! [`ClientProtocol`]: what a client connection asks of its protocol's session, whatever the protocol
//! — start it, write a request, read what came, say what a close cut, start over on a new
//! socket, and tell which requests are event streams. Each protocol's session answers every
//! method (no defaults: one that forgot a method does not build); [`Session`](super::Session)
//! forwards each to the session chosen.

use std::time::Instant;

use super::{Books, Ctx, Sent};
use crate::load::ErrorClass;

/// What the connection runs over once it is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link<'a> {
    /// Plain TCP.
    Plain,
    /// TLS, whose handshake's ALPN picked `alpn`.
    Tls { alpn: Option<&'a [u8]> },
}

/// A client session of one protocol.
pub trait ClientProtocol {
    /// The connection is up over `link`: what the protocol says first goes to `out`. An error
    /// where it cannot be spoken over this link (TLS whose ALPN did not pick it).
    fn start(&mut self, link: Link, out: &mut Vec<u8>) -> Result<(), ErrorClass>;

    /// How many more requests the server lets it have in flight now (HTTP/2: its concurrent
    /// streams); no limit of its own elsewhere.
    fn room(&self) -> usize;

    /// The server said the connection closes (HTTP/2's GOAWAY): no room will come.
    fn closing(&self) -> bool;

    /// Writes a request of `class` (`retried`: one the server did not process, sent again),
    /// taking message numbers from `seq`; returns its stream and the lane it took (0 and 0
    /// where the protocol has neither).
    fn write<B: Books + ?Sized>(
        &mut self,
        class: u8,
        seq: &mut u64,
        retried: bool,
        now: Instant,
        cx: &mut Ctx<B>,
    ) -> (u32, u16);

    /// A batch of requests was written: what the session counted goes to the books.
    fn sent<B: Books + ?Sized>(&mut self, now: Instant, books: &mut B);

    /// Bytes the server sent, at `now`: each answer completes its request through `cx`; an
    /// error where the connection cannot go on (the class it fails with).
    fn input<B: Books + ?Sized>(&mut self, bytes: &[u8], now: Instant, cx: &mut Ctx<B>) -> Result<(), ErrorClass>;

    /// The server closed: a response delimited by the close completes now.
    fn closed<B: Books + ?Sized>(&mut self, now: Instant, cx: &mut Ctx<B>) -> Result<(), ErrorClass>;

    /// Inside a message when the server closed: the close cut it.
    fn mid_message(&self) -> bool;

    /// The socket is gone: reading starts over (the next message is `next_seq`), and what the
    /// `lost` requests held is free again.
    fn reset(&mut self, next_seq: u64, lost: &[Sent]);

    /// The event streams being received (`None` where the protocol has no event streams).
    fn streams(&self) -> Option<&super::Streams>;

    /// The same, to end them.
    fn streams_mut(&mut self) -> Option<&mut super::Streams>;

    /// Whether request `r`, at `pos` among those in flight, is an event stream (not awaited
    /// after the window: it has no end to wait for).
    fn streaming(&self, pos: usize, r: &Sent) -> bool;

    /// At the window's close: whether request `r`, at `pos` among those in flight, is an
    /// event stream whose first event has not come (`forced`: every request is, `--sse`).
    fn unstarted_stream(&self, pos: usize, r: &Sent, forced: bool) -> bool;
}
