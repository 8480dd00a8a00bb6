//! One HTTP/2 stream: where it is in its life ([`StreamState`]), its windows, the response
//! body it holds for window, the response it owes later; and how a closed one is remembered.

use std::time::Instant;

use crate::proto::h2::message::Method;
use crate::proto::h2::window::{Inflow, Window};
use crate::proto::Later;

/// Where a stream is in the life RFC 9113 5.1 draws, as the server sees it. Idle, reserved
/// and closed streams are not in the table: a stream enters it as its request's HEADERS
/// arrive and leaves it closed (remembered as [`Closed`] for a while).
///
/// ```text
///                       recv HEADERS
///        idle  ---------------------------.
///                                          v
///                                   +------------+   send ES      +--------------+
///                                   |    open    |--------------->| half-closed  |
///                                   | (Open)     |                | (local)      |
///                                   +------------+                +--------------+
///                      refused before  |      | recv ES               | recv ES,
///                      the request     |      v                       | send R, recv R
///                      ended           |  +--------------+            v
///                                      |  | half-closed  |  send ES  +--------+
///                                      |  | (remote)     |---------->| closed |
///                                      |  +--------------+  send R,  +--------+
///                                      v                    recv R       ^
///                                 +-----------+  refusal sent: send R    |
///                                 | Refusing  |--------------------------'
///                                 +-----------+  (recv ES: its `ended`)
///         ES: END_STREAM   R: RST_STREAM
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamState {
    /// Both sides may still send. `ending`: the response ends once what it holds is sent (its
    /// method decided so: a GET's body is whole at once, an echo's only with the request's).
    Open { ending: bool },
    /// The request ended (END_STREAM in); the response ends once what it holds is sent.
    HalfClosedRemote,
    /// The response ended (END_STREAM out); the request's body may still come.
    HalfClosedLocal,
    /// Answered with a refusal before the request ended: the rest of the request is not
    /// wanted (its DATA is dropped) and, once the refusal is sent, RST_STREAM(NO_ERROR) closes
    /// the stream (RFC 9113 8.1). `ended`: the request's END_STREAM came meanwhile (trailers).
    Refusing { ended: bool },
}

/// What follows our END_STREAM on a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterEnd {
    /// The request goes on: half-closed (local).
    Stays,
    /// Both sides are done: the stream closes.
    Closes,
    /// A refusal went before the request ended: RST_STREAM(NO_ERROR) closes it.
    Resets,
}

impl StreamState {
    /// The response ends once what it holds is sent (END_STREAM goes with its last DATA).
    pub(super) fn ending(self) -> bool {
        !matches!(self, StreamState::Open { ending: false } | StreamState::HalfClosedLocal)
    }

    /// The client's request has ended (its END_STREAM came).
    pub(super) fn request_ended(self) -> bool {
        matches!(
            self,
            StreamState::HalfClosedRemote | StreamState::Refusing { ended: true }
        )
    }

    /// The client's END_STREAM arrived: `true` when the stream is done with it (our side
    /// had ended already).
    pub(super) fn end_request(&mut self) -> bool {
        match *self {
            StreamState::Open { .. } => {
                *self = StreamState::HalfClosedRemote;
                false
            }
            StreamState::HalfClosedLocal => true,
            // A refusal closes the stream itself.
            StreamState::Refusing { .. } => {
                *self = StreamState::Refusing { ended: true };
                false
            }
            // An ended request does not end twice.
            StreamState::HalfClosedRemote => false,
        }
    }

    /// Our END_STREAM went: what follows.
    pub(super) fn end_response(&mut self) -> AfterEnd {
        match *self {
            StreamState::Open { .. } => {
                *self = StreamState::HalfClosedLocal;
                AfterEnd::Stays
            }
            StreamState::HalfClosedRemote => AfterEnd::Closes,
            StreamState::Refusing { .. } => AfterEnd::Resets,
            StreamState::HalfClosedLocal => AfterEnd::Stays,
        }
    }
}

