//! One HTTP/2 connection's session ([`H2Session`]): the preface, the frames read and what
//! each does, its streams and windows, and what a server asks of it. Its frames' handling by
//! kind lives beside it: `headers`, `data`, `control`.

use super::budget::Budgets;
use super::frame::{Code, Frame, ReadError, Reader};
use super::stream::Closed;
use super::streams::Streams;
use super::window::{recv_window, Inflow, Window};
use super::{frame, hpack};
use crate::proto::Cause;
use crate::proto::Later;
use std::time::Instant;

use crate::proto::http::MAX_HEAD;
use crate::proto::{Each, Fed, Limits, Protocol};

/// The largest header block (HEADERS and its CONTINUATIONs) accepted, encoded: past it the
/// connection ends with ENHANCE_YOUR_CALM.
const MAX_BLOCK: usize = 64 * 1024;
/// The most CONTINUATION frames one header block may take (an endless run of empty ones is
/// the CONTINUATION flood).
pub const MAX_CONTINUATIONS: usize = 64;
/// Recently closed streams remembered, to tell a frame on a closed stream from one on a
/// stream identifier never used: at least this many, and twice `--max-streams` (a client's
/// DATA for every stream we refused may still be in flight).
const REMEMBERED: usize = 64;
/// The largest decoded header list (what an HPACK block may expand to) before the connection
/// ends with ENHANCE_YOUR_CALM: a few bytes referring to a large table entry again and again
/// must not cost the server megabytes of copying.
pub(super) const MAX_DECODED: usize = 64 * 1024;

/// Where the connection is in the frame stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// This many bytes of the client preface still to check.
    Preface(usize),
    Frames,
    /// A connection error sent GOAWAY: everything after is ignored.
    Dead,
}

/// Why the frames of one input stopped being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Halt {
    /// A connection error: GOAWAY with this code.
    Error(Code),
    /// The client said GOAWAY and its streams are done: ours, and close.
    Done,
    /// The output is at its bound ([`Each::room`]): the rest of the input waits.
    Hold,
}

impl From<ReadError> for Halt {
    fn from(e: ReadError) -> Halt {
        Halt::Error(e.code())
    }
}

impl From<Code> for Halt {
    fn from(c: Code) -> Halt {
        Halt::Error(c)
    }
}

/// One connection's HTTP/2 state.
#[derive(Debug)]
pub struct H2Session {
    pub(super) limits: Limits,
    pub(super) phase: Phase,
    /// Our SETTINGS went out; the client's first SETTINGS came.
    pub(super) greeted: bool,
    pub(super) settings_seen: bool,
    pub(super) reader: Reader,
    pub(super) decoder: hpack::Decoder,
    pub(super) streams: Streams,
    /// The client's SETTINGS.
    pub(super) peer_initial_window: i64,
    pub(super) peer_max_frame: usize,
    /// The connection's windows: what we may send, and what the client may (with the credit
    /// its DATA used, granted back at half).
    pub(super) send_window: Window,
    pub(super) recv: Inflow,
    /// Response bytes held for window, over all streams.
    pub(super) held: usize,
    /// The client sent GOAWAY: its streams go on, new ones are refused, and once they are done
    /// the connection closes.
    pub(super) peer_gone: bool,
    /// The request path of the block being decoded.
    pub(super) path: Vec<u8>,
    /// The budgets for floods, the one the connection went past, and the frames so far that
    /// produced no output.
    pub(super) budgets: Budgets,
    /// The last feed stopped at the bound on output: the reader holds frames to go on with.
    pub(super) holding: bool,
    /// Window was not granted back while the held output was at `max_output`: granted once
    /// it is under it again, whatever brought it there.
    pub(super) withheld: bool,
    /// The client acknowledged our SETTINGS: until then a stream's credit goes back at half
    /// the RFC's window, which a client that has not applied ours still assumes.
    pub(super) settings_acked: bool,
    /// Tickets of responses that waited for work and whose streams closed first.
    pub(super) cancelled: Vec<u64>,
    /// How long `out` may grow this feed ([`Each::room`]); body bytes the windows let go past
    /// it wait (`releasing`) for the next feed.
    pub(super) cap: usize,
    pub(super) releasing: bool,
}

