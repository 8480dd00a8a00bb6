//! One connection's HTTP/1.1 state ([`HttpSession`]): where it is in the request stream,
//! and each step over its input.

use std::io::Write;

use crate::proto::{Answer, Each, Fed, Protocol, Request};
use crate::proto::{ChunkError, Chunked, Phase};
use crate::proto::{EventStream, Later};

/// The capacity of the input buffer kept once it is empty: what one small request needs.
const SPARE: usize = 4 * 1024;

use super::head::Head;
use super::parse::{self, Parsed, Read};
use super::response::*;
use crate::proto::MAX_BODY;

/// Where the session is in the request stream.
#[derive(Debug, Default)]
enum State {
    /// Waiting for (the rest of) a request head.
    #[default]
    Head,
    /// Inside a `Content-Length` body: `left` bytes to go; echoed or skipped. `announce`: the
    /// echo's head (for a body of `left` bytes: none has gone yet) goes out with the first
    /// body byte.
    Body {
        left: usize,
        echo: bool,
        keep: bool,
        announce: bool,
    },
    /// Inside a chunked body (boxed: the state is 16 bytes in every connection, held ones
    /// too, where a chunked body's would make it 56).
    Chunked(Box<Chunked>),
    /// An event stream is going out ([`crate::proto::later`]): input waits in the buffer until it
    /// ends (the connection reads no more meanwhile: [`Protocol::paused`]). `chunked`: HTTP/1.1's framing (HTTP/1.0's ends with the connection).
    Streaming {
        stream: Box<EventStream>,
        keep: bool,
        chunked: bool,
    },
    /// A GET or HEAD whose response waits for its work to be done elsewhere
    /// ([`Later::Pending`]): input waits in the buffer until [`Protocol::complete_each`].
    Waiting { ticket: u64, get: bool, keep: bool },
    /// A response said `Connection: close`; everything after is ignored.
    Closed,
}

/// One connection's HTTP state.
#[derive(Debug)]
pub struct HttpSession {
    /// Bytes not yet consumed (an incomplete head, chunk-size line or trailer line, or what the
    /// bound on output held back).
    buf: Vec<u8>,
    /// The last feed stopped at the bound on output: `buf` holds input to go on with.
    held: bool,
    state: State,
    /// The largest request body accepted.
    max_body: usize,
}

impl Default for HttpSession {
    fn default() -> Self {
        HttpSession::new(MAX_BODY)
    }
}

/// What one step over the input did.
enum Step {
    /// Used this many bytes; go on.
    Used(usize),
    /// Needs more input than there is.
    More,
    /// A request head is next.
    Head,
}

impl HttpSession {
    /// A session accepting request bodies up to `max_body` bytes.
    pub fn new(max_body: usize) -> HttpSession {
        HttpSession {
            buf: Vec::new(),
            held: false,
            state: State::Head,
            max_body,
        }
    }

    /// Steps over `data` until it needs more input or the connection ends; returns the bytes used.
    fn run<F: Each + ?Sized>(&mut self, data: &[u8], out: &mut Vec<u8>, fed: &mut Fed, each: &mut F) -> usize {
        let mut pos = 0;
        while !fed.close {
            let step = match &mut self.state {
                State::Head if pos == data.len() => Step::More,
                State::Head if each.room(out.len()) == 0 => {
                    self.held = true;
                    Step::More
                }
                State::Head => Step::Head,
                State::Body {
                    left,
                    echo,
                    keep,
                    announce,
                } => {
                    let mut n = (*left).min(data.len() - pos);
                    if *echo && n > 0 {
                        n = n.min(each.room(out.len()));
                        self.held = n == 0;
                    }
                    if *echo && n > 0 {
                        if std::mem::take(announce) {
                            echo_head(*left, *keep, out);
                        }
                        out.extend_from_slice(&data[pos..pos + n]);
                    }
                    *left -= n;
                    if *left == 0 {
                        finish(*keep, fed);
                        self.state = State::Head;
                    }
                    if n == 0 && (pos == data.len() || self.held) {
                        Step::More
                    } else {
                        Step::Used(n)
                    }
                }
                State::Chunked(c) => match c.step(&data[pos..], self.max_body) {
                    Ok(Some(used)) => Step::Used(used),
                    Ok(None) => Step::More,
                    Err(e) => refuse(
                        match e {
                            ChunkError::Malformed => Refusal::BadRequest,
                            ChunkError::TooLarge => Refusal::TooLarge,
                            ChunkError::TrailersTooLarge => Refusal::HeadTooLarge,
                        },
                        out,
                        fed,
                    ),
                },
                State::Closed | State::Streaming { .. } | State::Waiting { .. } => Step::More,
            };
            if let State::Chunked(c) = &self.state {
                if c.complete() {
                    let State::Chunked(c) = std::mem::take(&mut self.state) else {
                        unreachable!()
                    };
                    if let Some(body) = &c.body {
                        echo_head(body.len(), c.keep, out);
                        out.extend_from_slice(body);
                    }
                    finish(c.keep, fed);
                }
            }
            match step {
                Step::Head => match self.head(&data[pos..], out, fed, each) {
                    Step::Used(n) => pos += n,
                    _ => break,
                },
                Step::Used(n) => pos += n,
                Step::More => break,
            }
        }
        if fed.close {
            data.len()
        } else {
            pos
        }
    }

