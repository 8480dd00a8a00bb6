//! packet: fixed-size logical frames (seed 001). A frame is answered (sent back) only once all
//! of it has arrived; partial frames wait in the session.

use super::{Each, Fed, Request};

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

    /// Input held back at the bound on output, to go on with.
    pub fn holding(&self) -> bool {
        self.held
    }

    /// Answers every whole frame while the output has room; `each` sees each frame before it
    /// goes back.
    pub fn feed<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
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

    /// Gives up what a burst grew, keeping room for a frame: the bytes given up.
    pub fn trim(&mut self) -> usize {
        super::shed(&mut self.partial, self.size)
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
