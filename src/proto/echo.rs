//! echo: every byte received is sent back, in order, whatever the read boundaries.

use super::Fed;

/// Echo has no state: the output is the input.
#[derive(Debug, Default, Clone, Copy)]
pub struct EchoSession;

impl EchoSession {
    /// Each non-empty read counts as one request (the server cannot see message boundaries).
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Fed {
        out.extend_from_slice(input);
        Fed {
            requests: u64::from(!input.is_empty()),
            close: false,
        }
    }
}
