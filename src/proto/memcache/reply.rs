//! memcache's replies: the encoder a store answers through ([`Replies`]), in the shape the
//! command asked for, none with `noreply`.

use super::Verb;
use crate::proto::keyed::{decimal, Form, Item, KeyedError, Outcome, Replies};
use crate::proto::keyed_session::Sink;

pub(super) fn say(out: &mut Vec<u8>, line: &str) {
    out.extend_from_slice(line.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// A command's reply in memcache's text protocol.
pub(super) struct Reply<'o> {
    pub(super) sink: Sink<'o>,
    pub(super) verb: Verb,
    /// The command said `noreply`: what it answers goes to `scratch`, dropped.
    pub(super) noreply: bool,
    pub(super) scratch: Vec<u8>,
    /// How far the output may grow (`--max-output`).
    pub(super) limit: usize,
}

impl Reply<'_> {
    fn out(&mut self) -> &mut Vec<u8> {
        match self.noreply {
            true => {
                self.scratch.clear();
                &mut self.scratch
            }
            false => self.sink.buf(),
        }
    }
}

/// Runs `run` with memcache's encoder for `verb` over `sink` (another thread answering a
/// command later).
pub(crate) fn encode(
    verb: Verb,
    noreply: bool,
    sink: Sink<'_>,
    run: impl FnOnce(&mut dyn Replies) -> Outcome,
) -> Outcome {
    run(&mut Reply {
        sink,
        verb,
        noreply,
        scratch: Vec::new(),
        limit: usize::MAX,
    })
}

impl Replies for Reply<'_> {
    fn value(&mut self, key: &[u8], item: Option<Item<'_>>) {
        let verb = self.verb;
        let out = self.out();
        match (verb, item) {
            (Verb::Get | Verb::Gets, Some(i)) => {
                out.extend_from_slice(b"VALUE ");
                out.extend_from_slice(key);
                out.push(b' ');
                decimal(out, u64::from(i.flags));
                out.push(b' ');
                decimal(out, i.value.len() as u64);
                if verb == Verb::Gets {
                    out.push(b' ');
                    decimal(out, i.cas);
                }
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(i.value);
                out.extend_from_slice(b"\r\n");
            }
            (Verb::Get | Verb::Gets, None) => {}
            // An increment of a key that is not there.
            (_, _) => say(out, "NOT_FOUND"),
        }
    }

    fn int(&mut self, n: i64) {
        let verb = self.verb;
        let out = self.out();
        match verb {
            Verb::Delete => say(out, if n > 0 { "DELETED" } else { "NOT_FOUND" }),
            // memcache's counters are unsigned: the bits of the store's result.
            _ => {
                decimal(out, n as u64);
                out.extend_from_slice(b"\r\n");
            }
        }
    }

    fn done(&mut self, applied: bool) {
        let line = match (self.verb, applied) {
            (Verb::Store, true) => "STORED",
            (Verb::Store, false) => "NOT_STORED",
            (Verb::Touch, true) => "TOUCHED",
            (Verb::Touch, false) => "NOT_FOUND",
            _ => "OK",
        };
        say(self.out(), line);
    }

    fn error(&mut self, e: KeyedError) {
        say(
            self.out(),
            match e {
                KeyedError::NotInteger | KeyedError::Overflow => {
                    "CLIENT_ERROR cannot increment or decrement non-numeric value"
                }
                KeyedError::NoStore => "SERVER_ERROR this server keeps no keyed state",
                KeyedError::OutOfMemory => "SERVER_ERROR out of memory storing object",
            },
        );
    }

    fn text(&mut self, text: &str) {
        say(self.out(), text);
    }

    fn full(&self) -> bool {
        self.sink.full(self.limit)
    }

    fn fits(&mut self, key: &[u8], len: usize) -> bool {
        self.sink.fits(key, len)
    }

    fn settled(&self) -> bool {
        self.sink.settled()
    }

    fn form(&self) -> Option<Form> {
        Some(Form::Memcache(self.verb, self.noreply))
    }

    fn later(&mut self, ticket: u64, cost: usize) -> Option<std::sync::Arc<crate::proto::keyed::Room>> {
        self.sink.later(ticket, self.limit, cost)
    }
}
