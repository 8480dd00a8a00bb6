//! `proto`: sans-I/O protocol sessions. Bytes in, bytes out, and whether to keep the connection.
//!
//! No sockets here. Every model drives the same [`Session`], so two models differ only in how
//! they wait for and dispatch I/O, and comparing them is fair.

pub mod answer;
mod calm;
pub(crate) mod chunked;
mod contract;
mod detect;
pub(crate) mod echo;
pub mod h2;
pub(crate) mod http;
pub mod keyed;
pub(crate) mod keyed_session;
mod kind;
pub mod later;
pub mod memcache;
pub(crate) mod packet;
pub mod resp;
mod session;
pub(crate) mod tls;

#[cfg(test)]
mod later_tests;
#[cfg(test)]
mod tests;

pub use calm::{BadCalm, Calm, CalmFault, Cause, Rate};
pub use chunked::{ChunkError, Chunked, Phase};
pub(crate) use contract::shed_spans;
pub use contract::{shed, Answer, Each, Fed, Limits, Negotiate, Protocol, Request, ServeAll, StreamCounts, MAX_BODY};
pub use detect::{Choice, Detect};
pub use kind::Proto;
pub use later::{EventStream, Later};
pub use session::{Session, Speaks};
pub use tls::{server_config, BadTls, TlsFault};
