//! The contract every protocol's session keeps with the server that feeds it: the hook a
//! session calls per request ([`Each`], [`Request`], [`Answer`]), what one feed produced
//! ([`Fed`]), a connection's limits ([`Limits`]), and how an idle session sheds its buffers.

use super::keyed;
use super::later;
use super::{Calm, Cause};

/// The largest request body by default (`--max-body`).
pub const MAX_BODY: usize = 1024 * 1024;

/// Drops the spans a command with many arguments grew (an idle connection's): the bytes
/// given up.
pub(crate) fn shed_spans(spans: &mut Vec<(u32, u32)>) -> usize {
    let cap = spans.capacity();
    if !spans.is_empty() || cap <= 64 {
        return 0;
    }
    *spans = Vec::new();
    cap * std::mem::size_of::<(u32, u32)>()
}

/// Drops `buf`'s allocation when it is empty and holds more than `keep` bytes: the bytes given
/// up (what an idle connection's buffers shed).
pub fn shed(buf: &mut Vec<u8>, keep: usize) -> usize {
    let cap = buf.capacity();
    if !buf.is_empty() || cap <= keep {
        return 0;
    }
    *buf = Vec::new();
    cap
}

/// A request about to be answered, as a server's hook sees it ([`Session::feed_each`](super::Protocol::feed_each)).
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// HTTP's request target (path and query); empty for echo and packet.
    pub target: &'a [u8],
    /// The session can answer it later ([`later::Later::Pending`]): a GET or HEAD without a
    /// body.
    pub deferrable: bool,
}

/// What a server's hook says about a request.
#[derive(Debug)]
pub enum Answer {
    /// Answer it as the protocol does.
    Serve,
    /// Refuse it: HTTP's 400, and the connection closes (echo and packet serve it anyway).
    Refuse,
    /// Its response finishes later ([`later`]): a GET's head now, its body as it comes (HEAD
    /// gets the head only; the other methods and echo and packet are served as usual).
    Later(later::Later),
}

/// The model's hook in a session's `feed`: one bound for every protocol.
///
/// - [`Each::request`] is called for each request right before its response is written (its
///   per-request work, a refusal).
/// - [`Each::room`] says how much more output the connection takes (`--max-output`). A
///   session asks before each request, echoed byte and frame; at 0 it stops consuming input,
///   mid-buffer, keeps the rest ([`Session::holding`](super::Protocol::holding)) and goes on when fed again, with or
///   without new bytes, once the output has drained.
pub trait Each {
    fn request(&mut self, req: Request<'_>, out: &mut Vec<u8>) -> Answer;

    /// Bytes of output the connection still takes when the session's output buffer holds
    /// `pending` unsent bytes. 0 only while output is unsent, in the buffer or handed on (a
    /// ring's send in flight), whose going resumes the session: a session fed with nothing
    /// pending anywhere makes progress.
    fn room(&self, pending: usize) -> usize {
        let _ = pending;
        usize::MAX
    }

    /// A keyed command (RESP, memcache) about to be answered: the hook runs it against its
    /// store, answering through `replies` in the session's protocol, and says what it found.
    /// Without a store every command is answered with an error.
    fn command(&mut self, op: keyed::Op<'_>, replies: &mut dyn keyed::Replies) -> keyed::Outcome {
        let _ = op;
        replies.error(keyed::KeyedError::NoStore);
        keyed::Outcome {
            error: true,
            ..Default::default()
        }
    }

    /// The answer another thread gave for `ticket` (a keyed command answered later), once:
    /// what a completion brings ([`Session::complete_each`](super::Protocol::complete_each)).
    fn answer(&mut self, ticket: u64) -> Option<keyed::Answered> {
        let _ = ticket;
        None
    }

    /// Asks the thread holding the rest of an answer it built in part (its connection's
    /// room ran out) for more: only a hook that sends commands elsewhere gets answers in part.
    fn again(&mut self, again: keyed::Again) {
        unreachable!(
            "an answer in part ({}) with no thread to ask for the rest",
            again.ticket
        )
    }

    /// Nothing of the connection's output is held beyond what the session sees (TLS holds
    /// its records): the client has read everything the session wrote once its own output
    /// has gone.
    fn sent_all(&self) -> bool {
        true
    }
}

/// The hook that serves every request, with no bound on output: what [`Session::feed`](super::Session::feed) uses.
pub struct ServeAll;

impl Each for ServeAll {
    #[inline]
    fn request(&mut self, _: Request<'_>, _: &mut Vec<u8>) -> Answer {
        Answer::Serve
    }
}

/// What one call to [`Session::feed`](super::Session::feed) produced besides output bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fed {
    /// Requests (HTTP requests, echo reads, packet frames) answered by this call.
    pub requests: u64,
    /// The connection must be closed once the output is written.
    pub close: bool,
    /// HTTP/2 streams this call opened, refused and reset.
    pub streams: StreamCounts,
    /// HTTP/2 frames this call read, and those of them that produced no output (see
    /// [`Fed::quiet`]).
    pub frames: u32,
    pub quiet_frames: u32,
    /// HTTP/2: the budget the connection went past (it ends with GOAWAY ENHANCE_YOUR_CALM).
    pub calm: Option<Cause>,
    /// Keyed commands answered with an error (unknown, malformed, past a bound, or failed in
    /// the store).
    pub errors: u32,
}

