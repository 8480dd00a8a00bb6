//! What crosses threads: keyed commands sent to the thread that owns their key or to one
//! executor (`hops`), work done elsewhere posted back to a connection's loop (`completions`),
//! connections handed from an acceptor to a worker's loop (`handoff`), and a pool's side of
//! offloading a request's work (`offload`).

pub(crate) mod completions;
pub(crate) mod handoff;
pub(crate) mod hops;
pub(crate) mod offload;
