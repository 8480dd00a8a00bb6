//! What crosses threads: keyed commands sent to the thread that owns their key or to one
//! executor (`hops`), work done elsewhere posted back to a connection's loop (`completions`),
//! and a pool's side of offloading a request's work (`offload`). The drivers use these; they
//! use no driver.

pub(crate) mod completions;
pub(crate) mod hops;
pub(crate) mod offload;
