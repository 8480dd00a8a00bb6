//! [`Violation`]: what a server did that breaks HTTP/2 (RFC 9113) as this client reads it,
//! beyond what the frame reader itself refuses; its words say what the server did.

use std::fmt;

use crate::proto::h2::frame::Code;
use crate::proto::h2::hpack::BadBlock;

/// How the server broke the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Violation {
    /// Its first bytes are an HTTP/1.x response.
    Http1,
    /// Its first frame is not SETTINGS.
    FirstNotSettings,
    /// A frame on a stream this client never opened.
    NeverOpened,
    /// A PING of the wrong length, or on a stream.
    BadPing,
    /// PUSH_PROMISE, though push is disabled.
    PushPromise,
    /// An RST_STREAM of the wrong length, or on stream 0.
    BadRstStream,
    /// A GOAWAY too short, or on a stream.
    BadGoAway,
    /// A WINDOW_UPDATE of the wrong length.
    BadWindowUpdate,
    /// A WINDOW_UPDATE of 0.
    ZeroWindowUpdate,
    /// A WINDOW_UPDATE that opens a window past 2^31 - 1.
    WindowOverMax,
    /// A SETTINGS frame on a stream, or not made of whole settings.
    BadSettings,
    /// SETTINGS_INITIAL_WINDOW_SIZE over 2^31 - 1.
    InitialWindowOverMax,
    /// A change of SETTINGS_INITIAL_WINDOW_SIZE that moves an open stream's window past 2^31 - 1.
    StreamWindowShiftedOverMax,
    /// SETTINGS_MAX_FRAME_SIZE outside 2^14 ..= 2^24 - 1.
    MaxFrameSizeOutOfRange,
    /// More PING and SETTINGS acknowledgements waiting than `limit` bytes.
    AckFlood { limit: usize },
    /// DATA on stream 0.
    DataOnStreamZero,
    /// DATA past the connection window this client granted.
    DataOverConnectionWindow,
    /// A DATA frame's padding longer than the frame, or no pad length (the connection error
    /// `code` it calls for).
    Padding { code: Code },
    /// DATA on a stream whose response head has not come.
    DataBeforeHeaders,
    /// Body bytes in the response to a HEAD request.
    BodyToHead,
    /// DATA past the stream window this client granted.
    DataOverStreamWindow,
    /// A response header block HPACK cannot decode (or decodes past the list's limit).
    Undecodable(BadBlock),
    /// A `:status` that is not 100 to 599, or a `content-length` that is not a number (or two
    /// that differ).
    BadStatusOrLength,
    /// An interim (1xx) response with END_STREAM.
    InterimEndsStream,
    /// A response head with no `:status`.
    NoStatus,
    /// A second header block on a stream that is not its trailers.
    SecondHead,
    /// A body whose length differs from its `content-length`.
    LengthNotContentLength,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Violation::Http1 => {
                "the server answered in HTTP/1.x: it does not speak HTTP/2 on this port (prior knowledge)"
            }
            Violation::FirstNotSettings => "the server's first frame is not SETTINGS: not an HTTP/2 server",
            Violation::NeverOpened => "a frame on a stream this client never opened",
            Violation::BadPing => "a malformed PING",
            Violation::PushPromise => "PUSH_PROMISE, though this client disabled push",
            Violation::BadRstStream => "a malformed RST_STREAM",
            Violation::BadGoAway => "a malformed GOAWAY",
            Violation::BadWindowUpdate => "a malformed WINDOW_UPDATE",
            Violation::ZeroWindowUpdate => "a WINDOW_UPDATE of 0",
            Violation::WindowOverMax => "a window opened past 2^31 - 1",
            Violation::BadSettings => "a malformed SETTINGS frame",
            Violation::InitialWindowOverMax => "SETTINGS_INITIAL_WINDOW_SIZE past 2^31 - 1",
            Violation::StreamWindowShiftedOverMax => {
                "a stream window moved past 2^31 - 1 by SETTINGS_INITIAL_WINDOW_SIZE"
            }
            Violation::MaxFrameSizeOutOfRange => "SETTINGS_MAX_FRAME_SIZE out of range",
            Violation::AckFlood { limit } => {
                return write!(
                f,
                "the server sends PING or SETTINGS faster than it reads their acknowledgements (over {} KiB waiting)",
                limit >> 10
            )
            }
            Violation::DataOnStreamZero => "DATA on stream 0",
            Violation::DataOverConnectionWindow => "DATA past the connection window the client granted",
            Violation::Padding { .. } => "bad padding",
            Violation::DataBeforeHeaders => "DATA before the response's HEADERS",
            Violation::BodyToHead => "a body in the response to HEAD",
            Violation::DataOverStreamWindow => "DATA past the stream window the client granted",
            Violation::Undecodable(_) => "a response header block that does not decode",
            Violation::BadStatusOrLength => "a response with a bad :status or content-length",
            Violation::InterimEndsStream => "an interim response that ends its stream",
            Violation::NoStatus => "a response without :status",
            Violation::SecondHead => "a second response head that is not trailers",
            Violation::LengthNotContentLength => "a response body whose length is not its content-length",
        })
    }
}

impl std::error::Error for Violation {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_flood_names_its_limit_in_kib() {
        assert_eq!(
            Violation::AckFlood { limit: 512 * 1024 }.to_string(),
            "the server sends PING or SETTINGS faster than it reads their acknowledgements (over 512 KiB waiting)"
        );
        assert_eq!(Violation::Padding { code: Code::Protocol }.to_string(), "bad padding");
    }
}
