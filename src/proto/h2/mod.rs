//! h2: HTTP/2 (RFC 9113) as a sans-I/O session, served by every model like http.
//!
//! GET / HEAD -> 200 `<html>hello</html>`; POST / PUT -> 200 echoing the request body as it
//! arrives; other methods -> 405. A connection's streams are all served here, by the worker
//! that owns the connection. What the session sends goes into one output buffer per call, so
//! a turn's frames leave in one write.
//!
//! By the RFC: the preface and SETTINGS (ours: `SETTINGS_MAX_CONCURRENT_STREAMS`, streams past
//! it refused with REFUSED_STREAM; `SETTINGS_INITIAL_WINDOW_SIZE`, [`recv_window`]) and their ACK; HEADERS + CONTINUATION decoded with HPACK;
//! DATA under connection- and stream-level flow control both ways; PING; RST_STREAM; GOAWAY;
//! PRIORITY checked and otherwise ignored; unknown frame types ignored. A connection error
//! sends GOAWAY with its code and closes; a stream error resets only that stream.
//!
//! Limits as for http: a header list over 8 KiB gets 431, a body over `max_body` resets its
//! stream. Response bytes waiting for the client's flow-control window count against
//! `max_output`: past it the session grants the client no more window (what it withheld goes
//! once the output is under the bound again), and on the connection the credit a client's DATA
//! used goes back only as the output it became leaves, so a client that never sends
//! WINDOW_UPDATE cannot make it hold more than one window ([`recv_window`]: max(`max_output`,
//! 65,535)) plus one read.
//!
//! The parts: `frame` (the frame format and its [`frame::Reader`], which assembles header
//! blocks), `window` (flow-control arithmetic), `stream` (a stream's state), `streams` (the
//! table of streams), `headers` (a request's header block), `data` (its body), `control`
//! (SETTINGS, PING, GOAWAY, PRIORITY, RST_STREAM), `flow` (what the windows let go out).

pub mod budget;
mod control;
mod data;
mod flow;
pub mod frame;
mod headers;
pub(crate) mod hpack;
mod message;
mod session;
mod stream;
mod streams;
pub mod window;

pub use session::{H2Session, MAX_CONTINUATIONS};
pub use window::recv_window;
