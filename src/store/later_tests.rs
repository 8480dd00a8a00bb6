//! Answers that come later (another thread runs the command): in command order whatever
//! order they come in, each command counted once, and a connection that owes too many takes
//! no more input.

use super::protocol_tests::{limits, whole, RESP_SESSION};
use super::Table;
use crate::proto::keyed::{Op, Outcome, Replies};
use crate::proto::Protocol;
use crate::proto::{Answer, Each, Proto, Request, Session};

/// Answers every other command later: run at once, its answer held under a ticket until the
/// test hands it back (in any order).
struct Deferring {
    table: Table,
    n: u64,
    held: Vec<(u64, Vec<u8>)>,
    answer: Option<(u64, Vec<u8>)>,
}

impl Deferring {
    fn new() -> Deferring {
        Deferring {
            table: Table::new(),
            n: 0,
            held: Vec::new(),
            answer: None,
        }
    }
}

impl Each for Deferring {
    fn request(&mut self, _: Request<'_>, _: &mut Vec<u8>) -> Answer {
        Answer::Serve
    }

    fn command(&mut self, op: Op<'_>, replies: &mut dyn Replies) -> Outcome {
        self.n += 1;
        let now = std::time::Instant::now();
        let Some(form) = replies.form().filter(|_| self.n.is_multiple_of(2)) else {
            return self.table.run(op, now, replies);
        };
        let mut bytes = Vec::new();
        let o = crate::proto::keyed::encode(form, &mut bytes, |r| self.table.run(op, now, r));
        self.held.push((self.n, bytes));
        replies.later(self.n);
        Outcome { error: false, ..o }
    }

    fn answer(&mut self, ticket: u64) -> Option<Vec<u8>> {
        self.answer.take().filter(|(t, _)| *t == ticket).map(|(_, a)| a)
    }
}

#[test]
fn answers_that_come_later_go_out_in_command_order_whatever_order_they_come_in() {
    let memcache: &[u8] = b"set a 0 0 1\r\n1\r\nset b 5 0 2\r\nxy\r\nget a b c\r\ngets a\r\nincr a 9\r\n\
set q 0 0 1 noreply\r\nz\r\ndelete b\r\nbogus\r\nget q\r\nversion\r\n";
    for (proto, input) in [(Proto::Resp, RESP_SESSION), (Proto::Memcache, memcache)] {
        let (want, want_n, ..) = whole(proto, input);
        let mut s = Session::with_limits(proto, limits());
        let mut each = Deferring::new();
        let mut out = Vec::new();
        let mut n = s.feed_each(input, &mut out, &mut each).requests;
        assert!(s.owes() && !each.held.is_empty(), "{proto:?}: nothing was deferred");
        assert!(
            want.starts_with(std::str::from_utf8(&out).unwrap()),
            "{proto:?}: out of order"
        );
        // The answers come back last first: nothing goes out until the first one has.
        while let Some((t, a)) = each.held.pop() {
            each.answer = Some((t, a));
            n += s.complete_each(t, &mut out, &mut each).requests;
        }
        assert_eq!(String::from_utf8_lossy(&out), want, "{proto:?}");
        assert_eq!(n, want_n, "{proto:?}: each command counted once");
        assert!(!s.owes());
    }
}

#[test]
fn a_connection_waits_for_answers_owed_past_its_bound_and_goes_on_when_they_come() {
    // Every other command is answered later and none comes back: past 256 owed the session
    // takes no more input, and holds it.
    let input = b"INCR n\r\n".repeat(10_000);
    let mut s = Session::with_limits(Proto::Resp, limits());
    let mut each = Deferring::new();
    let mut out = Vec::new();
    s.feed_each(&input, &mut out, &mut each);
    assert!(s.paused() && s.behind() > 0, "it went on past its bound");
    assert_eq!(each.held.len(), crate::proto::keyed::MAX_WAITING);
    // The first answer lets the next ones through.
    let (t, a) = each.held.remove(0);
    each.answer = Some((t, a));
    s.complete_each(t, &mut out, &mut each);
    assert_eq!(each.held.len(), crate::proto::keyed::MAX_WAITING, "one more taken");
    assert!(
        out.starts_with(b":1\r\n:2\r\n:3\r\n"),
        "{}",
        String::from_utf8_lossy(&out[..20])
    );
}
