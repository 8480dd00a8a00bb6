//! Flow control (RFC 9113 5.2, 6.9): what the client's windows let the session send of the
//! bodies it holds, and the window it grants back for the DATA it took.

use crate::proto::h2::frame::{self, Code, Head};
use crate::proto::h2::stream::{AfterEnd, Closed, Stream};
use crate::proto::h2::H2Session;
use crate::proto::Fed;

impl H2Session {
    /// WINDOW_UPDATE: what the window lets go now goes. One that grows a window already past
    /// its initial size, and lets nothing go, asks nothing of the server: a quiet frame (a
    /// flood of increments of 1 is one). One that gives back window the server's DATA used is
    /// the client's bookkeeping, however often it comes.
    pub(super) fn window_update(
        &mut self,
        head: Head,
        payload: &[u8],
        out: &mut Vec<u8>,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        let (window, initial) = match head.stream {
            0 => (Some(self.send_window.get()), frame::INITIAL_WINDOW),
            id => (
                self.streams.find(id).map(|i| self.streams.get(i).send.get()),
                self.peer_initial_window,
            ),
        };
        let before = out.len();
        let r = self.update_window(head, payload, out, fed);
        // A closed stream's update is quiet too; one whose bytes the bound on output holds
        // back is not.
        if r.is_ok() && out.len() == before && !self.releasing && window.is_none_or(|w| w > initial) {
            self.budgets.quiet_frame();
        }
        r
    }

    fn update_window(&mut self, head: Head, payload: &[u8], out: &mut Vec<u8>, fed: &mut Fed) -> Result<(), Code> {
        if head.len != 4 {
            return Err(Code::FrameSize);
        }
        let inc = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff;
        if head.stream == 0 {
            if inc == 0 {
                return Err(Code::Protocol);
            }
            self.send_window.grant(inc)?;
            self.flush(out);
            self.grant(out, None);
            return Ok(());
        }
        if head.stream > self.streams.last_id() {
            return Err(Code::Protocol);
        }
        let Some(i) = self.streams.find(head.stream) else {
            return Ok(()); // closed: a late update is harmless, and asks for nothing
        };
        if inc == 0 {
            self.reset(out, head.stream, Code::Protocol, fed);
            return Ok(());
        }
        match self.streams.at(i).send.grant(inc) {
            Err(_) => self.reset(out, head.stream, Code::FlowControl, fed),
            Ok(()) => {
                self.flush_stream(i, out);
            }
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

    /// Flushes the stream at `i`, as far as the windows and the bound on output allow; `true`
    /// if it is done and was removed.
    pub(super) fn flush_stream(&mut self, i: usize, out: &mut Vec<u8>) -> bool {
        let max_frame = self.peer_max_frame;
        let s = self.streams.at(i);
        while !s.pending.is_empty() {
            let n = s
                .pending
                .len()
                .min(s.send.room())
                .min(self.send_window.room())
                .min(max_frame);
            if n == 0 {
                return false;
            }
            let room = match out.is_empty() {
                // An empty output always takes a frame: progress whatever the bound.
                true => n,
                false => self.cap.saturating_sub(out.len() + frame::HEADER_LEN),
            };
            if room == 0 {
                // The rest goes once the output has drained (the next feed).
                self.releasing = true;
                return false;
            }
            let n = n.min(room);
            let last = n == s.pending.len() && s.ends();
            frame::head(out, n, frame::DATA, if last { frame::END_STREAM } else { 0 }, s.id);
            out.extend_from_slice(&s.pending[..n]);
            s.pending.drain(..n);
            if s.pending.is_empty() && s.pending.capacity() > crate::proto::h2::streams::KEEP_BUFFER {
                s.pending = Vec::new();
            }
            s.send.spend(n);
            self.send_window.spend(n);
            self.held -= n;
            if last {
                return self.response_ended(i, out);
            }
        }
        if s.ends() {
            frame::head(out, 0, frame::DATA, frame::END_STREAM, s.id);
            return self.response_ended(i, out);
        }
        false
    }

    /// Our END_STREAM went on the stream at `i`: `true` if that closed it.
    pub(super) fn response_ended(&mut self, i: usize, out: &mut Vec<u8>) -> bool {
        let s = self.streams.at(i);
        match s.state.end_response() {
            AfterEnd::Stays => false,
            AfterEnd::Closes => {
                self.close(i, Closed::Finished);
                true
            }
            AfterEnd::Resets => {
                frame::rst_stream(out, s.id, Code::NoError);
                self.close(i, Closed::ResetByUs);
                true
            }
        }
    }

    /// Grants back the window the client's DATA used, on the connection and on stream `only`
    /// (every stream: `None`), where that is half a window or more, while the held output is
    /// under `max_output`. On the connection only what the output it became no longer holds
    /// goes back: the window open to the client and the output held for its windows share one
    /// bound, the window's size (max(`--max-output`, 65,535)), so a client that uploads and
    /// never grants window makes the session hold that much, not twice it.
    pub(super) fn grant(&mut self, out: &mut Vec<u8>, only: Option<u32>) {
        if self.held >= self.limits.max_output {
            self.withheld = true;
            return;
        }
        let owed = self.recv.owed() as usize;
        let room = owed.saturating_sub(self.held);
        let half = crate::proto::h2::recv_window(self.limits.max_output).div_ceil(2);
        // Half a window at a time, as before, also where the output held leaves less room
        // (granting each frame's worth then cost nghttp's 1 MiB upload 43 WINDOW_UPDATEs for
        // 66 DATA frames): a client that reads nothing until its upload ends stalls once the
        // output held passes half a window (it did at `max_output`), as any bounded echo does.
        if let Some(inc) = self.recv.release_within(half, room) {
            frame::window_update(out, 0, inc);
        }
        // Credit that did not fit waits for the output to drain.
        self.withheld = owed > room;
        // Before the client acknowledged our SETTINGS it may still assume the RFC's window
        // on a stream: its credit goes back at half of that.
        let at = (!self.settings_acked).then_some((frame::INITIAL_WINDOW as u32).div_ceil(2));
        match only {
            Some(id) => {
                if let Some(i) = self.streams.find(id) {
                    grant_stream(self.streams.at(i), at, out);
                }
            }
            None => self.streams.iter_mut().for_each(|s| grant_stream(s, at, out)),
        }
    }
}

/// Grants back the window the client's DATA used on stream `s` (once it is half a window, or
/// `at`), while its request goes on.
fn grant_stream(s: &mut Stream, at: Option<u32>, out: &mut Vec<u8>) {
    if s.state.request_ended() {
        return;
    }
    let released = match at {
        Some(at) => s.recv.release_at(at),
        None => s.recv.release(),
    };
    if let Some(inc) = released {
        frame::window_update(out, s.id, inc);
    }
}
