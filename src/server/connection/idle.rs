//! What a connection gives back once it has been idle for a tick: the buffers a burst grew
//! (its output buffer, its session's input and stream buffers), dropped and reported to
//! [`sys::mem::released`], so the next [`sys::mem::give_back`] returns their pages to the kernel.
//! The connection's timer comes for it at [`Shed::due`], and it calls [`Shed::active`] when
//! it moves again: no sweep visits an idle connection.

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

    /// When a connection silent since `last` gives back its buffers: a tick later, unless it
    /// has done so this idle spell, has output pending (`out` not empty) or holds input back.
    pub fn due(&self, session: &Session, out: &[u8], last: Instant) -> Option<Instant> {
        (!self.done && out.is_empty() && !session.holding()).then(|| last + TICK)
    }

    /// Once [`Shed::due`] has come by `now`, the connection drops its buffers, once per idle
    /// spell. `true` when it did (a blocking model gives back its read buffer then too).
    pub fn idle(&mut self, session: &mut Session, out: &mut Vec<u8>, last: Instant, now: Instant) -> bool {
        if self.due(session, out, last).is_none_or(|at| at > now) {
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
