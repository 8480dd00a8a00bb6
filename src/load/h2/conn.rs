//! One connection's HTTP/2 session ([`H2Conn`]): the streams it opened, the server's settings
//! and windows, ours, and what it writes (the preface, each request's HEADERS and DATA); what
//! it reads is in `read`. What the client session (`load::client`) must act on comes out as [`Event`]s, a broken
//! connection as a [`Fault`].

use std::fmt;
use std::sync::Arc;

use super::encoder::Encoder;
use super::figures::Counts;
use super::violation::Violation;
use super::H2Plan;
use crate::load::{pattern, Payload};
use crate::proto::h2::frame::{self, ReadError, Reader};
use crate::proto::h2::hpack;
use crate::proto::h2::window::{Inflow, Window};

/// Our receive windows, per stream and for the connection: large, so a server never waits on
/// this client (h2load's default is the same, 2^30 - 1).
pub const RECV_WINDOW: u32 = (1 << 30) - 1;
/// The server's limit until its SETTINGS say otherwise (RFC 9113 6.5.2: unlimited; this
/// client opens one stream before they come, see `room`).
const ASSUMED_STREAMS: u32 = u32::MAX;
/// The largest response header list we accept.
pub(super) const MAX_HEADER_LIST: usize = 64 * 1024;
/// The last client stream identifier (2^31 - 1): a connection that reaches it is done.
pub(super) const LAST_ID: u32 = 0x7fff_ffff;

/// What the client session (`load::client::H2`) must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Stream `id` got its whole response.
    Done { id: u32, status: u16 },
    /// The server refused stream `id` (REFUSED_STREAM): it did not process it; it may be sent again.
    Refused { id: u32 },
    /// The server reset stream `id` with another error `code`.
    Reset { id: u32, code: u32 },
    /// GOAWAY: streams above `last` were not processed and are forgotten here; no new stream
    /// may open on this connection.
    GoAway { last: u32, code: u32 },
    /// Body bytes of stream `id`, an event stream: `H2Conn::streamed[from..to]`.
    Data { id: u32, from: u32, to: u32 },
}

/// The connection cannot go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The server's frames do not read (the reader's error, with the protocol error code it
    /// calls for).
    Frame(ReadError),
    /// The server broke the protocol otherwise (what it did).
    Violation(Violation),
    /// An echoed body differs from the one sent.
    Mismatch,
}

impl From<ReadError> for Fault {
    fn from(e: ReadError) -> Fault {
        Fault::Frame(e)
    }
}

impl From<Violation> for Fault {
    fn from(v: Violation) -> Fault {
        Fault::Violation(v)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fault::Frame(e) => match e {
                ReadError::FrameTooLarge => "a frame larger than SETTINGS_MAX_FRAME_SIZE",
                ReadError::StreamZero => "HEADERS on stream 0",
                ReadError::Padding(_) => "bad padding",
                ReadError::ShortPriority => "a HEADERS frame too short for its priority",
                ReadError::ContinuationExpected => "a header block not followed by its CONTINUATION",
                ReadError::ContinuationElsewhere => "a CONTINUATION on another stream",
                ReadError::StrayContinuation => "a CONTINUATION without a header block",
                ReadError::BlockTooLarge => "a response header block over 64 KiB",
                ReadError::TooManyContinuations => "a response header block in more than 64 CONTINUATION frames",
            },
            Fault::Violation(v) => return write!(f, "{v}"),
            Fault::Mismatch => "an echoed body that differs from the one sent",
        })
    }
}

impl std::error::Error for Fault {}

