//! Flow control (RFC 9113 5.2, 6.9): what the client's windows let the session send of the
//! bodies it holds, and the window it grants back for the DATA it took.

use super::frame::{self, Code, Head};
use super::stream::Closed;
use super::{H2Session, KEEP_BUFFER};
use crate::proto::Fed;

impl H2Session {
    pub(super) fn window_update(
        &mut self,
        head: Head,
        payload: &[u8],
        out: &mut Vec<u8>,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        if head.len != 4 {
            return Err(Code::FrameSize);
        }
        let inc = i64::from(u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff);
        if head.stream == 0 {
            if inc == 0 {
                return Err(Code::Protocol);
            }
            self.send_window += inc;
            if self.send_window > frame::MAX_WINDOW {
                return Err(Code::FlowControl);
            }
            self.flush(out);
            self.grant(out, None);
            return Ok(());
        }
        if head.stream > self.last_id {
            return Err(Code::Protocol);
        }
        let Some(i) = self.find(head.stream) else {
            return Ok(()); // closed: a late update is harmless
        };
        if inc == 0 {
            self.reset(out, head.stream, Code::Protocol, fed);
            return Ok(());
        }
        self.streams[i].send_window += inc;
        if self.streams[i].send_window > frame::MAX_WINDOW {
            self.reset(out, head.stream, Code::FlowControl, fed);
        } else {
            self.flush_stream(i, out);
        }
        self.grant(out, None);
        Ok(())
    }

    /// Sends what window allows of every stream's pending body, and ends the streams that are
    /// done.
    pub(super) fn flush(&mut self, out: &mut Vec<u8>) {
        let mut i = 0;
        while i < self.streams.len() {
            if self.flush_stream(i, out) {
                continue; // stream i was closed: another moved into its place
            }
            i += 1;
        }
    }

    /// Flushes stream `i`; `true` if it is done and was removed.
    pub(super) fn flush_stream(&mut self, i: usize, out: &mut Vec<u8>) -> bool {
        let max_frame = self.peer_max_frame;
        let s = &mut self.streams[i];
        while !s.pending.is_empty() {
            let n = (s.pending.len() as i64)
                .min(s.send_window)
                .min(self.send_window)
                .min(max_frame as i64);
            if n <= 0 {
                return false;
            }
            let n = n as usize;
            let last = n == s.pending.len() && s.end_out;
            frame::head(out, n, frame::DATA, if last { frame::END_STREAM } else { 0 }, s.id);
            out.extend_from_slice(&s.pending[..n]);
            s.pending.drain(..n);
            if s.pending.is_empty() && s.pending.capacity() > KEEP_BUFFER {
                s.pending = Vec::new();
            }
            s.send_window -= n as i64;
            self.send_window -= n as i64;
            self.held -= n;
            if last {
                s.done_out = true;
            }
        }
        if s.end_out && !s.done_out {
            frame::head(out, 0, frame::DATA, frame::END_STREAM, s.id);
            s.done_out = true;
        }
        if s.done_out && s.abort_in {
            frame::rst_stream(out, s.id, Code::NoError);
            self.close(i, Closed::ResetByUs);
            return true;
        }
        if s.done_out && s.ended_in {
            self.close(i, Closed::Finished);
            return true;
        }
        false
    }

    /// Grants back the window the client's DATA used, on the connection and on stream `only`
    /// (every stream: `None`), while the held output is under `max_output`.
    pub(super) fn grant(&mut self, out: &mut Vec<u8>, only: Option<u32>) {
        if self.held >= self.limits.max_output {
            return;
        }
        if self.recv_owed > 0 {
            frame::window_update(out, 0, self.recv_owed);
            self.recv_window += i64::from(self.recv_owed);
            self.recv_owed = 0;
        }
        for s in &mut self.streams {
            if only.is_none_or(|id| id == s.id) && s.recv_owed > 0 && !s.ended_in {
                frame::window_update(out, s.id, s.recv_owed);
                s.recv_window += i64::from(s.recv_owed);
                s.recv_owed = 0;
            }
        }
    }
}
