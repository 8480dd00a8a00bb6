//! `server`: what every model shares. From the bottom up: `ctx` (the context, the [`Worker`]
//! handle, errors), `config` and `stats`; the plumbing models are built from (`accept`, `conn`,
//! `blocking`, `poller` + `evloop`, `handoff`, `gate`, `workers`); `registry` (the model
//! descriptor); and `serve` at the top.

pub mod accept;
pub mod blocking;
pub mod config;
pub mod conn;
pub mod ctx;
pub mod evloop;
pub mod gate;
pub mod handoff;
pub mod poller;
pub mod registry;
pub mod serve;
pub mod stats;
pub mod workers;

pub use config::{AcceptGuard, Config, Flag, Trigger, Work, Workers};
pub use ctx::{io_err, Ctx, Error, Worker, READ_BUF, TICK};
pub use registry::{Family, Model};
pub use serve::serve;
pub use stats::{Counter, Counters, Stats};