    /// Starts an event stream's response (a HEAD gets its head only): chunked over HTTP/1.1,
    /// ended by the close over HTTP/1.0. The request counts as answered now.
    fn stream(
        &mut self,
        stream: Box<EventStream>,
        get: bool,
        h: &Head,
        out: &mut Vec<u8>,
        fed: &mut Fed,
        n: usize,
    ) -> Step {
        let chunked = !h.http10;
        out.extend_from_slice(STREAM_HEAD);
        if chunked {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
        }
        let keep = h.keep && chunked;
        out.extend_from_slice(if keep { KEEP } else { CLOSE });
        out.extend_from_slice(b"\r\n");
        fed.requests += 1;
        if !get {
            fed.close |= !keep;
            return Step::Used(n);
        }
        let mut stream = stream;
        stream.open();
        self.state = State::Streaming { stream, keep, chunked };
        Step::Used(n)
    }

    /// Parses a request head at the start of `data` and answers or starts its body.
    fn head<F: Each + ?Sized>(&mut self, data: &[u8], out: &mut Vec<u8>, fed: &mut Fed, each: &mut F) -> Step {
        match parse::parse(data) {
            Parsed::More => Step::More,
            Parsed::Refused(r) => refuse(r, out, fed),
            Parsed::Read(read) => self.request(read, out, fed, each),
        }
    }

    /// Answers the request whose head was read, or starts its body.
    fn request<F: Each + ?Sized>(&mut self, read: Read<'_>, out: &mut Vec<u8>, fed: &mut Fed, each: &mut F) -> Step {
        let Read {
            method,
            target,
            head: h,
            len: n,
        } = read;
        let echo = matches!(method, b"POST" | b"PUT");
        if h.content_length.is_some_and(|n| n > self.max_body) {
            return refuse(Refusal::TooLarge, out, fed);
        }
        // The request's own work, before its response is written.
        let served = matches!(method, b"GET" | b"HEAD" | b"POST" | b"PUT");
        let bodiless = !h.chunked && h.content_length.unwrap_or(0) == 0;
        let deferrable = bodiless && matches!(method, b"GET" | b"HEAD");
        let answer = match served {
            true => each.request(Request { target, deferrable }, out),
            false => Answer::Serve,
        };
        match answer {
            Answer::Refuse => return refuse(Refusal::BadRequest, out, fed),
            Answer::Later(Later::Stream(stream)) if deferrable => {
                return self.stream(stream, method == b"GET", &h, out, fed, n);
            }
            Answer::Later(Later::Pending(ticket)) if deferrable => {
                let (get, keep) = (method == b"GET", h.keep);
                self.state = State::Waiting { ticket, get, keep };
                return Step::Used(n);
            }
            _ => {}
        }
        if h.continue_expected && (h.chunked || h.content_length.is_some_and(|n| n > 0)) {
            out.extend_from_slice(CONTINUE);
        }
        let conn_line = if h.keep { KEEP } else { CLOSE };
        match method {
            b"GET" | b"HEAD" => ok_response(method == b"GET", h.keep, out),
            // The echo's head goes out with the first body byte (or now, for an empty body).
            b"POST" | b"PUT" if !h.chunked && h.content_length.unwrap_or(0) == 0 => echo_head(0, h.keep, out),
            b"POST" | b"PUT" => {}
            _ => {
                out.extend_from_slice(NOT_ALLOWED_HEAD);
                out.extend_from_slice(conn_line);
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(NOT_ALLOWED_BODY);
            }
        }
        self.state = if h.chunked {
            State::Chunked(Box::new(Chunked {
                phase: Phase::Size,
                body: echo.then(Vec::new),
                size: 0,
                keep: h.keep,
            }))
        } else {
            match h.content_length.unwrap_or(0) {
                0 => {
                    finish(h.keep, fed);
                    State::Head
                }
                left => State::Body {
                    left,
                    echo,
                    keep: h.keep,
                    announce: true,
                },
            }
        };
        Step::Used(n)
    }
}

impl Protocol for HttpSession {
    /// Part of a request head has arrived, not all of it.
    fn head_pending(&self) -> bool {
        matches!(self.state, State::Head) && !self.buf.is_empty()
    }

    /// Input held back at the bound on output, to go on with.
    fn holding(&self) -> bool {
        self.held
    }

