//! memcache: memcached's text protocol as a sans-I/O session. Each command line parsed into a
//! [`keyed::Op`](crate::proto::keyed::Op) the hook runs against its store ([`Each::command`]); replies in order,
//! none for a command with `noreply`.
//!
//! Commands: get and gets (many keys), set, add, replace, delete, incr, decr, touch, version,
//! flush_all, quit. Bounds, each answered in the protocol: a data block over `--max-value`
//! gets `SERVER_ERROR object too large for cache` and is dropped, the connection going on,
//! and a `set` unlinks the key's old value first (as memcached does); a key over 250 bytes or a malformed line gets `CLIENT_ERROR`; a line
//! past 64 KiB, or a data block not ended by CRLF, cannot be resynchronised: an error, and the
//! connection closes.
//!
//! The parts: this file frames the input (lines, data blocks, the skip past a bound),
//! `command` turns a command line into its op, `reply` encodes what the store answers.

mod command;
mod reply;

use super::keyed::Op;
use std::time::Instant;

use super::keyed_session::{self, Core, Framing, Sink};
use super::{Each, Fed, Protocol};
/// The commands it knows, as their replies differ: the reply forms keyed state carries.
pub use crate::proto::keyed::McVerb as Verb;
use command::{number, op, Other};
pub(crate) use reply::encode;
use reply::{say, Reply};

/// The longest command line, and the longest key (memcached's).
const MAX_LINE: usize = 64 * 1024;
const MAX_KEY: usize = 250;

/// One connection's memcache session.
#[derive(Debug)]
pub struct McSession {
    /// The input, the answers owed, why it stopped: what RESP's session keeps too.
    core: Core,
    /// Bytes of a data block past `--max-value` still to drop.
    skip: usize,
    max_value: usize,
}

