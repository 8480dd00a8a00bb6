//! `load`: the load generator. One engine and one statistics path for short-connection HTTP
//! (like ab), keep-alive and pipelined HTTP (like wrk), and echo / packet streams, closed loop or
//! open loop at a fixed rate with coordinated-omission-correct latency.
//!
//! A run is [`LoadArgs`] (the flags, or a scenario's keys) resolved into a [`Spec`]; [`run`]
//! (`runner`) splits its connections over engine threads (`engine`), shows a progress line,
//! and merges the threads' [`Tally`]s into an [`Outcome`]; its [`Document`] is what `--json`
//! prints. Runs needing more descriptors than one process may open are split over child
//! processes ([`run_shards`], `processes`); their documents merge the same way ([`merge`]).
//!
//! This file is the folder's facade: its parts live in files of their own, and the folders
//! below (`engine`, `h2`, `keyed`, `slo`, `workload`, ...) reach the parts of this one only
//! through the names it gives here.

mod args;
mod bad_document;
mod bad_target;
mod byte_pattern;
mod client;
mod document;
mod engine;
mod environment;
mod error;
mod error_class;
mod fairness;
pub mod gates;
pub mod h2;
pub mod keyed;
pub mod limit;
pub(crate) mod live;
pub(crate) mod merge;
mod outcome;
mod pacing;
mod preflight;
mod processes;
mod progress;
mod request;
mod resolving;
mod response;
mod results;
mod rule;
mod run_config;
mod runner;
pub mod series;
mod shard;
pub mod slo;
mod sources;
mod spec;
pub mod sse;
mod stop;
pub(crate) mod summary;
mod tally;
mod tls;
mod unmergeable;
mod wall_clock;
mod workload;

pub use crate::hist::{Hist, Latency};
pub use args::LoadArgs;
pub use bad_document::{BadDocument, DocumentFault};
pub use bad_target::{BadTarget, TargetFault};
pub use byte_pattern::pattern;
pub use document::{Document, HostLine, Part, TOOL};
pub use environment::Environment;
pub use error::{io_err, Error};
pub use error_class::{ErrorClass, ERROR_CLASSES};
pub use fairness::jain;
pub use h2::{H2Figures, H2Tally};
pub use limit::ClientLimit;
pub(crate) use live::Live;
pub use outcome::Outcome;
pub use pacing::Pacing;
pub use processes::{needed as shard_processes, per_process, run as run_shards};
pub use progress::{Line, Said, Show, Tick};
pub use request::{EchoReader, Kind, Mismatch, Payload, Target};
pub use resolving::resolve;
pub use response::{HttpReader, Read};
pub use results::{ClassFigures, Results};
pub use rule::Rule;
pub use run_config::RunConfig;
pub use runner::{run, run_here};
pub use shard::{split, split_weighted, BadShard, Shard, ShardFault};
pub use spec::{Share, Spec};
pub use tally::Tally;
pub use tls::client_config as tls_client;
pub use unmergeable::{Difference, Unmergeable};
pub use wall_clock::unix_ms;
pub use workload::{
    Active, ActiveFault, Arrivals, BadActive, BadMixEntry, BadMixFile, BadSlo, Bound, Class, LineFault, MixEntry,
    MixEntryFault, Quantile, Rate, Slo, SloFault, Workload, MAX_STREAMS,
};

// The parts load's own folders share, named here for them (not beyond `load`).
use pacing::{Budget, Schedule};
// The stop flag, for the parts below (`keyed`'s prefill looks at it between blocking calls).
use request::{append_body, http_request};
use series::Clock;
use sse::{SseTally, Stream as SseStream};
use stop::STOP;