/// A stream this client opened and that has not ended.
#[derive(Debug, Clone)]
pub(super) struct Stream {
    pub(super) id: u32,
    pub(super) class: u8,
    /// The request's sequence number on its slot (its generated body).
    pub(super) seq: u64,
    /// Body bytes sent, and still to send.
    pub(super) body_off: usize,
    pub(super) body_left: usize,
    /// Our send window on it.
    pub(super) window: Window,
    /// The final response's status (0 until its head came).
    pub(super) status: u16,
    /// Its response is an event stream: its body bytes are handed out ([`Event::Data`]).
    pub(super) event_stream: bool,
    pub(super) content_length: Option<u64>,
    /// Body bytes received; the window we grant it, given back at half.
    pub(super) received: u64,
    pub(super) recv: Inflow,
}

/// The most bytes of PING and SETTINGS acknowledgements the client queues while the server
/// does not read: twice what one read of a flood of PINGs asks for (the engine reads 256 KiB),
/// so a server that reads is never cut off, and one that does not cannot grow the client past
/// it.
pub(crate) const MAX_ACKS_WAITING: usize = 512 * 1024;

/// One connection's HTTP/2 session.
#[derive(Debug)]
pub struct H2Conn {
    pub(super) plan: Arc<H2Plan>,
    /// The slot (generated bodies depend on it).
    pub(super) slot: u64,
    pub(super) streams: Vec<Stream>,
    pub(super) next_id: u32,
    /// The server's SETTINGS.
    pub(super) max_streams: u32,
    pub(super) initial_window: i64,
    pub(super) max_frame: usize,
    /// Our send window on the connection.
    pub(super) send_window: Window,
    /// The window we grant the server on the connection, given back at half.
    pub(super) recv: Inflow,
    /// The server's preface (a SETTINGS frame) has come.
    pub(super) settings_seen: bool,
    /// GOAWAY's last stream.
    pub(super) goaway: Option<u32>,
    /// The server's frames, a header block assembled from HEADERS and its CONTINUATIONs.
    pub(super) reader: Reader,
    pub(super) decoder: hpack::Decoder,
    pub(super) encoder: Encoder,
    /// Some stream has body bytes its window held back.
    pub(super) blocked: bool,
    /// Bytes of PING and SETTINGS acknowledgements queued since the output was last empty:
    /// past [`MAX_ACKS_WAITING`] the server is flooding us faster than it reads.
    pub(super) acks_waiting: usize,
    pub(super) scratch: Vec<u8>,
    pub counts: Counts,
    /// Event streams' body bytes of the last input, which [`Event::Data`] points into.
    pub streamed: Vec<u8>,
}

impl H2Conn {
    pub fn new(plan: Arc<H2Plan>, slot: u64) -> H2Conn {
        let classes = plan.classes.len();
        H2Conn {
            plan,
            slot,
            streams: Vec::new(),
            next_id: 1,
            max_streams: ASSUMED_STREAMS,
            initial_window: frame::INITIAL_WINDOW,
            max_frame: frame::MAX_FRAME,
            send_window: Window::new(frame::INITIAL_WINDOW),
            recv: Inflow::new(RECV_WINDOW),
            settings_seen: false,
            goaway: None,
            // CONTINUATIONs capped as the server caps them: endless empty ones end the connection.
            reader: Reader::new(MAX_HEADER_LIST, crate::proto::h2::MAX_CONTINUATIONS),
            decoder: hpack::Decoder::new(),
            encoder: Encoder::new(classes),
            blocked: false,
            acks_waiting: 0,
            scratch: Vec::new(),
            streamed: Vec::new(),
            counts: Counts::default(),
        }
    }

    /// A new socket: everything about the last one is forgotten (the counts stay).
    pub fn reset(&mut self) {
        let counts = self.counts;
        *self = H2Conn::new(self.plan.clone(), self.slot);
        self.counts = counts;
    }