    /// Consumes `input`, answering every request in it; `each` sees each request (its target)
    /// right before its response is written, and may refuse it (400). Stops where
    /// [`Each::room`] says the output is full, keeping the rest.
    fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut fed = Fed::default();
        if matches!(self.state, State::Closed) {
            fed.close = true;
            return fed;
        }
        self.held = false;
        if self.buf.is_empty() {
            // Fast path: work straight from the read buffer, keep only an incomplete tail.
            let used = self.run(input, out, &mut fed, each);
            self.buf.extend_from_slice(&input[used..]);
        } else {
            let mut data = std::mem::take(&mut self.buf);
            data.extend_from_slice(input);
            let used = self.run(&data, out, &mut fed, each);
            data.drain(..used);
            self.buf = data;
        }
        if fed.close {
            self.state = State::Closed;
            self.held = false;
            self.buf = Vec::new();
        }
        fed
    }

    /// A response is owed later (an event stream, or one waiting for its work).
    fn owes(&self) -> bool {
        matches!(self.state, State::Streaming { .. } | State::Waiting { .. })
    }

    /// The ticket of the response waiting for its work, if one is.
    fn tickets(&self) -> Vec<u64> {
        match self.state {
            State::Waiting { ticket, .. } => vec![ticket],
            _ => Vec::new(),
        }
    }

    /// HTTP/1.x has no streams to reset: a response owed is cancelled only by the close.
    fn cancelled(&mut self) -> Vec<u64> {
        Vec::new()
    }

    /// Input waits behind a response owed later: requests are answered in order, so nothing
    /// more is read until it has gone (the connection stops reading; TCP holds the rest).
    fn paused(&self) -> bool {
        self.owes()
    }

    /// Bytes of input the session holds, not consumed yet.
    fn behind(&self) -> usize {
        self.buf.len()
    }

    /// When the event stream going out has its next event due.
    fn due(&self) -> Option<std::time::Instant> {
        match &self.state {
            State::Streaming { stream, .. } => stream.due(),
            _ => None,
        }
    }

    /// Writes the events due at `now`, as far as [`Each::room`] lets them; once the stream has
    /// ended, the requests pipelined behind it are answered.
    fn advance_each<F: Each + ?Sized>(&mut self, now: std::time::Instant, out: &mut Vec<u8>, each: &mut F) -> Fed {
        let State::Streaming { stream, keep, chunked } = &mut self.state else {
            return Fed::default();
        };
        while stream.due().is_some_and(|d| d <= now) && each.room(out.len()) > 0 {
            let at = out.len();
            if *chunked {
                let _ = write!(out, "{:x}\r\n", stream.next_len());
            }
            stream.next_event(now, out);
            if *chunked {
                out.extend_from_slice(b"\r\n");
            }
            debug_assert!(out.len() > at);
        }
        if !stream.done() {
            return Fed::default();
        }
        if *chunked {
            out.extend_from_slice(b"0\r\n\r\n");
        }
        let mut fed = Fed::default();
        if *keep && *chunked {
            self.state = State::Head;
            // What was pipelined behind the stream.
            fed = self.feed_each(&[], out, each);
        } else {
            fed.close = true;
            self.state = State::Closed;
            self.buf = Vec::new();
        }
        fed
    }

    /// Writes the response `ticket` stands for (its work is done), then answers what was
    /// pipelined behind it.
    fn complete_each<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed {
        let State::Waiting { ticket: t, get, keep } = self.state else {
            return Fed::default();
        };
        if t != ticket {
            return Fed::default();
        }
        ok_response(get, keep, out);
        let mut fed = Fed::default();
        finish(keep, &mut fed);
        if fed.close {
            self.state = State::Closed;
            self.buf = Vec::new();
            return fed;
        }
        self.state = State::Head;
        fed.add(self.feed_each(&[], out, each));
        fed
    }

    /// The connection closes for a reason of its own (not a stopping server): a response
    /// still going out ends without its last chunk (a cut stream looks cut: the client sees
    /// the close, never a complete response), and nothing more is read.
    fn cut(&mut self, _: &mut Vec<u8>) {
        if !matches!(self.state, State::Head) {
            self.state = State::Closed;
            self.buf = Vec::new();
        }
    }

    /// What a stopping server sends: the end of an event stream going out.
    fn farewell(&mut self, out: &mut Vec<u8>) {
        if let State::Streaming { chunked: true, .. } = self.state {
            out.extend_from_slice(b"0\r\n\r\n");
        }
        if matches!(self.state, State::Streaming { .. }) {
            self.state = State::Closed;
        }
    }

    /// Gives up the input buffer a burst or a large head grew, once it is empty (an idle
    /// connection's): the bytes given up.
    fn trim(&mut self) -> usize {
        crate::proto::shed(&mut self.buf, SPARE)
    }

    /// Every HTTP/1.x answer is this thread's to write (an owed one waits in its place, and
    /// the session reads nothing meanwhile).
    fn answers_owed(&self) -> bool {
        false
    }

    fn output_gone(&mut self, _: usize) {}

    /// HTTP/1.x has no flow-control window: TCP's is the only one.
    fn window_held(&self) -> bool {
        false
    }

    /// The 408 a request head that timed out gets before the close.
    fn timeout_response(&self) -> &'static [u8] {
        REQUEST_TIMEOUT
    }
}

/// A request is answered: count it; end the connection after it unless kept alive.
fn finish(keep: bool, fed: &mut Fed) {
    fed.requests += 1;
    fed.close |= !keep;
}

/// Answers with a refusal; it counts as a request answered, and the connection ends here.
fn refuse(r: Refusal, out: &mut Vec<u8>, fed: &mut Fed) -> Step {
    r.write(out);
    finish(false, fed);
    Step::More
}
