//! `bench::record`: what a bench run is and what it measured, as data. The scenario and its
//! reader (`scenario/`: the file, its experiments, their reader and checks, what an `expect` entry and a
//! peer say), one record per cell (`cell`: its status and
//! figures), how a cell's figures are derived from the load's document and the server's
//! samples (`figures`), where its time went as raw figures (`why`), the repeats taken together
//! (`repeats`), the unit costs of a syscall and a context switch (`costs`), and the results
//! files (`results`).
//!
//! Nothing here judges or measures: the verdicts a [`Results`] holds are handed to it by its
//! caller (the judge works them out), and the unit costs it records were measured by the
//! run (`bench::setup::unit_costs`). The record imports neither the judge nor the run; beside the
//! layers below, it holds bench's error type (`error`, shared by the three rooms: the record is the room below
//! the others) and the error of each concept it wraps: a cell's failure (`cell_error`), a skip's reason
//! (`skip`), a peer that did not start (`peer_error`), the samples (`sample_error`), the hosts
//! (`host_error`), steering (`steer_error`), the flags (`flag_error`), a results file (`results_error`); the
//! scenario's are its own (`scenario/`).

mod cell;
mod cell_error;
pub mod costs;
mod environment;
pub(crate) mod error;
mod figures;
mod flag_error;
mod host_error;
mod peer_error;
mod placed;
mod repeats;
pub mod results;
mod results_error;
mod sample_error;
pub mod scenario;
mod settle;
mod skip;
mod steer_error;
mod why;

pub use cell::{Cell, CellStatus, ClassFigure, CpuSource, Figures, LockFigures, StreamFigures, TWIN};
pub use cell_error::CellError;
pub use environment::{Environment, HostsEnvironment};
pub use error::Error;
pub(in crate::bench) use figures::{counters, figures, Samples};
pub use flag_error::{FlagError, SettingFault};
pub use host_error::HostError;
pub use peer_error::PeerError;
pub use placed::Placed;
pub use repeats::{drift, in_round, median, relative_spread, spread, summarize, within_rounds, Spread, Summary};
pub use results::{Results, FORMAT};
pub use results_error::ResultsError;
pub use sample_error::SampleError;
pub(in crate::bench) use scenario::serve_line;
pub use scenario::{expect, peer};
pub use settle::{settle, settle_one};
pub use skip::SkipReason;
pub use steer_error::SteerError;
pub use why::Why;
