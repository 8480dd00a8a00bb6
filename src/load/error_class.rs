//! The error classes: every failure a run meets is counted in exactly one, by the name a
//! document's `errors` gives it.

/// Error classes: every failure is counted in exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum ErrorClass {
    /// Connection refused (nothing listening, or the backlog overflowed).
    Refused,
    /// A connect or a response took longer than `--timeout`.
    Timeout,
    /// Connection reset by the peer.
    Reset,
    /// The server closed with a request outstanding.
    UnexpectedClose,
    /// Not a response this client can parse.
    BadResponse,
    /// The TLS handshake or a TLS record failed (an untrusted certificate, a protocol error).
    Tls,
    /// Echoed bytes differ from those sent.
    EchoMismatch,
    /// No local port or address left (EADDRNOTAVAIL / EADDRINUSE on connect).
    PortExhaustion,
    /// Out of local descriptors (EMFILE / ENFILE).
    LocalLimit,
    /// Any other socket error.
    Other,
    /// HTTP/2: the server reset a request's stream (RST_STREAM other than REFUSED_STREAM,
    /// which is retried); the connection goes on.
    StreamReset,
    /// An event stream the server ended (closed, or reset) before its end; the events it
    /// delivered are counted (`sse.cut_events`).
    StreamCut,
    /// A keyed store answered a GET with a value that is not the key's (another key's, a
    /// damaged one, or, for a key the connection owns, not its last write); the connection
    /// goes on.
    WrongValue,
    /// A keyed store refused a command with an error reply (`-ERR`, `-OOM`, `SERVER_ERROR`);
    /// the connection goes on.
    ServerError,
    /// Sent, and not answered by the window's close nor within `--timeout` after it (the
    /// client waits that long for what is in flight at the close), or in flight when the run
    /// was stopped by a signal. Counted per request.
    Unanswered,
}

/// How many error classes there are.
pub const CLASSES: usize = 15;

pub const ERROR_CLASSES: [(ErrorClass, &str); CLASSES] = [
    (ErrorClass::Refused, "refused"),
    (ErrorClass::Timeout, "timeout"),
    (ErrorClass::Reset, "reset"),
    (ErrorClass::UnexpectedClose, "unexpected_close"),
    (ErrorClass::BadResponse, "bad_response"),
    (ErrorClass::Tls, "tls"),
    (ErrorClass::EchoMismatch, "echo_mismatch"),
    (ErrorClass::PortExhaustion, "port_exhaustion"),
    (ErrorClass::LocalLimit, "local_fd_limit"),
    (ErrorClass::Other, "other"),
    (ErrorClass::StreamReset, "stream_reset"),
    (ErrorClass::StreamCut, "stream_cut"),
    (ErrorClass::WrongValue, "wrong_value"),
    (ErrorClass::ServerError, "server_error"),
    (ErrorClass::Unanswered, "unanswered"),
];

impl ErrorClass {
    /// Classifies a socket error.
    pub fn of(e: &std::io::Error) -> ErrorClass {
        match e.raw_os_error() {
            Some(libc::ECONNREFUSED) => ErrorClass::Refused,
            Some(libc::ETIMEDOUT) => ErrorClass::Timeout,
            Some(libc::ECONNRESET) | Some(libc::EPIPE) | Some(libc::ECONNABORTED) => ErrorClass::Reset,
            Some(libc::EADDRNOTAVAIL) | Some(libc::EADDRINUSE) => ErrorClass::PortExhaustion,
            Some(libc::EMFILE) | Some(libc::ENFILE) => ErrorClass::LocalLimit,
            _ => ErrorClass::Other,
        }
    }
}
