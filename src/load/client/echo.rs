//! The echo and packet client session: each message is `--size` bytes of the slot's pattern,
//! and what comes back must be those bytes, in order.

use std::time::Instant;

use super::{Books, ClientProtocol, Ctx, Link, Sent, Streams};
use crate::load::{pattern, EchoReader, ErrorClass};

/// An echo (or packet) connection's session.
#[derive(Debug)]
pub struct Echo {
    reader: EchoReader,
    size: usize,
}

impl Echo {
    /// Messages of `size` bytes.
    pub fn new(size: usize) -> Echo {
        Echo {
            reader: EchoReader::new(size),
            size,
        }
    }
}

impl ClientProtocol for Echo {
    fn start(&mut self, _: Link, _: &mut Vec<u8>) -> Result<(), ErrorClass> {
        Ok(())
    }

    fn room(&self) -> usize {
        usize::MAX
    }

    fn closing(&self) -> bool {
        false
    }

    fn write<B: Books + ?Sized>(&mut self, _: u8, seq: &mut u64, _: bool, _: Instant, cx: &mut Ctx<B>) -> (u32, u16) {
        let s = *seq;
        *seq += 1;
        let start = cx.out.len();
        cx.out.resize(start + self.size, 0);
        pattern(cx.slot, s, 0, &mut cx.out[start..]);
        (0, 0)
    }

    fn sent<B: Books + ?Sized>(&mut self, _: Instant, _: &mut B) {}

    fn input<B: Books + ?Sized>(&mut self, bytes: &[u8], now: Instant, cx: &mut Ctx<B>) -> Result<(), ErrorClass> {
        let whole = self.reader.push(cx.slot, bytes).map_err(|_| ErrorClass::EchoMismatch)?;
        for _ in 0..whole {
            cx.complete(0, None, now)?;
        }
        Ok(())
    }

    fn closed<B: Books + ?Sized>(&mut self, _: Instant, _: &mut Ctx<B>) -> Result<(), ErrorClass> {
        Ok(())
    }

    fn mid_message(&self) -> bool {
        self.reader.mid_message()
    }

    fn reset(&mut self, next_seq: u64, _: &[Sent]) {
        self.reader.reset(next_seq);
    }

    fn streams(&self) -> Option<&Streams> {
        None
    }

    fn streams_mut(&mut self) -> Option<&mut Streams> {
        None
    }

    fn streaming(&self, _: usize, _: &Sent) -> bool {
        false
    }

    fn unstarted_stream(&self, _: usize, _: &Sent, forced: bool) -> bool {
        forced
    }
}
