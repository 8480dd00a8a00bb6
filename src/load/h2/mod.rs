//! The client's side of HTTP/2 (RFC 9113) for the load generator: one connection's session.
//! It writes the preface and each request's HEADERS (HPACK-coded against the server's table)
//! and DATA (within the server's windows and frame size), reads the server's frames, answers
//! SETTINGS and PING, keeps our receive windows open, and checks every response: its status,
//! its length against `content-length`, an echoed body byte for byte. What the client session must act
//! on comes out as [`Event`]s; a broken connection as a [`Fault`].
//!
//! The frame, HPACK and Huffman code is the server's (`proto::h2`).

mod conn;
mod encoder;
mod figures;
mod plan;
mod read;
mod violation;

pub use conn::{Event, Fault, H2Conn, RECV_WINDOW};
pub use figures::{Counts, H2Figures, H2Tally};
pub use plan::{fits_one_frame, H2Class, H2Plan};
pub use violation::Violation;

#[cfg(test)]
mod tests;
