//! The keyed client session (RESP and memcache, one dialect each): a command goes out as its
//! connection's [`KeyedConn`] writes it; each reply's verdict completes its command, or fails
//! it (a wrong value, a refusal) while the connection goes on, or (a reply to nothing) fails
//! the connection.

use std::time::Instant;

use super::{Books, ClientProtocol, Ctx, Link, Sent, Streams};
use crate::load::keyed::{KeyedConn, Verb, Verdict};
use crate::load::ErrorClass;

/// A keyed connection's session.
#[derive(Debug)]
pub struct Keyed {
    conn: KeyedConn,
    /// The verdicts on one read's replies.
    verdicts: Vec<Verdict>,
}

impl Keyed {
    /// Over `conn`, the slot's commands.
    pub fn new(conn: KeyedConn) -> Keyed {
        Keyed {
            conn,
            verdicts: Vec::new(),
        }
    }
}

/// The oldest command was answered so: a wrong value or a refusal is an answer (its latency
/// counts) and an error of its class; the connection goes on. A reply to no command fails it.
fn answer<B: Books + ?Sized>(v: Verdict, now: Instant, cx: &mut Ctx<B>) -> Result<(), ErrorClass> {
    if v == Verdict::Unexpected {
        return Err(ErrorClass::BadResponse);
    }
    let (r, counts) = cx.complete(0, None, now)?;
    let error = match v {
        Verdict::Wrong(..) => Some(ErrorClass::WrongValue),
        Verdict::Refused(_) => Some(ErrorClass::ServerError),
        _ => None,
    };
    let Some(t) = cx.books.tally().keyed.as_mut() else {
        return Ok(());
    };
    if !counts {
        // Outside the window nothing is counted, but a wrong value is still named.
        t.seen_outside(v);
        return Ok(());
    }
    t.count(v);
    if let Some(e) = error {
        cx.books.answer_failed(e, r.class);
    }
    Ok(())
}

impl ClientProtocol for Keyed {
    fn start(&mut self, _: Link, _: &mut Vec<u8>) -> Result<(), ErrorClass> {
        Ok(())
    }

    fn room(&self) -> usize {
        usize::MAX
    }

    fn closing(&self) -> bool {
        false
    }

    fn write<B: Books + ?Sized>(&mut self, class: u8, _: &mut u64, _: bool, _: Instant, cx: &mut Ctx<B>) -> (u32, u16) {
        self.conn.issue(Verb::of_class(class), cx.out);
        (0, 0)
    }

    fn sent<B: Books + ?Sized>(&mut self, _: Instant, _: &mut B) {}

    fn input<B: Books + ?Sized>(&mut self, bytes: &[u8], now: Instant, cx: &mut Ctx<B>) -> Result<(), ErrorClass> {
        let mut verdicts = std::mem::take(&mut self.verdicts);
        verdicts.clear();
        let framed = self.conn.read(bytes, &mut verdicts);
        let answered = verdicts.iter().try_for_each(|&v| answer(v, now, cx));
        self.verdicts = verdicts;
        answered?;
        framed.map_err(|_| ErrorClass::BadResponse)
    }

    fn closed<B: Books + ?Sized>(&mut self, _: Instant, _: &mut Ctx<B>) -> Result<(), ErrorClass> {
        Ok(())
    }

    fn mid_message(&self) -> bool {
        self.conn.mid_reply()
    }

    fn reset(&mut self, _: u64, _: &[Sent]) {
        self.conn.socket_closed();
    }

    fn streams(&self) -> Option<&Streams> {
        None
    }

    fn streams_mut(&mut self) -> Option<&mut Streams> {
        None
    }

    fn streaming(&self, _: usize, _: &Sent) -> bool {
        false
    }

    fn unstarted_stream(&self, _: usize, _: &Sent, forced: bool) -> bool {
        forced
    }
}
