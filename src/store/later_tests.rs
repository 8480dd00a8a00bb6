//! Answers that come later (another thread runs the command): in command order whatever
//! order they come in, each command counted once, and a connection that owes too many takes
//! no more input.

use super::protocol_tests::{limits, whole, RESP_SESSION};
use super::Table;
use std::sync::Arc;

use crate::proto::keyed::{build, Again, Answered, Form, Op, Outcome, OwnedOp, Replies, Room};
use crate::proto::Protocol;
use crate::proto::{Answer, Each, Proto, Request, Session};

/// Answers every `every`th command later, as another thread would: built at once from the
/// connection's room (a read stops where it runs out), its answer held under a ticket until
/// the test hands it back (in any order); a rest asked again is built at once too.
struct Deferring {
    table: Table,
    n: u64,
    every: u64,
    /// The connection's bound on output.
    bound: usize,
    held: Vec<(u64, Answered)>,
    answer: Option<(u64, Answered)>,
}

impl Deferring {
    fn new() -> Deferring {
        Deferring {
            table: Table::new(),
            n: 0,
            every: 2,
            bound: usize::MAX,
            held: Vec::new(),
            answer: None,
        }
    }

    /// Builds `op`'s answer now, as its thread would.
    fn build(&mut self, ticket: u64, op: &OwnedOp, form: Form, room: Arc<Room>, front: bool) {
        let now = std::time::Instant::now();
        let table = &mut self.table;
        let (a, _) = build(op, form, room, front, 0, |op, r| table.run(op, now, r));
        self.held.push((ticket, a));
    }

    /// Bytes of the answers built and not handed back.
    fn built(&self) -> usize {
        self.held.iter().map(|(_, a)| a.bytes.len()).sum()
    }
}

impl Each for Deferring {
    fn request(&mut self, _: Request<'_>, _: &mut Vec<u8>) -> Answer {
        Answer::Serve
    }

    fn room(&self, pending: usize) -> usize {
        self.bound.saturating_sub(pending)
    }

    fn command(&mut self, op: Op<'_>, replies: &mut dyn Replies) -> Outcome {
        self.n += 1;
        let now = std::time::Instant::now();
        let Some(form) = replies.form().filter(|_| self.n.is_multiple_of(self.every)) else {
            return self.table.run(op, now, replies);
        };
        let front = replies.settled();
        let room = replies.later(self.n).expect("a session's replies have a room");
        self.build(self.n, &OwnedOp::new(&op), form, room, front);
        Outcome {
            answered: match op {
                Op::Get { keys, .. } => keys.len() as u32,
                _ => 0,
            },
            ..Outcome::default()
        }
    }

    fn answer(&mut self, ticket: u64) -> Option<Answered> {
        self.answer.take().filter(|(t, _)| *t == ticket).map(|(_, a)| a)
    }

    fn again(&mut self, again: Again) {
        self.build(again.ticket, &again.rest.op, again.rest.form, again.room, again.front);
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

/// A connection whose answers are built elsewhere and whose client does not read holds no
/// more of them than its bound on output, plus one value: 256 reads of 16 values each,
/// answered on another thread, build 16 values' worth of answers at most, not 4,096; as the
/// client reads, every answer comes whole and in order, in pieces.
#[test]
fn answers_built_elsewhere_stay_within_the_bound_and_come_whole_as_the_client_reads() {
    const VALUE: usize = 1000;
    const BOUND: usize = 8 * 1024;
    let limits = crate::proto::Limits {
        max_value: 2 * VALUE,
        ..limits()
    };
    let keys: String = (0..16).map(|i| format!(" k{i}")).collect();
    let v = "v".repeat(VALUE);
    let resp = (
        Proto::Resp,
        format!("MSET{}\r\n", (0..16).map(|i| format!(" k{i} {v}")).collect::<String>())
            + &format!("MGET{keys}\r\n").repeat(256),
        "+OK\r\n".to_string() + &format!("*16\r\n{}", format!("${VALUE}\r\n{v}\r\n").repeat(16)).repeat(256),
    );
    let memcache = (
        Proto::Memcache,
        (0..16)
            .map(|i| format!("set k{i} 0 0 {VALUE}\r\n{v}\r\n"))
            .collect::<String>()
            + &format!("get{keys}\r\n").repeat(256),
        "STORED\r\n".repeat(16)
            + &format!(
                "{}END\r\n",
                (0..16)
                    .map(|i| format!("VALUE k{i} 0 {VALUE}\r\n{v}\r\n"))
                    .collect::<String>()
            )
            .repeat(256),
    );
    for (proto, input, want) in [resp, memcache] {
        let mut s = Session::with_limits(proto, limits);
        let mut each = Deferring::new();
        (each.every, each.bound) = (1, BOUND);
        let mut out = Vec::new();
        s.feed_each(input.as_bytes(), &mut out, &mut each);
        // Every read is owed, and what was built for them is the bound's worth and a value.
        let most = BOUND + VALUE + 100;
        assert!(each.held.len() > 16, "{proto:?}: {} reads asked", each.held.len());
        let held = each.built() + out.len();
        assert!(held <= most, "{proto:?}: built {held} bytes past {most}");
        // The client reads: the answers come back, the first first, and out drains.
        let mut got = Vec::new();
        let mut steps = 0;
        while !each.held.is_empty() || s.holding() {
            steps += 1;
            assert!(steps < 100_000, "no end");
            if let Some(i) = (!each.held.is_empty()).then_some(0) {
                let (t, a) = each.held.remove(i);
                each.answer = Some((t, a));
                s.complete_each(t, &mut out, &mut each);
            }
            let held = each.built() + out.len();
            assert!(held <= most, "{proto:?}: held {held} past {most}");
            got.append(&mut out);
            if s.holding() {
                s.feed_each(&[], &mut out, &mut each);
            }
        }
        got.append(&mut out);
        assert_eq!(got.len(), want.len(), "{proto:?}: answers lost");
        assert!(got == want.as_bytes(), "{proto:?}: answers out of order or torn");
        assert!(!s.owes());
    }
}