    /// The client's preface: the magic, our SETTINGS (no push, large windows) and the
    /// connection window opened as wide.
    pub fn start(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(frame::PREFACE);
        frame::settings(
            out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_MAX_CONCURRENT_STREAMS, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, RECV_WINDOW),
            ],
        );
        frame::window_update(out, 0, RECV_WINDOW - frame::INITIAL_WINDOW as u32);
        self.counts.frames_out += 2;
    }

    /// How many more streams may open now: the server's limit; one until its SETTINGS say
    /// what that is (the first request need not wait a round trip, and no stream is sent that
    /// a lower limit would refuse); none after GOAWAY.
    pub fn room(&self) -> usize {
        if self.closing() {
            return 0;
        }
        let max = if self.settings_seen { self.max_streams } else { 1 };
        (max as usize).saturating_sub(self.streams.len())
    }

    /// No new stream may open: the server said GOAWAY, or the identifiers ran out.
    pub fn closing(&self) -> bool {
        self.goaway.is_some() || self.next_id > LAST_ID
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// Stream `id`'s response head said it is an event stream (none of its events may have
    /// come yet).
    pub fn is_event_stream(&self, id: u32) -> bool {
        self.streams.iter().any(|s| s.id == id && s.event_stream)
    }

    /// Opens a stream for request `seq` of `class`, writing its HEADERS (and what the windows
    /// allow of its body) to `out`; returns its identifier.
    pub fn open(&mut self, out: &mut Vec<u8>, class: u8, seq: u64) -> u32 {
        let id = self.next_id;
        self.next_id += 2;
        let c = &self.plan.classes[usize::from(class)];
        let body = c.payload.len();
        let at = out.len();
        out.extend_from_slice(&[0; frame::HEADER_LEN]);
        self.encoder.encode(&self.plan.classes, class, out);
        let len = out.len() - at - frame::HEADER_LEN;
        let flags = frame::END_HEADERS | if body == 0 { frame::END_STREAM } else { 0 };
        let mut head = Vec::with_capacity(frame::HEADER_LEN);
        frame::head(&mut head, len, frame::HEADERS, flags, id);
        out[at..at + frame::HEADER_LEN].copy_from_slice(&head);
        self.counts.frames_out += 1;
        self.counts.request_block += len as u64;
        self.counts.request_text += c.text;
        self.streams.push(Stream {
            id,
            class,
            seq,
            body_off: 0,
            body_left: body,
            window: Window::new(self.initial_window),
            status: 0,
            event_stream: false,
            content_length: None,
            received: 0,
            recv: Inflow::new(RECV_WINDOW),
        });
        // A body goes behind those the windows hold back (oldest first, see `pump`), as far
        // as the windows let it now.
        if body > 0 && !self.blocked {
            let last = self.streams.len() - 1;
            self.send_body(last, out);
        } else if body > 0 {
            self.pump(out);
        }
        id
    }

    /// Sends what the windows allow of stream `k`'s body.
    fn send_body(&mut self, k: usize, out: &mut Vec<u8>) {
        let s = &mut self.streams[k];
        while s.body_left > 0 {
            let n = s
                .body_left
                .min(s.window.room())
                .min(self.send_window.room())
                .min(self.max_frame);
            if n == 0 {
                self.blocked = true;
                return;
            }
            let end = n == s.body_left;
            frame::head(out, n, frame::DATA, if end { frame::END_STREAM } else { 0 }, s.id);
            let at = out.len();
            match &self.plan.classes[usize::from(s.class)].payload {
                Payload::Fixed(b) => out.extend_from_slice(&b[s.body_off..s.body_off + n]),
                _ => {
                    out.resize(at + n, 0);
                    pattern(self.slot, s.seq, s.body_off, &mut out[at..]);
                }
            }
            s.body_off += n;
            s.body_left -= n;
            s.window.spend(n);
            self.send_window.spend(n);
            self.counts.frames_out += 1;
        }
    }

    /// Sends the bodies windows held back, as far as they now allow, oldest stream first (the
    /// streams are kept in the order they opened).
    pub(super) fn pump(&mut self, out: &mut Vec<u8>) {
        if !std::mem::take(&mut self.blocked) {
            return;
        }
        for k in 0..self.streams.len() {
            if self.streams[k].body_left > 0 {
                self.send_body(k, out);
            }
        }
    }
}
