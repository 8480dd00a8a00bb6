//! Keyed targets in the engine: a command goes out as its connection's [`KeyedConn`] writes it;
//! each reply's verdict completes its command, or fails it (a wrong value, a refusal) while the
//! connection goes on, or (a reply to nothing) fails the connection.

use std::time::Instant;

use super::Engine;
use crate::load::keyed::{Verb, Verdict};
use crate::load::ErrorClass;

impl Engine<'_> {
    /// Writes connection `i`'s next command, of request class `class` (set or get).
    pub(super) fn keyed_issue(&mut self, i: usize, class: u8) {
        let c = &mut self.conns[i];
        if let Some(k) = c.keyed.as_mut() {
            k.issue(Verb::of_class(class), c.out.queue());
        }
    }

    /// Handles the `n` bytes in `self.buf`, replies of connection `i`; `false` when the
    /// connection was closed meanwhile.
    pub(super) fn keyed_consume(&mut self, i: usize, n: usize, now: Instant) -> bool {
        let mut verdicts = std::mem::take(&mut self.verdicts);
        verdicts.clear();
        let framed = match self.conns[i].keyed.as_mut() {
            Some(k) => k.read(&self.buf[..n], &mut verdicts),
            None => Err(crate::load::keyed::NotReplies),
        };
        let mut up = true;
        for &v in &verdicts {
            if !self.keyed_answer(i, v, now) {
                up = false;
                break;
            }
        }
        self.verdicts = verdicts;
        if up && framed.is_err() {
            self.fail(i, ErrorClass::BadResponse, now);
            return false;
        }
        up
    }

    /// The oldest command of connection `i` was answered so; `false` when the connection was
    /// closed for it. A wrong value or a refusal is an answer (its latency counts) and an error
    /// of its class; the connection goes on.
    fn keyed_answer(&mut self, i: usize, v: Verdict, now: Instant) -> bool {
        if v == Verdict::Unexpected {
            self.fail(i, ErrorClass::BadResponse, now);
            return false;
        }
        let class = self.conns[i].inflight.front().map(|r| usize::from(r.class));
        let Some(counts) = self.settle(i, 0, 200, now) else {
            return false;
        };
        let error = match v {
            Verdict::Wrong(..) => Some(ErrorClass::WrongValue),
            Verdict::Refused(_) => Some(ErrorClass::ServerError),
            _ => None,
        };
        let Some(t) = self.tally.keyed.as_mut() else {
            return true;
        };
        if !counts {
            // Outside the window nothing is counted, but a wrong value is still named.
            t.seen_outside(v);
            return true;
        }
        t.count(v);
        if let Some(e) = error {
            self.tally.error(e);
            if let Some(c) = class.and_then(|k| self.tally.classes.get_mut(k)) {
                c.errors += 1;
            }
        }
        true
    }
}
