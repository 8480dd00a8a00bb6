//! Answers that come later (another thread runs the command): in command order whatever
//! order they come in, each command counted once, and a connection that owes too many takes
//! no more input.

use super::protocol_tests::{limits, whole, RESP_SESSION};
use super::Table;
use crate::proto::keyed_session::Framing;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::proto::answer::build;
use crate::proto::keyed::{Again, Answered, Form, Op, Outcome, OwnedOp, Replies, Room};
use crate::proto::Protocol;
use crate::proto::{Answer, Each, Proto, Request, Session, Speaks};

/// Answers every `every`th command later, as another thread would: built at once from the
/// connection's room (a read stops where it runs out and is held, with what the connection
/// sends after it, until asked again), its answer held under a ticket until the test hands
/// it back (in any order).
struct Deferring {
    table: Table,
    n: u64,
    every: u64,
    /// The connection's bound on output.
    bound: usize,
    held: Vec<(u64, Answered)>,
    answer: Option<(u64, Answered)>,
    /// A read answered in part (its ticket and rest), and what was sent after it.
    parked: Option<(u64, OwnedOp, Form)>,
    behind: VecDeque<(u64, OwnedOp, Form, bool)>,
    room: Arc<Room>,
    /// Commands are built only when the test says ([`Deferring::build_now`]), as a busy
    /// thread would, later.
    lazy: bool,
    asked: Vec<(u64, OwnedOp, Form, bool)>,
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
            parked: None,
            behind: VecDeque::new(),
            room: Arc::default(),
            lazy: false,
            asked: Vec::new(),
        }
    }

    /// Builds what was asked and not built yet.
    fn build_now(&mut self) {
        for item in std::mem::take(&mut self.asked) {
            match self.parked {
                Some(_) => self.behind.push_back(item),
                None => self.run_from(item),
            }
        }
    }

    /// Bytes of the commands waiting behind a read answered in part.
    fn waiting(&self) -> usize {
        self.behind.iter().map(|(_, op, ..)| op.size()).sum()
    }

    /// Builds `first`'s answer, then those of what waited behind it, until one is answered
    /// in part.
    fn run_from(&mut self, first: (u64, OwnedOp, Form, bool)) {
        let now = std::time::Instant::now();
        let mut next = Some(first);
        while let Some((ticket, op, form, front)) = next {
            let table = &mut self.table;
            let (bytes, rest, _) = build(&op, form, self.room.clone(), front, |op, r| table.run(op, now, r));
            let more = rest.as_ref().map(|_| 0);
            self.held.push((ticket, Answered { bytes, more }));
            if let Some(rest) = rest {
                self.parked = Some((ticket, rest, form));
                return;
            }
            next = self.behind.pop_front();
        }
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
        let owned = OwnedOp::new(&op);
        self.room = replies
            .later(self.n, owned.size())
            .expect("a session's replies have a room");
        let item = (self.n, owned, form, front);
        if self.lazy {
            self.asked.push(item);
        } else {
            match self.parked {
                Some(_) => self.behind.push_back(item),
                None => self.run_from(item),
            }
        }
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
        let (ticket, op, form) = self
            .parked
            .take()
            .filter(|p| p.0 == again.ticket)
            .expect("the read held");
        self.run_from((ticket, op, form, true));
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
    assert_eq!(each.held.len(), crate::proto::keyed_session::MAX_WAITING);
    // The first answer lets the next ones through.
    let (t, a) = each.held.remove(0);
    each.answer = Some((t, a));
    s.complete_each(t, &mut out, &mut each);
    assert_eq!(
        each.held.len(),
        crate::proto::keyed_session::MAX_WAITING,
        "one more taken"
    );
    assert!(
        out.starts_with(b":1\r\n:2\r\n:3\r\n"),
        "{}",
        String::from_utf8_lossy(&out[..20])
    );
}

/// A `proto` session taking values up to `max_value`, and a hook that answers every command
/// here until told otherwise, its connection's output bound `bound`.
fn bounded(proto: Proto, max_value: usize, bound: usize) -> (Session, Deferring) {
    let limits = crate::proto::Limits { max_value, ..limits() };
    let mut each = Deferring::new();
    (each.every, each.bound) = (u64::MAX, bound);
    (Session::with_limits(proto, limits), each)
}

/// What a keyed session holds of replies: its output's, and those behind its slots and being
/// built elsewhere.
fn holds(s: &Session, out: &[u8]) -> usize {
    out.len()
        + match s.plain() {
            Some(Speaks::Resp(r)) => r.core().slots.held(),
            Some(Speaks::Memcache(m)) => m.core().slots.held(),
            _ => unreachable!("a keyed session"),
        }
}

/// 16 keys of `value` bytes set, then 256 reads of all 16: the sets, the reads, and what they
/// are answered with, in RESP and in memcache.
fn sixteen_keys_read_256_times(value: usize) -> [(Proto, String, String, String); 2] {
    let keys: String = (0..16).map(|i| format!(" k{i}")).collect();
    let v = "v".repeat(value);
    let resp = (
        Proto::Resp,
        format!("MSET{}\r\n", (0..16).map(|i| format!(" k{i} {v}")).collect::<String>()),
        format!("MGET{keys}\r\n").repeat(256),
        "+OK\r\n".to_string() + &format!("*16\r\n{}", format!("${value}\r\n{v}\r\n").repeat(16)).repeat(256),
    );
    let values: String = (0..16).map(|i| format!("VALUE k{i} 0 {value}\r\n{v}\r\n")).collect();
    let memcache = (
        Proto::Memcache,
        (0..16)
            .map(|i| format!("set k{i} 0 0 {value}\r\n{v}\r\n"))
            .collect::<String>(),
        format!("get{keys}\r\n").repeat(256),
        "STORED\r\n".repeat(16) + &format!("{values}END\r\n").repeat(256),
    );
    [resp, memcache]
}

