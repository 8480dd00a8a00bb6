//! The load generator's client side of one connection, sans I/O, in the shape of the server's
//! `server::Connection`: a [`Connection`] owns its life cycle, its protocol's [`Session`], the
//! requests in flight and those to send again, what it has yet to write, the requests its
//! socket reserved, its back-off and its stall; the engine (`load::engine`) only moves bytes,
//! keeps timers and paces requests, telling it what happened and asking what next.
//!
//! Each protocol's session is a file of its own behind one trait, [`ClientProtocol`]: HTTP/1.1
//! ([`Http1`]) and HTTP/2 ([`H2`]), both with their event streams ([`Streams`]), echo and
//! packet ([`Echo`]), RESP and memcache ([`Keyed`]). What a connection reads reaches the run
//! through the engine's [`Books`]; a test keeps books of its own and steps a connection with
//! scripted input (`tests`).

mod books;
mod connection;
mod ctx;
mod echo;
mod h2;
mod http1;
mod keyed;
mod protocol;
mod sent;
mod session;
mod setup;
mod streams;
#[cfg(test)]
mod tests;

pub use books::Books;
pub use connection::{Connection, Failed, Next, State, BACKOFF_MAX, BACKOFF_MIN};
pub use ctx::{Ctx, MAX_TRIES};
pub use echo::Echo;
pub use h2::H2;
pub use http1::Http1;
pub use keyed::Keyed;
pub use protocol::{ClientProtocol, Link};
pub use sent::{Outbox, Sent, Tickets};
pub use session::Session;
pub use setup::Setup;
pub use streams::Streams;
