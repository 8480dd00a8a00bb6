//! [`Session`]: the client session of the run's protocol, one per connection — HTTP/1.1
//! ([`Http1`], with its event streams), HTTP/2 ([`H2`], with its event streams), echo and
//! packet ([`Echo`]), RESP and memcache ([`Keyed`]) — forwarding each [`ClientProtocol`] method to
//! the one chosen, in one dispatch with no arm for "the others".

use std::time::Instant;

use super::{Books, ClientProtocol, Ctx, Echo, Http1, Keyed, Link, Sent, Streams, H2};

/// One connection's protocol session.
#[derive(Debug)]
pub enum Session {
    Http1(Http1),
    H2(Box<H2>),
    Echo(Echo),
    Keyed(Box<Keyed>),
}

/// Forwards a call to the session chosen.
macro_rules! each {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            Session::Http1($s) => $call,
            Session::H2($s) => $call,
            Session::Echo($s) => $call,
            Session::Keyed($s) => $call,
        }
    };
}

impl ClientProtocol for Session {
    #[inline]
    fn start(&mut self, link: Link, out: &mut Vec<u8>) -> Result<(), crate::load::ErrorClass> {
        each!(self, s => s.start(link, out))
    }
    #[inline]
    fn room(&self) -> usize {
        each!(self, s => s.room())
    }
    #[inline]
    fn closing(&self) -> bool {
        each!(self, s => s.closing())
    }
    #[inline]
    fn write<B: Books + ?Sized>(
        &mut self,
        class: u8,
        seq: &mut u64,
        retried: bool,
        now: Instant,
        cx: &mut Ctx<B>,
    ) -> (u32, u16) {
        each!(self, s => s.write(class, seq, retried, now, cx))
    }
    #[inline]
    fn sent<B: Books + ?Sized>(&mut self, now: Instant, books: &mut B) {
        each!(self, s => s.sent(now, books))
    }
    #[inline]
    fn input<B: Books + ?Sized>(
        &mut self,
        bytes: &[u8],
        now: Instant,
        cx: &mut Ctx<B>,
    ) -> Result<(), crate::load::ErrorClass> {
        each!(self, s => s.input(bytes, now, cx))
    }
    #[inline]
    fn closed<B: Books + ?Sized>(&mut self, now: Instant, cx: &mut Ctx<B>) -> Result<(), crate::load::ErrorClass> {
        each!(self, s => s.closed(now, cx))
    }
    #[inline]
    fn mid_message(&self) -> bool {
        each!(self, s => s.mid_message())
    }
    #[inline]
    fn reset(&mut self, next_seq: u64, lost: &[Sent]) {
        each!(self, s => s.reset(next_seq, lost))
    }
    #[inline]
    fn streams(&self) -> Option<&Streams> {
        each!(self, s => s.streams())
    }
    #[inline]
    fn streams_mut(&mut self) -> Option<&mut Streams> {
        each!(self, s => s.streams_mut())
    }
    #[inline]
    fn streaming(&self, pos: usize, r: &Sent) -> bool {
        each!(self, s => s.streaming(pos, r))
    }
    #[inline]
    fn unstarted_stream(&self, pos: usize, r: &Sent, forced: bool) -> bool {
        each!(self, s => s.unstarted_stream(pos, r, forced))
    }
}
