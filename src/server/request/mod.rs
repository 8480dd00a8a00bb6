//! A request's work: each request's draw on the thread that handles it (`per_request`), a
//! pool's side of offloading it (`offload`), the hook every session calls per request
//! (`hook`), and serving event streams (`events`).

pub(crate) mod events;
pub(crate) mod hook;
pub(crate) mod offload;
mod per_request;

pub use per_request::{query_work, RefusedWork};