/// A connection whose answers are built elsewhere and whose client does not read holds no
/// more of them than its bound on output plus two values (one its own thread's read may take
/// past it, and the first of the answer read next), not the 256 x 16 values asked; as the
/// client reads, every answer comes whole and in order, in pieces. With values larger than
/// the bound, only the answer read next moves, a value at a time.
#[test]
fn answers_built_elsewhere_stay_within_the_bound_and_come_whole_as_the_client_reads() {
    // The client reads all there is at each step, or only once half the bound has come
    // (then a rest is asked for while output waits, as far as the room goes).
    for (value, bound, reads_at) in [(1000, 8 * 1024, 0), (3000, 2048, 0), (1000, 8 * 1024, 4 * 1024)] {
        let most = bound + 2 * (value + 64 + 3);
        for (proto, sets, reads, want) in sixteen_keys_read_256_times(value) {
            // The sets answered here, then every read elsewhere.
            let (mut s, mut each) = bounded(proto, 2 * value, bound);
            let mut out = Vec::new();
            s.feed_each(sets.as_bytes(), &mut out, &mut each);
            (each.every, each.n) = (1, 0);
            s.feed_each(reads.as_bytes(), &mut out, &mut each);
            let what = format!("{proto:?}, {value}-byte values, a {bound}-byte bound, read at {reads_at}");
            // It takes commands until it owes 256 answers or what it holds (replies, and the
            // commands waiting elsewhere) reaches the bound: here, the bound.
            assert!((1..256).contains(&each.n), "{what}: {} commands asked", each.n);
            assert!(holds(&s, &out) <= most, "{what}: holds {} past {most}", holds(&s, &out));
            // The client reads: the answers come back, the first first, and out drains.
            let mut got = Vec::new();
            let mut steps = 0;
            while !each.held.is_empty() || s.holding() {
                steps += 1;
                assert!(steps < 100_000, "{what}: no end");
                if !each.held.is_empty() {
                    let (t, a) = each.held.remove(0);
                    each.answer = Some((t, a));
                    s.complete_each(t, &mut out, &mut each);
                }
                assert!(holds(&s, &out) <= most, "{what}: holds {} past {most}", holds(&s, &out));
                if out.len() >= reads_at || each.held.is_empty() {
                    got.append(&mut out);
                }
                if s.holding() {
                    s.feed_each(&[], &mut out, &mut each);
                }
            }
            got.append(&mut out);
            assert_eq!(got.len(), want.len(), "{what}: answers lost");
            assert!(got == want.as_bytes(), "{what}: answers out of order or torn");
            assert!(!s.owes());
        }
    }
}

/// Commands a connection sent another thread wait there behind a read of its answered in
/// part (so none overtakes it): what they hold counts against the connection's bound, so a
/// client that never reads cannot leave 255 large writes waiting there.
#[test]
fn commands_waiting_behind_a_read_answered_in_part_count_against_the_bound() {
    const BOUND: usize = 8 * 1024;
    let v = "v".repeat(1000);
    let sets = format!("MSET{}\r\n", (0..16).map(|i| format!(" k{i} {v}")).collect::<String>());
    let mut input = format!("MGET{}\r\n", (0..16).map(|i| format!(" k{i}")).collect::<String>());
    input += &format!("SET w {}\r\n", "w".repeat(4000)).repeat(200);
    let (mut s, mut each) = bounded(Proto::Resp, 8000, BOUND);
    let mut out = Vec::new();
    s.feed_each(sets.as_bytes(), &mut out, &mut each);
    out.clear();
    each.every = 1;
    s.feed_each(input.as_bytes(), &mut out, &mut each);
    assert!(each.parked.is_some(), "the read was answered whole");
    let waiting = each.waiting();
    assert!(waiting > 0, "nothing was sent behind the read");
    assert!(
        waiting <= BOUND + 4100,
        "{} writes, {waiting} bytes, wait behind the read",
        each.behind.len()
    );
}

/// A read asked while the output was nearly full, and built only after the client has read it
/// all, is built within the room the output has then, not the room it had when asked: it
/// comes whole, not in pieces.
#[test]
fn an_answer_built_after_the_client_read_gets_the_room_the_output_has_then() {
    const BOUND: usize = 8 * 1024;
    let (mut s, mut each) = bounded(Proto::Resp, 8000, BOUND);
    let mut out = Vec::new();
    let v = "v".repeat(1000);
    let sets = format!(
        "MSET k0 {v} k1 {v} k2 {v} k3 {v}\r\nSET big {}\r\nGET big\r\n",
        "b".repeat(7000)
    );
    s.feed_each(sets.as_bytes(), &mut out, &mut each);
    assert!(out.len() > 7000, "the output is nearly full");
    (each.every, each.n, each.lazy) = (1, 0, true);
    s.feed_each(b"MGET k0 k1 k2 k3\r\n", &mut out, &mut each);
    // The client reads it all; then the other thread builds the answer.
    out.clear();
    s.output_gone(BOUND);
    each.build_now();
    let (ticket, answer) = each.held.remove(0);
    assert!(answer.more.is_none(), "answered in part: {} bytes", answer.bytes.len());
    each.answer = Some((ticket, answer));
    s.complete_each(ticket, &mut out, &mut each);
    // (Its `*4` went out with what the client read.)
    assert!(
        out == format!("$1000\r\n{v}\r\n").repeat(4).as_bytes(),
        "the answer is not the four values"
    );
}
