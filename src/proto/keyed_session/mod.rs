//! What every keyed session (RESP, memcache) keeps beside its protocol's own parse state, and
//! what its [`Protocol`](super::Protocol) answers come from: the input not run yet ([`Input`]),
//! the answers other threads owe in order and the replies behind them ([`Slots`], [`Sink`]),
//! and the one feed loop both protocols' framings ([`Framing`]) run in ([`Core`]).

mod input;
mod later;
mod session;

pub(crate) use input::Input;
#[cfg(test)]
pub(crate) use later::MAX_WAITING;
pub(crate) use later::{Sink, Slots};
pub(crate) use session::{complete, feed, Core, Framing};
