//! memcache: memcached's text protocol as a sans-I/O session. Each command line parsed into a
//! [`keyed::Op`] the hook runs against its store ([`Each::command`]); replies in order,
//! none for a command with `noreply`.
//!
//! Commands: get and gets (many keys), set, add, replace, delete, incr, decr, touch, version,
//! flush_all, quit. Bounds, each answered in the protocol: a data block over `--max-value`
//! gets `SERVER_ERROR object too large for cache` and is dropped, the connection going on
//! (as memcached does); a key over 250 bytes or a malformed line gets `CLIENT_ERROR`; a line
//! past 64 KiB, or a data block not ended by CRLF, cannot be resynchronised: an error, and the
//! connection closes.
//!
//! The parts: this file frames the input (lines, data blocks, the skip past a bound),
//! `command` turns a command line into its op, `reply` encodes what the store answers.

mod command;
mod reply;

use super::keyed::{Input, Op, Sink, Slots};
use super::{Each, Fed};
pub use command::Verb;
use command::{number, op, Other};
pub(crate) use reply::encode;
use reply::{say, Reply};

/// The longest command line, and the longest key (memcached's).
const MAX_LINE: usize = 64 * 1024;
const MAX_KEY: usize = 250;

/// One connection's memcache session.
#[derive(Debug)]
pub struct McSession {
    /// Input not run yet, and the spans of the command being run.
    input: Input,
    /// Bytes of a data block past `--max-value` still to drop.
    skip: usize,
    /// Keys of the get being answered already answered: it stopped at the bound on output.
    answered: u32,
    holding: bool,
    /// Answers other threads owe, in order, with the replies behind them.
    slots: Slots,
    /// Stopped for answers owed: it takes no more until one comes.
    waiting: bool,
    max_value: usize,
    closed: bool,
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
    },
    /// Cannot go on: this line, then the connection closes.
    Broken(&'static str),
}

impl McSession {
    pub fn new(max_value: usize) -> McSession {
        McSession {
            input: Input::default(),
            skip: 0,
            answered: 0,
            holding: false,
            slots: Slots::default(),
            waiting: false,
            max_value,
            closed: false,
        }
    }

    /// Stopped at the bound on output with commands still to run.
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// Bytes of input held, not run yet.
    pub fn behind(&self) -> usize {
        self.input.behind()
    }

    /// Answers are owed by other threads.
    pub fn owes(&self) -> bool {
        !self.slots.is_empty()
    }

    /// It takes no more input until an answer owed comes (or, closing, at all).
    pub fn paused(&self) -> bool {
        self.waiting || (self.closed && !self.slots.is_empty())
    }

    /// The answer of `ticket` came (through `each`): it goes out in its place, with what
    /// waited behind it, and the input held goes on.
    pub fn complete<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed {
        let ended = self.slots.answer(ticket, out, each);
        let mut fed = self.feed(&[], out, each);
        fed.requests += ended;
        fed
    }

    /// Gives up the buffers a burst grew: the bytes given up.
    pub fn trim(&mut self) -> usize {
        self.input.trim()
    }

    /// The parse's work so far ([`Input`]'s count).
    #[cfg(test)]
    pub(crate) fn looked(&self) -> usize {
        self.input.looked
    }

    /// Takes `input`, answering what it can through `each` into `out`. A close it asks for
    /// (`quit`, a broken stream) waits for the answers other threads owe it: those go first.
    pub fn feed<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut fed = self.take(input, out, each);
        fed.close &= self.slots.is_empty();
        fed
    }

    fn take<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut fed = Fed::default();
        if self.closed {
            fed.close = true;
            return fed;
        }
        self.input.buf.extend_from_slice(input);
        (self.holding, self.waiting) = (false, false);
        loop {
            let n = self.skip.min(self.input.buf.len() - self.input.pos);
            (self.input.pos, self.skip) = (self.input.pos + n, self.skip - n);
            if self.skip > 0 || !self.input.ready() {
                break;
            }
            if self.slots.full(out.len(), each) {
                self.waiting = true;
                break;
            }
            if each.room(out.len()) == 0 {
                self.holding = true;
                break;
            }
            match self.parse() {
                Parsed::Incomplete => break,
                Parsed::Command { end, data } => match self.run(data, out, each, &mut fed) {
                    Ran::Done => self.input.to(end),
                    Ran::Partly => {
                        self.holding = true;
                        break;
                    }
                    Ran::Wait => {
                        self.waiting = true;
                        break;
                    }
                    Ran::Close => {
                        fed.close = true;
                        self.closed = true;
                        break;
                    }
                },
                Parsed::Refused(end, line) => {
                    say(self.slots.tail(out), line);
                    (fed.requests, fed.errors) = (fed.requests + 1, fed.errors + 1);
                    self.input.to(end);
                }
                Parsed::TooLarge { at, skip, quiet } => {
                    if !quiet {
                        say(self.slots.tail(out), "SERVER_ERROR object too large for cache");
                    }
                    (fed.requests, fed.errors) = (fed.requests + 1, fed.errors + 1);
                    self.input.to(at);
                    self.skip = skip;
                }
                Parsed::Broken(line) => {
                    say(self.slots.tail(out), line);
                    (fed.requests, fed.errors) = (fed.requests + 1, fed.errors + 1);
                    fed.close = true;
                    self.closed = true;
                    break;
                }
            }
        }
        self.input.compact();
        fed
    }

    fn parse(&mut self) -> Parsed {
        self.input.spans.clear();
        let nl = match self.input.line(MAX_LINE) {
            Ok(Some(nl)) => nl,
            Ok(None) => return Parsed::Incomplete,
            Err(()) => return Parsed::Broken("CLIENT_ERROR line too long"),
        };
        let b = &self.input.buf[self.input.pos..];
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
            self.input
                .spans
                .push(((self.input.pos + start) as u32, (self.input.pos + i) as u32));
        }
        let end = self.input.pos + nl + 1;
        let args = self.input.args();
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
            };
        }
        let rel = end - self.input.pos;
        if b.len() < rel + bytes + 2 {
            self.input.wait(rel + bytes + 2);
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
        let args = self.input.args();
        let noreply = args.len() > 1 && args.get(args.len() - 1) == b"noreply";
        let mut sink = Sink::new(out, &mut self.slots);
        let (verb, op) = match op(&self.input.buf, args, args.len() - usize::from(noreply), data) {
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
        let resume = self.answered as usize;
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
            self.answered = answered as u32;
            return Ran::Partly;
        }
        self.answered = 0;
        fed.errors += u32::from(o.error);
        if matches!(verb, Verb::Get | Verb::Gets) && !noreply {
            say(r.sink.buf(), "END");
        }
        // A command with an answer to come is counted once that has gone out.
        match r.sink.pushed() == pushed {
            true => fed.requests += 1,
            false => r.sink.ends_command(),
        }
        Ran::Done
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
