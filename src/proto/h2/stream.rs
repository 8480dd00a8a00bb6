//! One HTTP/2 stream's state, and how a closed one is remembered.

use super::frame;
use super::message::Method;

/// One stream that is open or half-closed.
#[derive(Debug)]
pub(super) struct Stream {
    pub(super) id: u32,
    /// What the client may still send us, and what we may send it.
    pub(super) recv_window: i64,
    pub(super) send_window: i64,
    /// Window consumed by DATA and not yet granted back.
    pub(super) recv_owed: u32,
    /// Response body waiting for window.
    pub(super) pending: Vec<u8>,
    pub(super) method: Method,
    /// The request's END_STREAM arrived.
    pub(super) ended_in: bool,
    /// A refusal was sent before the request ended: the rest of it is not wanted (RFC 9113
    /// 8.1: RST_STREAM with NO_ERROR once the response is complete), and its DATA is dropped.
    pub(super) abort_in: bool,
    /// The response is complete once `pending` is sent; and its END_STREAM went.
    pub(super) end_out: bool,
    pub(super) done_out: bool,
    /// The request's content-length, and the body bytes so far.
    pub(super) expect_len: Option<u64>,
    pub(super) got_len: u64,
}

impl Stream {
    pub(super) fn open(&mut self, id: u32, send_window: i64) {
        self.id = id;
        self.recv_window = frame::INITIAL_WINDOW;
        self.send_window = send_window;
        self.recv_owed = 0;
        self.pending.clear();
        self.method = Method::Other;
        self.ended_in = false;
        self.abort_in = false;
        self.end_out = false;
        self.done_out = false;
        self.expect_len = None;
        self.got_len = 0;
    }
}

/// How a remembered stream closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Closed {
    /// Both sides ended it, or the client reset it: frames on it are STREAM_CLOSED.
    Finished,
    /// We reset it: frames the client sent before it knew are ignored.
    ResetByUs,
}