impl H2Session {
    /// A session after the client's preface (`preface`: still to be checked here).
    pub fn new(limits: Limits, preface: bool) -> H2Session {
        H2Session {
            limits,
            phase: if preface {
                Phase::Preface(frame::PREFACE.len())
            } else {
                Phase::Frames
            },
            greeted: false,
            settings_seen: false,
            reader: Reader::new(MAX_BLOCK, MAX_CONTINUATIONS),
            decoder: hpack::Decoder::new(),
            streams: Streams::new(
                limits.max_streams as usize,
                REMEMBERED.max(2 * limits.max_streams as usize),
                recv_window(limits.max_output),
            ),
            peer_initial_window: frame::INITIAL_WINDOW,
            peer_max_frame: frame::MAX_FRAME,
            send_window: Window::new(frame::INITIAL_WINDOW),
            recv: Inflow::new(recv_window(limits.max_output)),
            held: 0,
            peer_gone: false,
            path: Vec::new(),
            budgets: Budgets::new(limits.calm),
            holding: false,
            withheld: false,
            settings_acked: false,
            cancelled: Vec::new(),
            cap: usize::MAX,
            releasing: false,
        }
    }

    /// Response bytes held for the client's window.
    pub fn held(&self) -> usize {
        self.held
    }

    /// After the client's GOAWAY, the connection ends once its last stream is done, whatever
    /// ended it (a response that finished later, an event stream's last event, input).
    pub(super) fn after_goaway(&mut self, out: &mut Vec<u8>, fed: &mut Fed) {
        if self.peer_gone && self.streams.is_empty() && self.phase == Phase::Frames {
            frame::goaway(out, self.streams.last_id(), Code::NoError);
            self.phase = Phase::Dead;
            fed.close = true;
        }
    }

    /// Grants the window held back at `max_output`, once the held output is under it.
    pub(super) fn grant_withheld(&mut self, out: &mut Vec<u8>) {
        if self.withheld && self.held < self.limits.max_output && self.phase == Phase::Frames {
            self.grant(out, None);
        }
    }

    /// Our SETTINGS, once, first.
    pub(super) fn greet(&mut self, out: &mut Vec<u8>) {
        if !self.greeted {
            self.greeted = true;
            let window = recv_window(self.limits.max_output);
            let ours = [
                (frame::SETTINGS_MAX_CONCURRENT_STREAMS, self.limits.max_streams),
                (frame::SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEAD as u32),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, window),
            ];
            // The RFC's initial window goes without saying.
            let wider = window - frame::INITIAL_WINDOW as u32;
            frame::settings(out, &ours[..if wider > 0 { 3 } else { 2 }]);
            if wider > 0 {
                frame::window_update(out, 0, wider);
            }
        }
    }

    pub(super) fn connection_error(&mut self, out: &mut Vec<u8>, code: Code, fed: &mut Fed) {
        self.greet(out);
        frame::goaway(out, self.streams.last_id(), code);
        self.phase = Phase::Dead;
        fed.close = true;
    }

    /// One frame or header block. `Err`: a connection error.
    pub(super) fn frame<F: Each + ?Sized>(
        &mut self,
        f: Frame<'_>,
        out: &mut Vec<u8>,
        each: &mut F,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        let (head, payload) = match f {
            Frame::Headers(block) => {
                self.client_settings_first(frame::HEADERS, 0)?;
                return self.headers(block, out, each, fed);
            }
            // A block's connection errors are known from its HEADERS: said at once, not after
            // its CONTINUATIONs.
            Frame::Opening(head) => {
                self.client_settings_first(frame::HEADERS, 0)?;
                return self.lands_on(head.stream).map(drop);
            }
            Frame::Single(head, payload) => (head, payload),
        };
        self.client_settings_first(head.kind, head.flags)?;
        match head.kind {
            frame::DATA => self.data(head, payload, out, fed),
            frame::PRIORITY => self.priority(head, payload, out, fed),
            frame::RST_STREAM => self.rst_stream(head, fed, out),
            frame::SETTINGS => self.settings(head, payload, out),
            frame::PUSH_PROMISE => Err(Code::Protocol),
            frame::PING => {
                self.budgets.quiet_frame();
                Self::ping(head, payload, out)
            }
            frame::GOAWAY => self.goaway_in(head),
            frame::WINDOW_UPDATE => self.window_update(head, payload, out, fed),
            // Unknown frame types are ignored (RFC 9113 4.1).
            _ => {
                self.budgets.quiet_frame();
                Ok(())
            }
        }
    }

    /// The client's preface ends with a SETTINGS frame (RFC 9113 3.4): its first frame must be
    /// one.
    pub(super) fn client_settings_first(&mut self, kind: u8, flags: u8) -> Result<(), Code> {
        if !self.settings_seen {
            if kind != frame::SETTINGS || flags & frame::ACK != 0 {
                return Err(Code::Protocol);
            }
            self.settings_seen = true;
        }
        Ok(())
    }

    /// A stream error: RST_STREAM with `code`; the stream, if open, is dropped. The client made
    /// the server reset it: counted against that budget (MadeYouReset).
    pub(super) fn reset(&mut self, out: &mut Vec<u8>, id: u32, code: Code, fed: &mut Fed) {
        frame::rst_stream(out, id, code);
        fed.streams.reset += 1;
        self.budgets.spend(Cause::ServerResets);
        match self.streams.find(id) {
            Some(i) => self.close(i, Closed::ResetByUs),
            None => self.streams.remember(id, Closed::ResetByUs),
        }
    }

    /// Closes the stream at `i`: what it held for window is no longer held.
    pub(super) fn close(&mut self, i: usize, how: Closed) {
        let (held, owed) = self.streams.close(i, how);
        if let Some(Later::Pending(t)) = owed {
            self.cancelled.push(t);
        }
        self.held -= held;
    }
}

