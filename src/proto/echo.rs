//! echo: every byte received is sent back, in order, whatever the read boundaries.

use super::{Each, Fed, Request};

/// Echo's only state is what the bound on output held back.
#[derive(Debug, Default)]
pub struct EchoSession {
    /// Bytes received and not yet echoed: the output was full ([`Each::room`]).
    held: Vec<u8>,
}

impl EchoSession {
    /// Input held back at the bound on output, to go on with.
    pub fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// Echoes `input` (after what was held), as much as [`Each::room`] allows; the rest is
    /// held. Each feed that echoes something counts as one request, and its work runs once (the
    /// server cannot see message boundaries: a read cut by the bound is two); `each` sees it
    /// before its bytes go back.
    pub fn feed<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        let room = each.room(out.len());
        if self.held.is_empty() && input.len() <= room {
            return echo(input, out, each);
        }
        self.held.extend_from_slice(input);
        let n = self.held.len().min(room);
        let fed = echo(&self.held[..n], out, each);
        self.held.drain(..n);
        fed
    }

    /// Gives up what holding input grew, once it is empty: the bytes given up.
    pub fn trim(&mut self) -> usize {
        super::shed(&mut self.held, 0)
    }
}

fn echo<F: Each + ?Sized>(bytes: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
    if bytes.is_empty() {
        return Fed::default();
    }
    each.request(
        Request {
            target: b"",
            deferrable: false,
        },
        out,
    );
    out.extend_from_slice(bytes);
    Fed {
        requests: 1,
        ..Fed::default()
    }
}
