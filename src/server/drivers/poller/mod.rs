//! The poller: how an event loop waits for many descriptors at once. One small trait, one
//! backend per mechanism (`select`, `poll`, `epoll`), each with the same functions, the way
//! redis keeps `ae_select.c`, `ae_epoll.c`... beside one `ae.c`. The event loop (`evloop.rs`)
//! drives connections the same way over any of them; a model picks its backend.
//!
//! Contract: a descriptor is registered at most once, under a token of the caller's choosing;
//! `wait` reports the tokens of ready descriptors and how many descriptors it examined to find
//! them (all watched ones for select and poll, only the ready ones for epoll). Backends are
//! level-triggered unless [`Poller::edge`] says otherwise.

mod contract;
pub(crate) mod epoll;
pub(crate) mod poll;
pub(crate) mod select;
#[cfg(test)]
mod tests;

pub use contract::{Interest, Poller};
pub use epoll::Epoll;
pub use poll::Poll;
pub use select::Select;
