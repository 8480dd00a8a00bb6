//! `server`: what every model shares, in folders by concept (a facade: the parts live in the
//! files and folders below):
//!
//! - the running server: `error`, `config` (the serve flags, checked into a `Config`), `flag`
//!   (the flags only some models honour), `stats` (the counters), `ctx` (the context and the
//!   [`Worker`] handle), `gate` and `workers` (starting and stopping workers), `registry` (the
//!   model descriptor), and `serve` at the top; below them all, [`work`] (what a request costs: `--work`), `classes` (the
//!   request classes a server saw) and `stream_spec` (what an event stream is asked to be,
//!   parsed beside the configuration that reads it), and `waits` (how a connection served in
//!   blocking style waits: the contract between the blocking driver and green's parking);
//! - [`connection`]: one connection's rules, sans I/O (its deadlines, its idle shedding);
//! - [`drivers`]: what steps a connection, doing only I/O and waiting: the event loop over a
//!   poller, the readiness table, the blocking service and its waits, accepting, and handing
//!   connections to worker loops;
//! - [`green`]: the M:N runtime of the `green` model;
//! - [`crossing`]: what crosses threads (keyed hops, completions posted back to a loop);
//! - [`request`]: each request's work on its thread or a pool's, the per-request hook, event
//!   streams.

pub(crate) mod bound;
pub(crate) mod ceiling;
pub(crate) mod classes;
pub(crate) mod config;
pub(crate) mod connection;
pub(crate) mod crossing;
pub(crate) mod ctx;
pub(crate) mod drivers;
pub(crate) mod error;
pub(crate) mod flag;
pub(crate) mod gate;
pub mod green;
pub(crate) mod group;
pub(crate) mod lines;
pub(crate) mod metrics;
pub(crate) mod registry;
pub(crate) mod request;
pub(crate) mod reserve;
pub(crate) mod serve;
pub(crate) mod stats;
pub(crate) mod stream_spec;
pub(crate) mod waits;
pub(crate) mod work;
pub(crate) mod workers;

pub use ceiling::of as ceiling;
pub use classes::ROWS;
pub use config::{
    AcceptGuard, BadReserve, Config, ProtoName, Reserve, ReserveFault, ServeArgs, Trigger, Work, Workers,
};
pub use config::{DEFAULT_IDLE_TIMEOUT, READ_BUF, TICK};
pub use ctx::{Ctx, Worker};
pub use ctx::{Job, Offloader};
pub use error::{io_err, Error};
pub use flag::Flag;
pub use group::forms as forms_group;
pub use lines::Held;
pub use registry::{Assign, Discipline, Family, Model, Streams};
pub use request::{query_work, RefusedWork};
pub use serve::{check_group, serve};
pub use stats::{Counter, Counters, Stats};
pub use stream_spec::{BadStreamBounds, BadStreamSpec, PairFault, StreamBounds, StreamOver, StreamSpec};
pub use waits::{Kernel, Waits};
pub use work::{BadDist, BadWork, DistFault, WorkFault};
pub use workers::threads_and;
