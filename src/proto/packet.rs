//! packet: fixed-size logical frames (seed 001). A frame is answered (sent back) only once all
//! of it has arrived; partial frames wait in the session.

use super::{Each, Fed, Request};

#[derive(Debug)]
pub struct PacketSession {
    /// Frame size in bytes.
    size: usize,
    /// Bytes of an incomplete frame.
    partial: Vec<u8>,
}

impl PacketSession {
    pub fn new(size: usize) -> Self {
        PacketSession {
            size: size.max(1),
            partial: Vec::new(),
        }
    }

    /// Answers every whole frame; `each` sees each frame before it goes back.
    pub fn feed<F: Each>(&mut self, mut input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut frames = 0;
        if !self.partial.is_empty() {
            let need = self.size - self.partial.len();
            let take = need.min(input.len());
            self.partial.extend_from_slice(&input[..take]);
            input = &input[take..];
            if self.partial.len() < self.size {
                return Fed::default();
            }
            each(Request { target: b"" }, out);
            out.extend_from_slice(&self.partial);
            self.partial.clear();
            frames += 1;
        }
        let whole = input.len() / self.size * self.size;
        for frame in input[..whole].chunks_exact(self.size) {
            each(Request { target: b"" }, out);
            out.extend_from_slice(frame);
        }
        frames += (whole / self.size) as u64;
        self.partial.extend_from_slice(&input[whole..]);
        Fed {
            requests: frames,
            ..Fed::default()
        }
    }
}
