//! A request's header block (HEADERS and its CONTINUATIONs, assembled by the frame reader):
//! where it lands (a new stream, trailers of an open one, a closed one), decoded with HPACK,
//! checked as RFC 9113 8.2-8.3 asks, and the stream opened and answered, or refused, reset,
//! or the connection ended.

use super::session::{Phase, MAX_DECODED};
use crate::proto::h2::frame::{self, Block, Code};
use crate::proto::h2::message::{field, refusal_body, response_head, Fields, Method};
use crate::proto::h2::stream::{Closed, StreamState};
use crate::proto::h2::{hpack, H2Session};
use crate::proto::http::{BODY, MAX_HEAD};
use crate::proto::{Answer, Each, Fed, Request};
use crate::proto::{EventStream, Later};

/// Where a header block lands, known before it is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lands {
    /// A new stream.
    New,
    /// The trailers of the open stream at this place in the table.
    Trailers(usize),
    /// A stream error, applied once the block is decoded (the HPACK state must follow every
    /// block): RST_STREAM with this code.
    Reset(Code),
}

impl H2Session {
    /// A whole header block.
    pub(super) fn headers<F: Each + ?Sized>(
        &mut self,
        block: Block<'_>,
        out: &mut Vec<u8>,
        each: &mut F,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        let mut lands = match self.lands_on(block.stream())? {
            // Trailers are whole only with END_STREAM.
            Lands::Trailers(_) if !block.ends_stream() => Lands::Reset(Code::Protocol),
            lands => lands,
        };
        let id = block.stream();
        if block.dependency == Some(id) && !matches!(lands, Lands::Reset(_)) {
            // A stream that depends on itself (RFC 9113 5.3.1).
            lands = Lands::Reset(Code::Protocol);
        }
        let f = self.decode(block.fragment)?;
        match lands {
            Lands::Reset(code) => {
                self.streams.seen(id);
                self.reset(out, id, code, fed);
            }
            Lands::Trailers(i) => self.trailers(i, &f, out, fed),
            Lands::New => self.open(block, &f, out, each, fed),
        }
        Ok(())
    }

    /// Where a block for stream `id` lands; `Err`: a connection error.
    pub(super) fn lands_on(&self, id: u32) -> Result<Lands, Code> {
        if id > self.streams.last_id() {
            return match id.is_multiple_of(2) {
                true => Err(Code::Protocol),
                false => Ok(Lands::New),
            };
        }
        Ok(match self.streams.find(id) {
            // Trailers end the request; a second HEADERS after it is on a closed stream.
            Some(i) if !self.streams.get(i).state.request_ended() => Lands::Trailers(i),
            Some(_) => Lands::Reset(Code::StreamClosed),
            None => match self.streams.was_closed(id) {
                Some(Closed::Finished) => return Err(Code::StreamClosed),
                Some(Closed::ResetByUs) => Lands::Reset(Code::StreamClosed),
                // A stream identifier below the last, never opened (RFC 9113 5.1.1).
                None => return Err(Code::Protocol),
            },
        })
    }

    /// Decodes a block into the request head it carries (its path into `self.path`).
    fn decode(&mut self, block: &[u8]) -> Result<Fields, Code> {
        let mut f = Fields::default();
        let path = &mut self.path;
        path.clear();
        self.decoder
            .decode(block, MAX_DECODED, &mut |name, value| field(&mut f, path, name, value))
            .map_err(|e| match e {
                hpack::BadBlock::TooLarge => Code::EnhanceYourCalm,
                hpack::BadBlock::Invalid => Code::Compression,
            })?;
        Ok(f)
    }

    /// Trailers of the open stream at `i`: no pseudo-headers, and they end the request.
    fn trailers(&mut self, i: usize, f: &Fields, out: &mut Vec<u8>, fed: &mut Fed) {
        let id = self.streams.at(i).id;
        if f.method.is_some() || f.scheme || f.path || f.authority || f.malformed {
            self.reset(out, id, Code::Protocol, fed);
            return;
        }
        self.end_request(i, out, fed);
        if let Some(i) = self.streams.find(id) {
            self.flush_stream(i, out);
        }
    }

    /// A new stream: refused past the limit or after the client's GOAWAY, else opened, its
    /// request checked and answered.
    fn open<F: Each + ?Sized>(&mut self, block: Block<'_>, f: &Fields, out: &mut Vec<u8>, each: &mut F, fed: &mut Fed) {
        let id = block.stream();
        self.streams.seen(id);
        if self.peer_gone || self.streams.len() >= self.limits.max_streams as usize {
            // Refused unprocessed, but its block was decoded: a reset the client made the
            // server send, like any other.
            fed.streams.refused += 1;
            self.streams.remember(id, Closed::ResetByUs);
            frame::rst_stream(out, id, Code::RefusedStream);
            self.budgets.spend(crate::proto::Cause::ServerResets);
            return;
        }
        fed.streams.opened += 1;
        let i = self.streams.open(id, self.peer_initial_window);
        let Some(method) = checked(f) else {
            self.reset(out, id, Code::Protocol, fed);
            return;
        };
        let s = self.streams.at(i);
        s.method = method;
        s.expect_len = f.content_length;
        if block.ends_stream() {
            if f.content_length.is_some_and(|n| n != 0) {
                // Its content-length promised a body that will not come.
                self.reset(out, id, Code::Protocol, fed);
                return;
            }
            s.state.end_request();
        }
        // A GET or HEAD whose request has ended may be answered later.
        let deferrable = matches!(method, Method::Get | Method::Head) && self.streams.get(i).state.request_ended();
        match self.status(method, f, deferrable, each, out) {
            (_, Some(Later::Stream(stream))) => {
                fed.requests += 1;
                self.stream(i, method, stream, out);
            }
            // Its response waits for its work ([`H2Session::complete`]).
            (_, Some(Later::Pending(ticket))) => self.streams.defer(i, Later::Pending(ticket)),
            (status, None) => {
                fed.requests += 1;
                self.answer(i, method, status, f.content_length, out);
            }
        }
    }

