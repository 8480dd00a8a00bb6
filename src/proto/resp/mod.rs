//! resp: RESP2, the protocol redis speaks, as a sans-I/O session. Multibulk commands
//! (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`) and inline ones (`GET k\r\n`), pipelined; each command
//! parsed into a [`keyed::Op`](crate::proto::keyed::Op) the hook runs against its store ([`Each::command`]), replies in
//! order.
//!
//! Commands: PING, GET, SET (EX, PX, NX, XX), DEL, EXISTS, INCR, INCRBY, DECR, DECRBY, MGET,
//! MSET, EXPIRE, TTL, DBSIZE, FLUSHALL, INFO (its keyspace section), and CONFIG GET (an empty
//! answer: redis-benchmark asks at start).
//!
//! Bounds, each answered in the protocol, and each closing the connection as redis closes it
//! on a bad length: a bulk over `--max-value` gets redis's `Protocol error: invalid bulk
//! length` (redis's own bound, `proto-max-bulk-len`, gets the same), a command whose bulks add
//! up to more than `--max-value` plus 64 KiB an error saying so; a bad length, a count past
//! 2^20, a header or inline line past its bound cannot be resynchronised either. A client
//! that pipelines and never reads holds the session to `--max-output` ([`Each::room`]) plus
//! one read.
//!
//! The parts: this file frames the input (multibulk, inline),
//! `command` turns a command into its op, `reply` encodes what the store answers.

mod command;
mod inline;
mod reply;

use super::keyed::Op;
use std::time::Instant;

use super::keyed_session::{self, Core, Framing, Sink};
use super::{Each, Fed, Protocol};
/// The commands it knows, as their replies differ: the reply forms keyed state carries.
pub use crate::proto::keyed::RespVerb as Verb;
use command::command_of;
use reply::{error, Reply};

/// The most arguments one command may have.
const MAX_ARGS: i64 = 1 << 20;
/// The longest inline command, and the most a multibulk's headers may add to its bulks.
const MAX_INLINE: usize = 64 * 1024;
const SLACK: usize = 64 * 1024;
/// The longest count or length line (`*N`, `$N`).
const MAX_HEADER: usize = 32;

/// One connection's RESP session.
#[derive(Debug)]
pub struct RespSession {
    /// The input, the answers owed, why it stopped: what memcache's session keeps too.
    core: Core,
    /// A multibulk command parsed in part: its argument count and where its next bulk begins
    /// (from the input's `pos`); the bulks before it are in the input's spans.
    partial: Option<(usize, usize)>,
    max_value: usize,
}

/// How far a command went.
enum Step {
    Done,
    /// A read of many keys stopped at the bound on output: it goes on from its next key when
    /// fed again.
    Partly,
    /// It must wait for the answers owed ([`crate::proto::keyed::Outcome::wait`]).
    Wait,
}

/// What the input holds next.
enum Parsed {
    /// Not all of the next command yet.
    Incomplete,
    /// Nothing to run up to here (an empty line, `*0`).
    Nothing(usize),
    /// A command whose arguments are in `spans`, up to here.
    Command(usize),
    /// Past a bound, or a stream that cannot be resynchronised: the error (after `Protocol
    /// error: `), then the connection closes.
    Broken(&'static str),
    /// A command (of `args` arguments) that would be held whole past `--max-value` and 64 KiB:
    /// an error saying so, then the connection closes.
    Over { args: usize },
}

impl RespSession {
    pub fn new(max_value: usize) -> RespSession {
        RespSession {
            core: Core::default(),
            partial: None,
            max_value,
        }
    }