impl Protocol for H2Session {
    /// Bytes in (any split), frames out.
    fn feed_each<F: Each + ?Sized>(&mut self, mut input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut fed = Fed::default();
        if let Phase::Preface(left) = self.phase {
            let done = frame::PREFACE.len() - left;
            let n = left.min(input.len());
            if input[..n] != frame::PREFACE[done..done + n] {
                self.connection_error(out, Code::Protocol, &mut fed);
                return fed;
            }
            input = &input[n..];
            self.phase = if n == left {
                Phase::Frames
            } else {
                Phase::Preface(left - n)
            };
            if n < left {
                return fed;
            }
        }
        if self.phase == Phase::Dead {
            fed.close = true;
            return fed;
        }
        self.greet(out);
        self.cap = out.len().saturating_add(each.room(out.len()));
        if std::mem::take(&mut self.releasing) {
            self.flush(out);
        }
        let mut reader = std::mem::take(&mut self.reader);
        let (frames, quiet) = (reader.frames(), self.budgets.quiet());
        let read = if each.room(out.len()) == 0 {
            reader.keep(input);
            Err(Halt::Hold)
        } else {
            reader.read(input, &mut |f| {
                self.frame(f, out, each, &mut fed)?;
                if self.budgets.tripped().is_some() {
                    // Past a budget: GOAWAY naming the last stream processed, then close.
                    return Err(Halt::Error(Code::EnhanceYourCalm));
                }
                if self.peer_gone && self.streams.is_empty() {
                    return Err(Halt::Done);
                }
                match each.room(out.len()) {
                    0 => Err(Halt::Hold),
                    _ => Ok(()),
                }
            })
        };
        self.holding = read == Err(Halt::Hold);
        fed.frames = (reader.frames() - frames) as u32;
        fed.quiet_frames = self.budgets.quiet().wrapping_sub(quiet);
        if fed.frames == 0 && !input.is_empty() {
            // Only part of a frame came (or input was held back): it is activity unless it is a
            // part of a frame that would ask nothing (a PING dribbled byte by byte keeps nothing
            // alive).
            fed.frames = 1;
            fed.quiet_frames = u32::from(!self.holding && reader.partial_is_quiet());
        }
        self.reader = reader;
        match read {
            Ok(()) | Err(Halt::Hold) => {}
            Err(Halt::Error(code)) => {
                // Counted by cause only where a budget ended it, not a protocol error that
                // came with the frame that spent the last of one.
                fed.calm = self.budgets.tripped().filter(|_| code == Code::EnhanceYourCalm);
                self.connection_error(out, code, &mut fed);
            }
            Err(Halt::Done) => {
                frame::goaway(out, self.streams.last_id(), Code::NoError);
                self.phase = Phase::Dead;
            }
        }
        self.grant_withheld(out);
        fed.close |= self.phase == Phase::Dead;
        fed
    }

    /// Writes the events due at `now` into their streams' DATA, as far as the windows, the
    /// output held for them (`max_output`) and [`Each::room`] let them; a stream whose events
    /// all went ends (END_STREAM).
    fn advance_each<F: Each + ?Sized>(&mut self, now: Instant, out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut fed = Fed::default();
        if self.phase != Phase::Frames {
            return fed;
        }
        self.cap = out.len().saturating_add(each.room(out.len()));
        let mut i = 0;
        while i < self.streams.len() {
            let s = self.streams.at(i);
            if !s.streams_events() {
                i += 1;
                continue;
            }
            let mut moved = false;
            while s.event_due().is_some_and(|d| d <= now)
                && self.held < self.limits.max_output
                && each.room(out.len()) > 0
            {
                self.held += s.next_event(now);
                moved = true;
            }
            if s.events_done() {
                self.streams.settle(i);
                moved = true;
            }
            if moved && self.flush_stream(i, out) {
                continue; // closed: another stream moved into its place
            }
            i += 1;
        }
        self.grant_withheld(out);
        self.after_goaway(out, &mut fed);
        fed
    }