    /// Writes the response of the stream waiting for `ticket` (its work done); nothing if no
    /// stream waits for it (it was reset meanwhile).
    pub(super) fn complete_ticket(&mut self, ticket: u64, out: &mut Vec<u8>) -> Fed {
        let mut fed = Fed::default();
        if self.phase != Phase::Frames {
            return fed;
        }
        let Some(i) = self.streams.find_ticket(ticket) else {
            return fed;
        };
        self.streams.settle(i);
        let s = self.streams.get(i);
        let (method, length) = (s.method, s.expect_len);
        fed.requests += 1;
        self.answer(i, method, b"200", length, out);
        fed
    }

    /// The status a checked request gets, after its work (the model's hook), and the event
    /// stream a GET or HEAD gets instead of its usual body.
    fn status<F: Each + ?Sized>(
        &self,
        method: Method,
        f: &Fields,
        deferrable: bool,
        each: &mut F,
        out: &mut Vec<u8>,
    ) -> (&'static [u8], Option<Later>) {
        if f.list_size > MAX_HEAD {
            (b"431", None)
        } else if method == Method::Other {
            (b"405", None)
        } else if method == Method::Echo && f.content_length.is_some_and(|n| n > self.limits.max_body as u64) {
            (b"413", None)
        } else {
            let req = Request {
                target: &self.path,
                deferrable,
            };
            match each.request(req, out) {
                Answer::Refuse => (b"400", None),
                Answer::Later(Later::Stream(s)) if matches!(method, Method::Get | Method::Head) => {
                    (b"200", Some(Later::Stream(s)))
                }
                Answer::Later(Later::Pending(t)) if deferrable => (b"200", Some(Later::Pending(t))),
                _ => (b"200", None),
            }
        }
    }

    /// An event stream's response on the stream at `i`: its head now, its events as they fall
    /// due ([`H2Session::advance`]); a HEAD gets the head only.
    fn stream(&mut self, i: usize, method: Method, stream: Box<EventStream>, out: &mut Vec<u8>) {
        let s = self.streams.at(i);
        let id = s.id;
        if method == Method::Head {
            response_head(out, id, b"200", Some(b"text/event-stream"), usize::MAX, true);
            self.response_ended(i, out);
            return;
        }
        if !s.state.request_ended() {
            s.state = StreamState::Open { ending: true };
        }
        let mut stream = stream;
        stream.open();
        self.streams.defer(i, Later::Stream(stream));
        response_head(out, id, b"200", Some(b"text/event-stream"), usize::MAX, false);
    }

    /// The response of the stream at `i`: its head, and the body it holds for window.
    fn answer(&mut self, i: usize, method: Method, status: &[u8], content_length: Option<u64>, out: &mut Vec<u8>) {
        let s = self.streams.at(i);
        let id = s.id;
        let ended = s.state.request_ended();
        if status != b"200" {
            // Refused with a status and a short body; a body still coming is not wanted.
            s.method = Method::Other;
            s.pending.extend_from_slice(refusal_body(status));
            self.held += s.pending.len();
            response_head(out, id, status, None, s.pending.len(), false);
            if !ended {
                s.state = StreamState::Refusing { ended: false };
            }
            self.flush_stream(i, out);
            return;
        }
        match method {
            Method::Get => {
                s.pending.extend_from_slice(BODY);
                self.held += BODY.len();
                if !ended {
                    s.state = StreamState::Open { ending: true };
                }
                response_head(out, id, b"200", Some(b"text/html"), BODY.len(), false);
            }
            Method::Head => {
                response_head(out, id, b"200", Some(b"text/html"), BODY.len(), true);
                // END_STREAM went with the head.
                self.response_ended(i, out);
                return;
            }
            Method::Echo => {
                let len = content_length.map_or(usize::MAX, |n| n as usize);
                response_head(out, id, b"200", Some(b"application/octet-stream"), len, false);
            }
            Method::Other => unreachable!("refused with 405"),
        }
        self.flush_stream(i, out);
    }
}

/// The method of a request head that has every pseudo-header its kind needs and nothing
/// malformed; `None` for a malformed one.
fn checked(f: &Fields) -> Option<Method> {
    let whole = if f.connect {
        f.authority && !f.scheme && !f.path
    } else {
        f.scheme && f.path
    };
    f.method.filter(|_| whole && !f.malformed)
}
