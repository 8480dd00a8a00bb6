//! A request's body: DATA taken under the connection's and the stream's windows, checked
//! against the request's content-length and `--max-body`, echoed where the method asks, and
//! the request's END_STREAM.

use crate::proto::h2::frame::{self, unpad, Code, Head};
use crate::proto::h2::message::Method;
use crate::proto::h2::stream::Closed;
use crate::proto::h2::H2Session;
use crate::proto::Fed;

impl H2Session {
    /// DATA: the body goes to its stream (echoed as window allows), and the window it used is
    /// granted back once it is half a window, while the session holds less than `max_output`.
    pub(super) fn data(&mut self, head: Head, payload: &[u8], out: &mut Vec<u8>, fed: &mut Fed) -> Result<(), Code> {
        self.take_data(head, payload, out, fed)?;
        if let Some(i) = self.streams.find(head.stream) {
            self.flush_stream(i, out);
        }
        self.grant(out, Some(head.stream));
        Ok(())
    }

    fn take_data(&mut self, head: Head, payload: &[u8], out: &mut Vec<u8>, fed: &mut Fed) -> Result<(), Code> {
        if head.stream == 0 || head.stream > self.streams.last_id() {
            return Err(Code::Protocol);
        }
        let body = unpad(head, payload)?;
        if body.is_empty() && head.flags & frame::END_STREAM == 0 {
            // No body (padding alone counts as none), and not the request's end: a frame that
            // asks for nothing.
            self.budgets.quiet_frame();
        }
        // All of the payload, padding included, counts against the windows.
        self.recv.consume(head.len)?;
        let Some(i) = self.streams.find(head.stream) else {
            return match self.streams.was_closed(head.stream) {
                Some(Closed::ResetByUs) => Ok(()),
                Some(Closed::Finished) => Err(Code::StreamClosed),
                // Closed too long ago to say how: a stream error (RFC 9113 6.1), a reset the
                // client made the server send.
                None => {
                    frame::rst_stream(out, head.stream, Code::StreamClosed);
                    self.budgets.spend(crate::proto::Cause::ServerResets);
                    Ok(())
                }
            };
        };
        let s = self.streams.at(i);
        match s.state {
            // The rest of a refused request is not wanted.
            crate::proto::h2::stream::StreamState::Refusing { .. } => return Ok(()),
            _ if s.state.request_ended() => {
                self.reset(out, head.stream, Code::StreamClosed, fed);
                return Ok(());
            }
            _ => {}
        }
        if s.recv.consume(head.len).is_err() {
            self.reset(out, head.stream, Code::FlowControl, fed);
            return Ok(());
        }
        s.got_len += body.len() as u64;
        if s.expect_len.is_some_and(|n| s.got_len > n) {
            // More body than its content-length: malformed, before a byte of it is echoed.
            self.reset(out, head.stream, Code::Protocol, fed);
            return Ok(());
        }
        if s.got_len > self.limits.max_body as u64 {
            self.reset(out, head.stream, Code::Cancel, fed);
            return Ok(());
        }
        if s.method == Method::Echo {
            s.pending.extend_from_slice(body);
            self.held += body.len();
        }
        if head.flags & frame::END_STREAM != 0 {
            self.end_request(i, out, fed);
        }
        Ok(())
    }

    /// The request's END_STREAM arrived on the stream at `i` (its last DATA, or trailers): a
    /// body short of its content-length is malformed; a stream whose response had ended closes.
    pub(super) fn end_request(&mut self, i: usize, out: &mut Vec<u8>, fed: &mut Fed) {
        let s = self.streams.at(i);
        if s.expect_len.is_some_and(|n| n != s.got_len) {
            let id = s.id;
            self.reset(out, id, Code::Protocol, fed);
            return;
        }
        if s.state.end_request() {
            self.close(i, Closed::Finished);
        }
    }
}