/// One stream that is open or half-closed.
#[derive(Debug)]
pub(super) struct Stream {
    pub(super) id: u32,
    pub(super) state: StreamState,
    /// What the client may still send us, and the credit its DATA used, granted back at half.
    pub(super) recv: Inflow,
    /// What we may still send it.
    pub(super) send: Window,
    /// Response body waiting for window.
    pub(super) pending: Vec<u8>,
    pub(super) method: Method,
    /// The request's content-length, and the body bytes so far.
    pub(super) expect_len: Option<u64>,
    pub(super) got_len: u64,
    /// A response that finishes later ([`Later`]): an event stream, whose events go into
    /// `pending` as they fall due, or the usual response once the work of its ticket is done.
    /// The response does not end before it does. Set and taken by [`super::streams::Streams`]
    /// alone, which counts the streams that owe one.
    later: Option<Later>,
}

impl Stream {
    /// A stream opened by HEADERS on `id`, allowed to send `send_window` (the client's
    /// SETTINGS_INITIAL_WINDOW_SIZE) and to receive `recv_window` (ours), holding its response
    /// body in `pending` (a closed stream's buffer, emptied, or a new one).
    pub(super) fn new(id: u32, send_window: i64, recv_window: u32, pending: Vec<u8>) -> Stream {
        Stream {
            id,
            state: StreamState::Open { ending: false },
            recv: Inflow::new(recv_window),
            send: Window::new(send_window),
            pending,
            method: Method::Other,
            expect_len: None,
            got_len: 0,
            later: None,
        }
    }

    /// The response ends once what it holds is sent: its method says so and nothing is owed
    /// later (no event to come, no work to wait for).
    pub(super) fn ends(&self) -> bool {
        self.state.ending() && self.later.is_none()
    }

    /// What it owes later now becomes `later` (the one it owed is handed back): for
    /// [`super::streams::Streams`], which keeps the count.
    pub(super) fn swap_later(&mut self, later: Option<Later>) -> Option<Later> {
        std::mem::replace(&mut self.later, later)
    }

    /// The ticket whose work its response waits for.
    pub(super) fn ticket(&self) -> Option<u64> {
        match self.later {
            Some(Later::Pending(t)) => Some(t),
            _ => None,
        }
    }

    /// It sends an event stream.
    pub(super) fn streams_events(&self) -> bool {
        matches!(self.later, Some(Later::Stream(_)))
    }

    /// When its event stream's next event is due.
    pub(super) fn event_due(&self) -> Option<Instant> {
        match &self.later {
            Some(Later::Stream(e)) => e.due(),
            _ => None,
        }
    }

    /// Its event stream's next event goes into `pending` (as of `now`): the bytes it added.
    pub(super) fn next_event(&mut self, now: Instant) -> usize {
        let Some(Later::Stream(e)) = self.later.as_mut() else {
            return 0;
        };
        let before = self.pending.len();
        e.next_event(now, &mut self.pending);
        self.pending.len() - before
    }

    /// Its event stream has sent its last event.
    pub(super) fn events_done(&self) -> bool {
        matches!(&self.later, Some(Later::Stream(e)) if e.done())
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

#[cfg(test)]
mod tests {
    use crate::proto::h2::stream::*;

    #[test]
    fn the_states_follow_the_rfc_diagram() {
        // An echo: open, the request ends, then the response.
        let mut s = StreamState::Open { ending: false };
        assert!(!s.ending());
        assert!(!s.end_request());
        assert_eq!(s, StreamState::HalfClosedRemote);
        assert!(s.ending() && s.request_ended());
        assert_eq!(s.end_response(), AfterEnd::Closes);
        // A GET whose request still has body to come: the response ends first.
        let mut s = StreamState::Open { ending: true };
        assert_eq!(s.end_response(), AfterEnd::Stays);
        assert_eq!(s, StreamState::HalfClosedLocal);
        assert!(!s.ending());
        assert!(s.end_request(), "both sides done");
        // A refusal before the request ended: reset once sent, whatever comes in; trailers
        // end the request (a second block is then on an ended one).
        let mut s = StreamState::Refusing { ended: false };
        assert!(s.ending() && !s.request_ended());
        assert!(!s.end_request());
        assert!(s.request_ended());
        assert_eq!(s.end_response(), AfterEnd::Resets);
    }
}