    /// The next command, going on from where a parse that wanted more bytes stopped.
    fn parse(&mut self) -> Parsed {
        let (n, mut at) = match self.partial.take() {
            Some(p) => p,
            None => {
                self.core.input.spans.clear();
                let b = &self.core.input.buf[self.core.input.pos..];
                if b[0] != b'*' {
                    return self.inline();
                }
                let (n, at) = match header(b, 0, b'*') {
                    Ok(Some(h)) => h,
                    Ok(None) => return self.incomplete(None, b.len() + 1),
                    Err(()) => return Parsed::Broken("invalid multibulk length"),
                };
                if n <= 0 {
                    return Parsed::Nothing(self.core.input.pos + at);
                }
                if n > MAX_ARGS {
                    return Parsed::Broken("invalid multibulk length");
                }
                (n as usize, at)
            }
        };
        let b = &self.core.input.buf[self.core.input.pos..];
        for _ in self.core.input.spans.len()..n {
            if at >= b.len() {
                return self.incomplete(Some((n, at)), at + 1);
            }
            if b[at] != b'$' {
                return Parsed::Broken("expected '$'");
            }
            #[cfg(test)]
            {
                self.core.input.looked += 1;
            }
            let (len, next) = match header(b, at, b'$') {
                Ok(Some(h)) => h,
                Ok(None) => return self.incomplete(Some((n, at)), b.len() + 1),
                Err(()) => return Parsed::Broken("invalid bulk length"),
            };
            if len < 0 {
                return Parsed::Broken("invalid bulk length");
            }
            let len = len as usize;
            if len > self.max_value {
                return Parsed::Broken("invalid bulk length");
            }
            // The command's bytes through this bulk, its headers included: what it would hold.
            if next + len > self.max_value + SLACK {
                return Parsed::Over { args: n };
            }
            if b.len() < next + len + 2 {
                return self.incomplete(Some((n, at)), next + len + 2);
            }
            if &b[next + len..next + len + 2] != b"\r\n" {
                return Parsed::Broken("a bulk not ended by CRLF");
            }
            self.core.input.spans.push((
                (self.core.input.pos + next) as u32,
                (self.core.input.pos + next + len) as u32,
            ));
            at = next + len + 2;
        }
        Parsed::Command(self.core.input.pos + at)
    }

    /// The parse stopped for want of bytes: it goes on from `partial` once the input holds
    /// `need` bytes.
    fn incomplete(&mut self, partial: Option<(usize, usize)>, need: usize) -> Parsed {
        self.partial = partial;
        self.core.input.wait(need);
        Parsed::Incomplete
    }

    /// An inline command: a line of words.
    fn inline(&mut self) -> Parsed {
        let nl = match self.core.input.line(MAX_INLINE) {
            Ok(Some(nl)) => nl,
            Ok(None) => return Parsed::Incomplete,
            Err(()) => return Parsed::Broken("too big inline request"),
        };
        let pos = self.core.input.pos;
        let input = &mut self.core.input;
        let line = &mut input.buf[pos..pos + nl];
        let len = line.strip_suffix(b"\r").map_or(nl, |l| l.len());
        // Words as redis splits them (quotes and escapes), each unquoted in place.
        let spans = &mut input.spans;
        if inline::words(&mut line[..len], |a, b| {
            spans.push(((pos + a) as u32, (pos + b) as u32))
        })
        .is_err()
        {
            return Parsed::Broken("unbalanced quotes in request");
        }
        match self.core.input.spans.is_empty() {
            true => Parsed::Nothing(self.core.input.pos + nl + 1),
            false => Parsed::Command(self.core.input.pos + nl + 1),
        }
    }

    /// Runs the command in `spans`: parsed into an op for the hook, or answered with the
    /// protocol's error.
    fn run<F: Each + ?Sized>(&mut self, out: &mut Vec<u8>, each: &mut F, fed: &mut Fed) -> Step {
        let args = self.core.input.args();
        let resume = self.core.answered as usize;
        let mut sink = Sink::new(out, &mut self.core.slots);
        let Some((verb, op)) = command_of(args, sink.buf(), fed) else {
            return Step::Done;
        };
        if verb == Verb::MGet && resume == 0 {
            reply::head(sink.buf(), b'*', args.len() as i64 - 1);
        }
        let (op, keys) = match op {
            Op::Get { keys, .. } => (
                Op::Get {
                    keys: keys.from(resume),
                    first: resume == 0,
                },
                keys.len(),
            ),
            op => (op, 0),
        };
        let limit = sink.len().saturating_add(each.room(sink.len()));
        let pushed = sink.pushed();
        let mut r = Reply { sink, verb, limit };
        let o = each.command(op, &mut r);
        if o.wait {
            return Step::Wait;
        }
        let answered = resume + o.answered as usize;
        if o.answered > 0 && answered < keys {
            self.core.answered = answered as u32;
            return Step::Partly;
        }
        self.core.answered = 0;
        r.sink.command_ran(pushed, fed);
        fed.errors += u32::from(o.error);
        Step::Done
    }
}

impl RespSession {
    /// Answers `why` and closes: `false`, the feed stops here.
    fn broken(&mut self, out: &mut Vec<u8>, fed: &mut Fed, why: &str) -> bool {
        error(self.core.slots.tail(out), why);
        (fed.requests, fed.errors, fed.close) = (fed.requests + 1, fed.errors + 1, true);
        self.core.closed = true;
        false
    }
}

impl Framing for RespSession {
    #[cfg(test)]
    fn core(&self) -> &Core {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    /// Nothing is ever skipped: a command past a bound closes the connection.
    fn skipped(&mut self, _: &mut Vec<u8>, _: &mut Fed) -> bool {
        true
    }

    fn next<F: Each + ?Sized>(&mut self, out: &mut Vec<u8>, each: &mut F, fed: &mut Fed) -> bool {
        match self.parse() {
            Parsed::Incomplete => return false,
            Parsed::Nothing(end) => self.core.input.to(end),
            Parsed::Command(end) => match self.run(out, each, fed) {
                Step::Done => self.core.input.to(end),
                Step::Partly => {
                    self.core.hold();
                    return false;
                }
                Step::Wait => {
                    self.core.wait();
                    return false;
                }
            },
            Parsed::Broken(why) => return self.broken(out, fed, &format!("Protocol error: {why}")),
            Parsed::Over { args } => {
                let why = format!(
                    "Protocol error: a command of {args} arguments past --max-value ({} bytes) and 64 KiB",
                    self.max_value
                );
                return self.broken(out, fed, &why);
            }
        }
        true
    }
}

/// RESP as a server sees it: each answer is its keyed core's ([`Core`]), through the feed
/// loop every keyed framing runs in.
impl Protocol for RespSession {
    fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        keyed_session::feed(self, input, out, each)
    }

