//! `bench`: three rooms, importing one way, run → judge → record.
//!
//! - **run** (this module's files and folders but the two rooms): runs a scenario's matrix of
//!   cells — what it was asked (`options`), the plan of cells (`plan`) against their targets
//!   (`target`), the run itself (`run`) and the events it reports (`event`), `--list`
//!   (`list`); where things run and what a run holds (`setup/`: placement, hosts, steering,
//!   idle CPUs, the unit costs of a syscall and a switch), the processes it starts and owns
//!   (`process/`), the peers it launches (`peers/`), each cell or capacity search measured
//!   (`cell/`), the prediction each cell gets (`predict/`) — shows progress, reports each
//!   finished cell to its caller (the CLI prints it as a table row), and writes
//!   `results/<scenario>-<timestamp>/`;
//! - **judge** (`judge/`): one `Metric` type, the verdicts and their reasons, worked out from
//!   the record;
//! - **record** (`record/`): the scenario, the cells and their figures, the results files, and
//!   bench's error: data only, imports neither of the others.
//!
//! It returns the results with their verdicts; rendering them (`report.html`) is the report
//! layer's job, above this one.

mod cell;
mod event;
pub mod judge;
mod list;
mod options;
mod peers;
mod plan;
mod predict;
mod process;
mod rates;
pub mod record;
mod run;
mod setup;
mod target;

pub use event::Event;
pub use list::list;
pub use options::{Options, Which};
pub use peers::{nginx, runtimes};
pub use record::{results, scenario, Error};
pub use run::{read, run, Finished, Results};
pub use setup::{default_server_cpus, default_split, settings, steer};
pub(crate) use target::{At, Target, BASELINE};
