//! What a connection gives back once it has been idle for a tick: the buffers a burst grew
//! (its output buffer, its session's input and stream buffers), dropped and reported to
//! [`sys::mem::released`], so the next [`sys::mem::give_back`] returns their pages to the kernel.
//! Every model calls [`Shed::idle`] from its periodic sweep, and [`Shed::active`] when the
//! connection moves again.

use crate::proto::Protocol;
use std::time::Instant;

use crate::proto::{self, Session};
use crate::server::TICK;
use crate::sys;

/// The output buffer an idle connection keeps: what a few small replies need.
const SPARE_OUT: usize = 4 * 1024;

/// Whether a connection gave back its buffers since it last moved.
#[derive(Debug, Default, Clone, Copy)]
pub struct Shed {
    done: bool,
}

impl Shed {
    /// The connection moved: it may grow buffers again.
    #[inline]
    pub fn active(&mut self) {
        self.done = false;
    }

    /// A sweep found the connection silent since `last` with no output pending (`out` empty)
    /// and nothing held back: once it has been so for a tick, it drops its buffers, once per
    /// idle spell. `true` when it did (a blocking model gives back its read buffer then too).
    pub fn idle(&mut self, session: &mut Session, out: &mut Vec<u8>, last: Instant, now: Instant) -> bool {
        if self.done || !out.is_empty() || session.holding() || now.saturating_duration_since(last) < TICK {
            return false;
        }
        self.done = true;
        let n = session.trim() + proto::shed(out, SPARE_OUT);
        if n > 0 {
            sys::mem::released(n);
        }
        true
    }
}
