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

// What the engine steps: a connection, made from the run's setup, reporting to its books.
pub use books::Books;
pub use connection::{Connection, Next, Reuse, State};
pub use protocol::Link;
pub use sent::Sent;
pub use setup::Setup;

// The protocols' sessions and what they reach of their connection: for this folder only.
use ctx::Ctx;
use echo::Echo;
use h2::H2;
use http1::Http1;
use keyed::Keyed;
use protocol::ClientProtocol;
use sent::{Outbox, Tickets};
use session::Session;
use streams::Streams;
// What the scripted tests check besides (`tests/`, a subfolder: through this facade).
#[cfg(test)]
use connection::{Failed, BACKOFF_MIN};
#[cfg(test)]
use ctx::MAX_TRIES;
