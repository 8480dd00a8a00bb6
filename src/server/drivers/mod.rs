//! What steps a [`Connection`](super::connection::Connection), doing only its own I/O and
//! waiting: the event loop (`evloop`) over a `poller`, the readiness-driven connection table
//! (`conn`), the blocking service (`blocking`), accepting
//! (`accept`), and handing accepted connections to worker loops (`handoff`). uring and tokio
//! step it in their model files.

pub(crate) mod accept;
pub(crate) mod blocking;
pub(crate) mod conn;
pub(crate) mod evloop;
pub(crate) mod handoff;
pub(crate) mod poller;
