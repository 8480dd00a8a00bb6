//! `server`: what every model shares. From the bottom up: `error`, `config`, `stats` and `ctx`
//! (the context and the [`Worker`] handle); the plumbing models are built from (`accept`,
//! `conn`, `deadline`, `blocking`, `poller` + `evloop`, `handoff`, `gate`, `workers`);
//! `registry` (the model descriptor); and `serve` at the top.

pub(crate) mod accept;
pub(crate) mod blocking;
pub(crate) mod classes;
pub(crate) mod completions;
pub(crate) mod config;
pub(crate) mod conn;
pub(crate) mod connection;
pub(crate) mod ctx;
pub(crate) mod deadline;
pub(crate) mod error;
pub(crate) mod events;
pub(crate) mod evloop;
pub(crate) mod gate;
pub mod green;
pub(crate) mod handoff;
pub(crate) mod hook;
pub(crate) mod hops;
pub(crate) mod idle;
pub(crate) mod offload;
mod per_request;
pub(crate) mod poller;
pub(crate) mod registry;
pub(crate) mod serve;
pub(crate) mod stats;
pub(crate) mod stream_spec;
pub(crate) mod waits;
pub(crate) mod work;
pub(crate) mod workers;

pub use config::{AcceptGuard, Config, Flag, ProtoName, Reserve, ServeArgs, Trigger, Work, Workers};
pub use config::{READ_BUF, TICK};
pub use ctx::{Ctx, Worker};
pub use ctx::{Job, Offloader};
pub use error::{io_err, Error};
pub use per_request::query_work;
pub use registry::{Assign, Discipline, Family, Model, Streams};
pub use serve::serve;
pub use stats::{Counter, Counters, Stats};
pub use stream_spec::{StreamBounds, StreamSpec};
