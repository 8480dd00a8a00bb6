//! Keyed state's commands as RESP and memcache carry them, in one protocol-free form: what a
//! session hands its hook ([`super::Each::command`]), and the replies a store gives back
//! through the session's encoder ([`Replies`]), so a value goes from the table to the output
//! without a copy in between.
//!
//! A protocol parses its command into an [`Op`] (RESP's `SET k v NX EX 10` and memcache's
//! `add k 0 10 1` are the same op), the hook runs it against the design's store, and the
//! store answers with [`Replies`] calls the session encodes in its own protocol ([`Form`]).
//! What a keyed session keeps is `keyed_session`'s; answering on another thread, `answer`'s.

mod form;
mod op;
mod owned;
mod reply;
mod rest;
mod room;

pub use form::{Form, McVerb, RespVerb};
pub use op::{Args, Counting, Op, OpKind, When};
pub use owned::OwnedOp;
pub(crate) use reply::{decimal, integer};
pub use reply::{Item, KeyedError, Outcome, Replies};
pub use rest::{Again, Answered};
pub use room::{Draw, Room};
