//! A request's work: what `--work` costs the thread that handles a request (`work`), each
//! request's draw on its thread (`per_request`), the hook every session calls per request
//! (`hook`), the classes of work a server saw (`classes`), and event streams (`stream_spec`,
//! `events`).

pub(crate) mod classes;
pub(crate) mod events;
pub(crate) mod hook;
mod per_request;
pub(crate) mod stream_spec;
pub(crate) mod work;

pub use per_request::query_work;
pub use stream_spec::{StreamBounds, StreamSpec};