    /// RESP's commands have no answers that come due with time.
    fn advance_each<F: Each + ?Sized>(&mut self, _: Instant, _: &mut Vec<u8>, _: &mut F) -> Fed {
        Fed::default()
    }

    /// The answer another thread ran for `ticket` goes out in its place, and the input held
    /// behind it goes on.
    fn complete_each<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed {
        keyed_session::complete(self, ticket, out, each)
    }

    /// A command part-way in is not a head: a RESP connection has only its idle timeout.
    fn head_pending(&self) -> bool {
        false
    }

    fn holding(&self) -> bool {
        self.core.holding()
    }

    fn trim(&mut self) -> usize {
        self.core.trim()
    }

    fn due(&self) -> Option<Instant> {
        None
    }

    fn owes(&self) -> bool {
        self.core.owes()
    }

    /// Answers other threads are running go out before the close, even after the peer has
    /// finished sending.
    fn answers_owed(&self) -> bool {
        self.core.owes()
    }

    fn output_gone(&mut self, bound: usize) {
        self.core.slots.drained(bound)
    }

    fn paused(&self) -> bool {
        self.core.paused()
    }

    /// RESP has no flow-control window: TCP's is the only one.
    fn window_held(&self) -> bool {
        false
    }

    fn behind(&self) -> usize {
        self.core.behind()
    }

    /// The answers owed wait in the session's slots, not behind tickets the wiring cancels: a
    /// closing connection drops its slots, and an answer that comes after is thrown away.
    fn tickets(&self) -> Vec<u64> {
        Vec::new()
    }

    fn cancelled(&mut self) -> Vec<u64> {
        Vec::new()
    }

    /// Every reply written is whole: a cut RESP connection sends nothing more.
    fn cut(&mut self, _: &mut Vec<u8>) {}

    fn farewell(&mut self, _: &mut Vec<u8>) {}

    fn timeout_response(&self) -> &'static [u8] {
        b""
    }
}

/// Runs `run` with RESP's encoder for `verb` over `sink` (another thread answering a command
/// later).
pub(crate) fn encode(
    verb: Verb,
    sink: Sink<'_>,
    run: impl FnOnce(&mut dyn crate::proto::keyed::Replies) -> crate::proto::keyed::Outcome,
) -> crate::proto::keyed::Outcome {
    run(&mut Reply {
        sink,
        verb,
        limit: usize::MAX,
    })
}

/// A count or length line at `at` of `b` (`*N\r\n`, `$N\r\n`, starting with `mark`): the
/// number and where what follows begins; `None` while its CRLF has not come; an error past
/// [`MAX_HEADER`] or for what is not a number.
fn header(b: &[u8], at: usize, mark: u8) -> Result<Option<(i64, usize)>, ()> {
    if b.get(at) != Some(&mark) {
        return match b.get(at) {
            None => Ok(None),
            Some(_) => Err(()),
        };
    }
    let rest = &b[at + 1..];
    let Some(cr) = rest.iter().take(MAX_HEADER).position(|&c| c == b'\r') else {
        return match rest.len() >= MAX_HEADER {
            true => Err(()),
            false => Ok(None),
        };
    };
    if rest.len() < cr + 2 {
        return Ok(None);
    }
    if rest[cr + 1] != b'\n' {
        return Err(());
    }
    Ok(Some((strict(&rest[..cr]).ok_or(())?, at + 1 + cr + 2)))
}

/// A length as redis reads one (its integers' rule: `keyed::integer`).
fn strict(s: &[u8]) -> Option<i64> {
    crate::proto::keyed::integer(s)
}