/// HTTP/2 streams opened, refused (over the concurrency limit) and reset (by either side).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamCounts {
    pub opened: u32,
    pub refused: u32,
    pub reset: u32,
}

impl Fed {
    pub(crate) fn add(&mut self, other: Fed) {
        self.requests += other.requests;
        self.close |= other.close;
        self.streams.opened += other.streams.opened;
        self.streams.refused += other.streams.refused;
        self.streams.reset += other.streams.reset;
        self.frames += other.frames;
        self.quiet_frames += other.quiet_frames;
        self.calm = self.calm.or(other.calm);
        self.errors += other.errors;
    }

    /// The input was only frames that produce no output (HTTP/2): it asked nothing of the
    /// server, so it does not count as the connection's activity (the idle timer runs on).
    pub fn quiet(&self) -> bool {
        self.frames > 0 && self.quiet_frames == self.frames
    }
}

/// A server's limits on one connection's session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest request body (`--max-body`).
    pub max_body: usize,
    /// Output the session may hold for a client that does not take it (`--max-output`).
    pub max_output: usize,
    /// HTTP/2 streams open at once (`--max-streams`).
    pub max_streams: u32,
    /// HTTP/2's budgets per connection (`--h2-client-resets`, `--h2-server-resets`,
    /// `--h2-quiet-frames`).
    pub calm: Calm,
    /// The largest value a keyed command may carry (`--max-value`).
    pub max_value: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body: MAX_BODY,
            max_output: 256 * 1024,
            max_streams: 100,
            calm: Calm::default(),
            max_value: 1024 * 1024,
        }
    }
}

/// What a server asks of a connection's session, whatever its protocol: feed it input, step
/// its later answers, ask what it holds and owes, and end it. Every protocol's session keeps
/// it in its own folder (HTTP/1.1, HTTP/2, echo, packet, RESP and memcache, the last two
/// answering from their shared keyed core); [`Detect`](super::Detect) keeps it while it
/// decides, and TLS keeps it around what a connection speaks (`TlsSession`). [`Session`](super::Session) forwards every
/// method to the session chosen, in one dispatch with no arm for "the others". No method has
/// a default: a session answers each, so a protocol that forgot one does not build.
pub trait Protocol: std::fmt::Debug + Sized {
    /// Serves `input`: appends the responses to `out`, calling `each` for every request.
    fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed;

    /// Steps the answers due by `now` (event streams' next pieces).
    fn advance_each<F: Each + ?Sized>(&mut self, now: std::time::Instant, out: &mut Vec<u8>, each: &mut F) -> Fed;

    /// The work behind `ticket` is done (another thread's): its answer goes out in order.
    fn complete_each<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed;

    /// Inside a request head not complete yet (what `--header-timeout` limits).
    fn head_pending(&self) -> bool;

    /// Input is held back until output drains (`--max-output`).
    fn holding(&self) -> bool;

    /// Drops the buffers an idle session grew: the bytes given up.
    fn trim(&mut self) -> usize;

    /// When the next later answer is due.
    fn due(&self) -> Option<std::time::Instant>;

    /// Answers are owed: a later response is in progress.
    fn owes(&self) -> bool;

    /// Answers are owed that other threads are running.
    fn answers_owed(&self) -> bool;

    /// All the output went (the client read it), under a bound of `bound` bytes: the threads
    /// building answers owed may use the room it left.
    fn output_gone(&mut self, bound: usize);

    /// The session reads no more input for now (its client's window or its own bound).
    fn paused(&self) -> bool;

    /// Output waits for the client's flow-control window (HTTP/2).
    fn window_held(&self) -> bool;

    /// Bytes of output the session holds that the client has not taken.
    fn behind(&self) -> usize;

    /// The tickets of work still running for this session.
    fn tickets(&self) -> Vec<u64>;

    /// The tickets whose answers the session no longer wants (their streams were reset).
    fn cancelled(&mut self) -> Vec<u64>;

    /// What a connection closed for a reason of its own sends: a response in progress, cut.
    fn cut(&mut self, out: &mut Vec<u8>);

    /// What a stopping server sends before it closes the connection.
    fn farewell(&mut self, out: &mut Vec<u8>);

    /// What to send a client whose request head timed out, before closing (HTTP/1.x's 408;
    /// the others nothing: the connection just closes).
    fn timeout_response(&self) -> &'static [u8];
}

/// A session TLS can wrap whose protocol may be chosen by the handshake's ALPN.
pub trait Negotiate: Protocol {
    /// The session TLS's ALPN chose (`h2` or `http/1.1`), where this one was waiting to be
    /// decided by its first bytes; `None` leaves it as it is.
    fn for_alpn(&self, alpn: Option<&[u8]>) -> Option<Self>;
}
