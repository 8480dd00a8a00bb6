//! packet: fixed-size logical frames (seed 001). A frame is answered (sent back) only once all
//! of it has arrived; partial frames wait in the session.

use std::time::Instant;

use super::{Each, Fed, Protocol, Request};

#[derive(Debug)]
pub struct PacketSession {
    /// Frame size in bytes.
    size: usize,
    /// Bytes not answered yet: an incomplete frame, or whole ones the bound on output held back.
    partial: Vec<u8>,
    /// The last feed stopped at the bound on output ([`Each::room`]).
    held: bool,
}

impl PacketSession {
    pub fn new(size: usize) -> Self {
        PacketSession {
            size: size.max(1),
            partial: Vec::new(),
            held: false,
        }
    }

    /// Answers the whole frames at the start of `data` until the output is full; returns the
    /// bytes used.
    fn frames<F: Each + ?Sized>(&mut self, data: &[u8], out: &mut Vec<u8>, each: &mut F, fed: &mut Fed) -> usize {
        let mut used = 0;
        self.held = false;
        for frame in data.chunks_exact(self.size) {
            if each.room(out.len()) == 0 {
                self.held = true;
                break;
            }
            each.request(
                Request {
                    target: b"",
                    deferrable: false,
                },
                out,
            );
            out.extend_from_slice(frame);
            used += self.size;
            fed.requests += 1;
        }
        used
    }
}

impl Protocol for PacketSession {
    /// Answers every whole frame while the output has room; `each` sees each frame before it
    /// goes back.
    fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut fed = Fed::default();
        if self.partial.is_empty() {
            let used = self.frames(input, out, each, &mut fed);
            self.partial.extend_from_slice(&input[used..]);
        } else {
            let mut data = std::mem::take(&mut self.partial);
            data.extend_from_slice(input);
            let used = self.frames(&data, out, each, &mut fed);
            data.drain(..used);
            self.partial = data;
        }
        fed
    }

    /// Packet owes nothing later.
    fn advance_each<F: Each + ?Sized>(&mut self, _: Instant, _: &mut Vec<u8>, _: &mut F) -> Fed {
        Fed::default()
    }

    /// Packet's answers are never another thread's work.
    fn complete_each<F: Each + ?Sized>(&mut self, _: u64, _: &mut Vec<u8>, _: &mut F) -> Fed {
        Fed::default()
    }

    /// A frame part-way in is not a head: packet has no header timeout of its own.
    fn head_pending(&self) -> bool {
        false
    }

    /// Input held back at the bound on output, to go on with.
    fn holding(&self) -> bool {
        self.held
    }

    /// Gives up what a burst grew, keeping room for a frame: the bytes given up.
    fn trim(&mut self) -> usize {
        super::shed(&mut self.partial, self.size)
    }

    fn due(&self) -> Option<Instant> {
        None
    }

    fn owes(&self) -> bool {
        false
    }

    fn answers_owed(&self) -> bool {
        false
    }

    fn output_gone(&mut self, _: usize) {}

    /// Packet never stops reading but at the bound on output ([`Protocol::holding`]).
    fn paused(&self) -> bool {
        false
    }

    fn window_held(&self) -> bool {
        false
    }

    /// What is held is bounded by the output's room and one frame.
    fn behind(&self) -> usize {
        0
    }

    fn tickets(&self) -> Vec<u64> {
        Vec::new()
    }

    fn cancelled(&mut self) -> Vec<u64> {
        Vec::new()
    }

    /// A cut packet connection sends nothing more: every frame answered is whole.
    fn cut(&mut self, _: &mut Vec<u8>) {}

    fn farewell(&mut self, _: &mut Vec<u8>) {}

    fn timeout_response(&self) -> &'static [u8] {
        b""
    }
}
