//! `server`: what every model shares. From the bottom up: `error`, `config`, `stats` and `ctx`
//! (the context and the [`Worker`] handle); the plumbing models are built from (`accept`,
//! `conn`, `deadline`, `blocking`, `poller` + `evloop`, `handoff`, `gate`, `workers`);
//! `registry` (the model descriptor); and `serve` at the top.

pub mod accept;
pub mod blocking;
pub mod config;
pub mod conn;
pub mod ctx;
pub mod deadline;
pub mod error;
pub mod evloop;
pub mod gate;
pub mod handoff;
pub mod poller;
pub mod registry;
pub mod serve;
pub mod stats;
pub mod workers;

pub use config::{AcceptGuard, Config, Flag, ProtoName, ServeArgs, Trigger, Work, Workers};
pub use config::{READ_BUF, TICK};
pub use ctx::{Ctx, Worker};
pub use error::{io_err, Error};
pub use registry::{Family, Model};
pub use serve::serve;
pub use stats::{Counter, Counters, Stats};
