//! echo: every byte received is sent back, in order, whatever the read boundaries.

use std::time::Instant;

use super::{Each, Fed, Protocol, Request};

/// Echo's only state is what the bound on output held back.
#[derive(Debug, Default)]
pub struct EchoSession {
    /// Bytes received and not yet echoed: the output was full ([`Each::room`]).
    held: Vec<u8>,
}

impl Protocol for EchoSession {
    /// Echoes `input` (after what was held), as much as [`Each::room`] allows; the rest is
    /// held. Each feed that echoes something counts as one request, and its work runs once (the
    /// server cannot see message boundaries: a read cut by the bound is two); `each` sees it
    /// before its bytes go back.
    fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
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

    /// Echo owes nothing later.
    fn advance_each<F: Each + ?Sized>(&mut self, _: Instant, _: &mut Vec<u8>, _: &mut F) -> Fed {
        Fed::default()
    }

    /// Echo's answers are never another thread's work.
    fn complete_each<F: Each + ?Sized>(&mut self, _: u64, _: &mut Vec<u8>, _: &mut F) -> Fed {
        Fed::default()
    }

    /// Echo has no head: every byte is a whole message.
    fn head_pending(&self) -> bool {
        false
    }

    /// Input held back at the bound on output, to go on with.
    fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// Gives up what holding input grew, once it is empty: the bytes given up.
    fn trim(&mut self) -> usize {
        super::shed(&mut self.held, 0)
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

    /// Echo never stops reading but at the bound on output ([`Protocol::holding`]).
    fn paused(&self) -> bool {
        false
    }

    fn window_held(&self) -> bool {
        false
    }

    /// What is held is bounded by the output's room (one read past it at most).
    fn behind(&self) -> usize {
        0
    }

    fn tickets(&self) -> Vec<u64> {
        Vec::new()
    }

    fn cancelled(&mut self) -> Vec<u64> {
        Vec::new()
    }

    /// A cut echo sends nothing more: what was echoed is whole.
    fn cut(&mut self, _: &mut Vec<u8>) {}

    fn farewell(&mut self, _: &mut Vec<u8>) {}

    fn timeout_response(&self) -> &'static [u8] {
        b""
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
