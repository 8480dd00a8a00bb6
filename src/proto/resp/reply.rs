//! RESP's replies: the encoder a store answers through ([`Replies`]), in the shape the
//! command asked for.

use super::Verb;
use crate::proto::keyed::{decimal, Form, Item, KeyedError, Replies};
use crate::proto::keyed_session::Sink;

pub(super) fn error(out: &mut Vec<u8>, why: &str) {
    out.extend_from_slice(b"-ERR ");
    out.extend_from_slice(why.as_bytes());
    out.extend_from_slice(b"\r\n");
}

pub(super) fn bulk(out: &mut Vec<u8>, v: &[u8]) {
    head(out, b'$', v.len() as i64);
    out.extend_from_slice(v);
    out.extend_from_slice(b"\r\n");
}

/// A line of `mark` and `n` (`$5`, `:12`, `*3`).
pub(super) fn head(out: &mut Vec<u8>, mark: u8, n: i64) {
    out.push(mark);
    if n < 0 {
        out.push(b'-');
    }
    decimal(out, n.unsigned_abs());
    out.extend_from_slice(b"\r\n");
}

/// A command's reply in RESP.
pub(super) struct Reply<'o> {
    pub(super) sink: Sink<'o>,
    pub(super) verb: Verb,
    /// How far the output may grow (`--max-output`).
    pub(super) limit: usize,
}

impl Replies for Reply<'_> {
    fn value(&mut self, _key: &[u8], item: Option<Item<'_>>) {
        match item {
            Some(i) => bulk(self.sink.buf(), i.value),
            None => self.sink.buf().extend_from_slice(b"$-1\r\n"),
        }
    }

    fn int(&mut self, n: i64) {
        head(self.sink.buf(), b':', n);
    }

    fn done(&mut self, applied: bool) {
        match (self.verb, applied) {
            (Verb::Expire, _) => self.int(i64::from(applied)),
            (_, true) => self.sink.buf().extend_from_slice(b"+OK\r\n"),
            // A SET whose NX or XX did not hold.
            (_, false) => self.sink.buf().extend_from_slice(b"$-1\r\n"),
        }
    }

    fn error(&mut self, e: KeyedError) {
        let out = self.sink.buf();
        match e {
            KeyedError::NotInteger => error(out, "value is not an integer or out of range"),
            KeyedError::Overflow => error(out, "increment or decrement would overflow"),
            KeyedError::NoStore => error(out, "this server keeps no keyed state"),
            // redis's own error class, not ERR.
            KeyedError::OutOfMemory => {
                out.extend_from_slice(b"-OOM command not allowed when used memory > 'maxmemory'.\r\n")
            }
        }
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

    fn text(&mut self, text: &str) {
        let out = self.sink.buf();
        match self.verb {
            Verb::Ping => {
                out.push(b'+');
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            _ => bulk(out, text.as_bytes()),
        }
    }

    fn form(&self) -> Option<Form> {
        Some(Form::Resp(self.verb))
    }

    fn later(&mut self, ticket: u64, cost: usize) -> Option<std::sync::Arc<crate::proto::keyed::Room>> {
        self.sink.later(ticket, self.limit, cost)
    }
}