    /// Writes the response waiting for `ticket` (its work done elsewhere), under the bound on
    /// output like any response (what the windows hold back goes later).
    fn complete_each<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed {
        self.cap = out.len().saturating_add(each.room(out.len()));
        let mut fed = self.complete_ticket(ticket, out);
        self.grant_withheld(out);
        self.after_goaway(out, &mut fed);
        fed
    }

    /// Inside the preface or a header block (what `--header-timeout` limits).
    fn head_pending(&self) -> bool {
        matches!(self.phase, Phase::Preface(_)) || self.reader.head_pending()
    }

    /// Input held back at the bound on output, or response bytes the windows let go that the
    /// bound held back: to go on with.
    fn holding(&self) -> bool {
        self.holding || self.releasing
    }

    /// Gives up what a burst of streams or a large header block grew, once it is not in use
    /// (an idle connection's): the bytes given up.
    fn trim(&mut self) -> usize {
        self.reader.trim() + self.decoder.trim() + crate::proto::shed(&mut self.path, 1024) + self.streams.trim()
    }

    /// When the next event of the event streams going out is due.
    /// `None` while the output held for the client's windows is at `max_output`: its
    /// WINDOW_UPDATE, which is input, lets the events go on.
    fn due(&self) -> Option<Instant> {
        if !self.streams.owes() || self.phase != Phase::Frames || self.held >= self.limits.max_output {
            return None;
        }
        (0..self.streams.len())
            .filter_map(|i| self.streams.get(i).event_due())
            .min()
    }

    /// A response is owed later on some stream (an event stream, or one waiting for its work).
    fn owes(&self) -> bool {
        self.streams.owes()
    }

    /// HTTP/2 never pauses: its other streams, window updates, pings and resets must flow,
    /// under its own bounds.
    fn paused(&self) -> bool {
        false
    }

    /// Every HTTP/2 answer is written here: a response owed waits on its stream, and a
    /// finished peer does not hold the close for it (its window may never come).
    fn answers_owed(&self) -> bool {
        false
    }

    fn output_gone(&mut self, _: usize) {}

    /// Response bytes wait for the client's window (none can go until it grants more).
    fn window_held(&self) -> bool {
        self.held > 0
    }

    /// Input is never held whole: frames are read as they come, under their own bounds.
    fn behind(&self) -> usize {
        0
    }

    /// Tickets of the responses waiting for their work.
    fn tickets(&self) -> Vec<u64> {
        self.streams.tickets()
    }

    /// Tickets of responses cancelled since the last call (their streams were reset first).
    fn cancelled(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.cancelled)
    }

    /// Ends the connection for a reason of its own (not a stopping server): every stream
    /// whose response has not ended is reset (RST_STREAM CANCEL: a response cut short looks
    /// cut, never ended), then GOAWAY naming the last stream served.
    fn cut(&mut self, out: &mut Vec<u8>) {
        if self.phase == Phase::Frames {
            self.greet(out);
            while !self.streams.is_empty() {
                let id = self.streams.get(0).id;
                frame::rst_stream(out, id, Code::Cancel);
                self.close(0, Closed::ResetByUs);
            }
            frame::goaway(out, self.streams.last_id(), Code::NoError);
            self.phase = Phase::Dead;
        }
    }

    /// Ends the connection politely: GOAWAY naming the last stream served (a server that is
    /// stopping), after ending its event streams (END_STREAM once what they hold is sent).
    fn farewell(&mut self, out: &mut Vec<u8>) {
        if self.phase == Phase::Frames {
            self.greet(out);
            let mut i = 0;
            while i < self.streams.len() {
                // Its event stream ends; a response waiting for its work stays unsent.
                let ended = self.streams.get(i).streams_events() && self.streams.settle(i).is_some();
                if ended && self.flush_stream(i, out) {
                    continue;
                }
                i += 1;
            }
            frame::goaway(out, self.streams.last_id(), Code::NoError);
            self.phase = Phase::Dead;
        }
    }

    /// A preface or header block that timed out ends with the close alone.
    fn timeout_response(&self) -> &'static [u8] {
        b""
    }
}
