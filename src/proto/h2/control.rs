//! The frames that control the connection rather than carry a request: SETTINGS (and the
//! windows a change of SETTINGS_INITIAL_WINDOW_SIZE moves), PING, GOAWAY, PRIORITY and
//! RST_STREAM.

use crate::proto::h2::frame::{self, Code, Head};
use crate::proto::h2::stream::Closed;
use crate::proto::h2::H2Session;
use crate::proto::Cause;
use crate::proto::Fed;

impl H2Session {
    /// PING: answered with its payload (RFC 9113 6.7).
    pub(super) fn ping(head: Head, payload: &[u8], out: &mut Vec<u8>) -> Result<(), Code> {
        if head.stream != 0 {
            return Err(Code::Protocol);
        }
        if head.len != 8 {
            return Err(Code::FrameSize);
        }
        if head.flags & frame::ACK == 0 {
            frame::head(out, 8, frame::PING, frame::ACK, 0);
            out.extend_from_slice(payload);
        }
        Ok(())
    }

    /// GOAWAY from the client: its streams go on, new ones are refused.
    pub(super) fn goaway_in(&mut self, head: Head) -> Result<(), Code> {
        if head.stream != 0 {
            return Err(Code::Protocol);
        }
        if head.len < 8 {
            return Err(Code::FrameSize);
        }
        self.peer_gone = true;
        Ok(())
    }

    /// PRIORITY: checked, otherwise ignored (RFC 9113 5.3.2 deprecates the scheme).
    pub(super) fn priority(
        &mut self,
        head: Head,
        payload: &[u8],
        out: &mut Vec<u8>,
        fed: &mut Fed,
    ) -> Result<(), Code> {
        self.budgets.quiet_frame();
        if head.stream == 0 {
            return Err(Code::Protocol);
        }
        if head.len != 5 {
            self.reset(out, head.stream, Code::FrameSize, fed);
        } else if frame::dependency(payload) == head.stream {
            self.reset(out, head.stream, Code::Protocol, fed);
        }
        Ok(())
    }

    /// RST_STREAM from the client: the stream, if open, is dropped. A reset of an open stream,
    /// or of one already answered and closed, counts against the client's budget (Rapid Reset:
    /// HEADERS then RST_STREAM, again and again); one that crosses our own reset does not.
    pub(super) fn rst_stream(&mut self, head: Head, fed: &mut Fed, out: &mut Vec<u8>) -> Result<(), Code> {
        if head.stream == 0 {
            return Err(Code::Protocol);
        }
        if head.len != 4 {
            return Err(Code::FrameSize);
        }
        if head.stream > self.streams.last_id() {
            return Err(Code::Protocol);
        }
        match self.streams.find(head.stream) {
            Some(i) => {
                fed.streams.reset += 1;
                self.budgets.spend(Cause::ClientResets);
                self.close(i, Closed::Finished);
                self.grant(out, None);
            }
            None => {
                self.budgets.quiet_frame();
                if self.streams.was_closed(head.stream) != Some(Closed::ResetByUs) {
                    self.budgets.spend(Cause::ClientResets);
                }
            }
        }
        Ok(())
    }

    pub(super) fn settings(&mut self, head: Head, payload: &[u8], out: &mut Vec<u8>) -> Result<(), Code> {
        // An ACK, or settings that ask nothing of a request: beyond reason, a flood.
        self.budgets.quiet_frame();
        if head.stream != 0 {
            return Err(Code::Protocol);
        }
        if head.flags & frame::ACK != 0 {
            if head.len != 0 {
                return Err(Code::FrameSize);
            }
            // Our windows apply from here on ([`super::recv_window`]).
            if !std::mem::replace(&mut self.settings_acked, true) {
                self.grant(out, None);
            }
            return Ok(());
        }
        if !head.len.is_multiple_of(6) {
            return Err(Code::FrameSize);
        }
        for s in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([s[0], s[1]]);
            let value = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
            self.setting(id, value)?;
        }
        frame::head(out, 0, frame::SETTINGS, frame::ACK, 0);
        // A larger initial window may let held responses go, and the uploads they held back.
        self.flush(out);
        self.grant(out, None);
        Ok(())
    }

    /// One of the client's settings.
    fn setting(&mut self, id: u16, value: u32) -> Result<(), Code> {
        match id {
            frame::SETTINGS_ENABLE_PUSH if value > 1 => Err(Code::Protocol),
            frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                let value = i64::from(value);
                if value > frame::MAX_WINDOW {
                    return Err(Code::FlowControl);
                }
                // Every open stream's window moves by the change, below zero too (RFC 9113 6.9.2).
                let delta = value - self.peer_initial_window;
                self.peer_initial_window = value;
                for s in self.streams.iter_mut() {
                    s.send.shift(delta)?;
                }
                Ok(())
            }
            frame::SETTINGS_MAX_FRAME_SIZE => {
                if !(frame::MAX_FRAME as u32..=(1 << 24) - 1).contains(&value) {
                    return Err(Code::Protocol);
                }
                self.peer_max_frame = value as usize;
                Ok(())
            }
            // The header table size bounds an encoder's table: ours uses none. The others (max
            // streams, which bounds pushes, and header list size) ask nothing of us.
            _ => Ok(()),
        }
    }
}
