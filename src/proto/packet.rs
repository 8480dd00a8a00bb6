//! packet: fixed-size logical frames (seed 001). A frame is answered (sent back) only once all
//! of it has arrived; partial frames wait in the session.

use super::Fed;

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

    pub fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) -> Fed {
        let mut frames = 0;
        if !self.partial.is_empty() {
            let need = self.size - self.partial.len();
            let take = need.min(input.len());
            self.partial.extend_from_slice(&input[..take]);
            input = &input[take..];
            if self.partial.len() < self.size {
                return Fed::default();
            }
            out.extend_from_slice(&self.partial);
            self.partial.clear();
            frames += 1;
        }
        let whole = input.len() / self.size * self.size;
        out.extend_from_slice(&input[..whole]);
        frames += (whole / self.size) as u64;
        self.partial.extend_from_slice(&input[whole..]);
        Fed {
            requests: frames,
            close: false,
        }
    }
}
