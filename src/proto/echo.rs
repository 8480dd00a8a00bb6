//! echo: every byte received is sent back, in order, whatever the read boundaries.

use super::{Each, Fed, Request};

/// Echo has no state: the output is the input.
#[derive(Debug, Default, Clone, Copy)]
pub struct EchoSession;

impl EchoSession {
    /// Each non-empty read counts as one request (the server cannot see message boundaries);
    /// `each` sees it before its bytes go back.
    pub fn feed<F: Each>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        if !input.is_empty() {
            each(Request { target: b"" }, out);
        }
        out.extend_from_slice(input);
        Fed {
            requests: u64::from(!input.is_empty()),
            ..Fed::default()
        }
    }
}