/// What the input holds next.
enum Parsed {
    Incomplete,
    /// A command (its words in `spans`; a storage command's data at `data`), up to here.
    Command {
        end: usize,
        data: Option<(usize, usize)>,
    },
    /// Answered with this line, up to here (a malformed command).
    Refused(usize, &'static str),
    /// Answered with this line (none with `noreply`); then `skip` bytes of its data dropped
    /// from `at`.
    TooLarge {
        at: usize,
        skip: usize,
        quiet: bool,
        /// A `set`: the key's old value is unlinked first (memcached's rule: no stale value is
        /// read after a failed overwrite; `add` and `replace` leave it).
        unlink: bool,
    },
    /// Cannot go on: this line, then the connection closes.
    Broken(&'static str),
}

impl McSession {
    pub fn new(max_value: usize) -> McSession {
        McSession {
            core: Core::default(),
            skip: 0,
            max_value,
        }
    }

    fn parse(&mut self) -> Parsed {
        self.core.input.spans.clear();
        let nl = match self.core.input.line(MAX_LINE) {
            Ok(Some(nl)) => nl,
            Ok(None) => return Parsed::Incomplete,
            Err(()) => return Parsed::Broken("CLIENT_ERROR line too long"),
        };
        let b = &self.core.input.buf[self.core.input.pos..];
        let line = &b[..nl];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut i = 0;
        while i < line.len() {
            if line[i] == b' ' || line[i] == b'\t' {
                i += 1;
                continue;
            }
            let start = i;
            while i < line.len() && line[i] != b' ' && line[i] != b'\t' {
                i += 1;
            }
            self.core
                .input
                .spans
                .push(((self.core.input.pos + start) as u32, (self.core.input.pos + i) as u32));
        }
        let end = self.core.input.pos + nl + 1;
        let args = self.core.input.args();
        if args.is_empty() {
            return Parsed::Refused(end, "ERROR");
        }
        // A key past 250 bytes (the other words are numbers, and shorter).
        if args.iter().skip(1).any(|k| k.len() > MAX_KEY) {
            return Parsed::Refused(end, "CLIENT_ERROR bad command line format");
        }
        if !matches!(args.get(0), b"set" | b"add" | b"replace") {
            return Parsed::Command { end, data: None };
        }
        // A storage command: its data block follows the line.
        if args.len() < 5 || args.len() > 6 {
            return Parsed::Refused(end, "CLIENT_ERROR bad command line format");
        }
        let Some(bytes) = number(args.get(4)).filter(|&n| n >= 0) else {
            return Parsed::Refused(end, "CLIENT_ERROR bad command line format");
        };
        let bytes = bytes as usize;
        if bytes > self.max_value {
            return Parsed::TooLarge {
                at: end,
                skip: bytes + 2,
                quiet: args.len() == 6 && args.get(5) == b"noreply",
                unlink: args.get(0) == b"set",
            };
        }
        let rel = end - self.core.input.pos;
        if b.len() < rel + bytes + 2 {
            self.core.input.wait(rel + bytes + 2);
            return Parsed::Incomplete;
        }
        if &b[rel + bytes..rel + bytes + 2] != b"\r\n" {
            return Parsed::Broken("CLIENT_ERROR bad data chunk");
        }
        Parsed::Command {
            end: end + bytes + 2,
            data: Some((end, end + bytes)),
        }
    }

    /// Runs the command in `spans` (its data at `data`).
    fn run<F: Each + ?Sized>(
        &mut self,
        data: Option<(usize, usize)>,
        out: &mut Vec<u8>,
        each: &mut F,
        fed: &mut Fed,
    ) -> Ran {
        let args = self.core.input.args();
        let noreply = args.len() > 1 && args.get(args.len() - 1) == b"noreply";
        let mut sink = Sink::new(out, &mut self.core.slots);
        let (verb, op) = match op(&self.core.input.buf, args, args.len() - usize::from(noreply), data) {
            Ok(c) => c,
            Err(Other::Quit) => return Ran::Close,
            Err(other) => {
                fed.requests += 1;
                match other {
                    Other::Refused(line) => {
                        fed.errors += 1;
                        say(sink.buf(), line);
                    }
                    // A version libmemcached reads as one (it parses the numbers first).
                    _ => say(sink.buf(), concat!("VERSION 1.6.0 muxlab-", env!("CARGO_PKG_VERSION"))),
                }
                return Ran::Done;
            }
        };
        let resume = self.core.answered as usize;
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
        let mut r = Reply {
            sink,
            verb,
            noreply,
            scratch: Vec::new(),
            limit,
        };
        let o = each.command(op, &mut r);
        if o.wait {
            return Ran::Wait;
        }
        let answered = resume + o.answered as usize;
        if o.answered > 0 && answered < keys {
            self.core.answered = answered as u32;
            return Ran::Partly;
        }
        self.core.answered = 0;
        fed.errors += u32::from(o.error);
        if matches!(verb, Verb::Get | Verb::Gets) && !noreply {
            say(r.sink.buf(), "END");
        }
        r.sink.command_ran(pushed, fed);
        Ran::Done
    }
}

impl McSession {
    /// Deletes the key of the storage command in `spans`, answering nothing; `true` when the
    /// store answers later (the command is run again then, as any other that waits).
    fn unlink<F: Each + ?Sized>(&mut self, out: &mut Vec<u8>, each: &mut F) -> bool {
        let keys = self.core.input.args().from(1).take(1);
        let sink = Sink::new(out, &mut self.core.slots);
        let mut r = Reply {
            sink,
            verb: Verb::Delete,
            noreply: true,
            scratch: Vec::new(),
            limit: usize::MAX,
        };
        each.command(Op::Del { keys }, &mut r).wait
    }
}

impl Framing for McSession {
    #[cfg(test)]
    fn core(&self) -> &Core {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    fn skipped(&mut self, _: &mut Vec<u8>, _: &mut Fed) -> bool {
        let n = self.skip.min(self.core.input.buf.len() - self.core.input.pos);
        (self.core.input.pos, self.skip) = (self.core.input.pos + n, self.skip - n);
        self.skip == 0
    }

    fn next<F: Each + ?Sized>(&mut self, out: &mut Vec<u8>, each: &mut F, fed: &mut Fed) -> bool {
        match self.parse() {
            Parsed::Incomplete => return false,
            Parsed::Command { end, data } => match self.run(data, out, each, fed) {
                Ran::Done => self.core.input.to(end),
                Ran::Partly => {
                    self.core.hold();
                    return false;
                }
                Ran::Wait => {
                    self.core.wait();
                    return false;
                }
                Ran::Close => {
                    fed.close = true;
                    self.core.closed = true;
                    return false;
                }
            },
            Parsed::Refused(end, line) => {
                say(self.core.slots.tail(out), line);
                (fed.requests, fed.errors) = (fed.requests + 1, fed.errors + 1);
                self.core.input.to(end);
            }
            Parsed::TooLarge {
                at,
                skip,
                quiet,
                unlink,
            } => {
                if unlink && self.unlink(out, each) {
                    self.core.wait();
                    return false;
                }
                if !quiet {
                    say(self.core.slots.tail(out), "SERVER_ERROR object too large for cache");
                }
                (fed.requests, fed.errors) = (fed.requests + 1, fed.errors + 1);
                self.core.input.to(at);
                self.skip = skip;
            }
            Parsed::Broken(line) => {
                say(self.core.slots.tail(out), line);
                (fed.requests, fed.errors, fed.close) = (fed.requests + 1, fed.errors + 1, true);
                self.core.closed = true;
                return false;
            }
        }
        true
    }
}

/// memcache as a server sees it: each answer is its keyed core's ([`Core`]), through the feed
/// loop every keyed framing runs in.
impl Protocol for McSession {
    fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        keyed_session::feed(self, input, out, each)
    }

    /// memcache's commands have no answers that come due with time.
    fn advance_each<F: Each + ?Sized>(&mut self, _: Instant, _: &mut Vec<u8>, _: &mut F) -> Fed {
        Fed::default()
    }

    /// The answer another thread ran for `ticket` goes out in its place, and the input held
    /// behind it goes on.
    fn complete_each<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed {
        keyed_session::complete(self, ticket, out, each)
    }

    /// A command part-way in is not a head: a memcache connection has only its idle timeout.
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

    /// memcache has no flow-control window: TCP's is the only one.
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

    /// Every reply written is whole: a cut memcache connection sends nothing more.
    fn cut(&mut self, _: &mut Vec<u8>) {}

    fn farewell(&mut self, _: &mut Vec<u8>) {}

    fn timeout_response(&self) -> &'static [u8] {
        b""
    }
}

/// How far a command went.
enum Ran {
    Done,
    /// A read of many keys stopped at the bound on output: it goes on from its next key.
    Partly,
    /// It must wait for the answers owed ([`Outcome::wait`]).
    Wait,
    /// `quit`.
    Close,
}
