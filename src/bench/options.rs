//! What `muxlab bench` was asked ([`Options`]) and the scenario it runs ([`Which`]).

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::bench::record::scenario::Scenario;

/// The scenario a run runs.
#[derive(Debug, Clone)]
pub enum Which {
    /// A built-in scenario's name, or a TOML file's path.
    Named(String),
    /// One a program made (`muxlab advise`), checked as a file's is.
    Given(Box<Scenario>),
}

/// What `muxlab bench` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    pub scenario: Which,
    /// Benchmark this external server instead of the scenario's models.
    pub target: Option<SocketAddr>,
    /// Parent of the results directory.
    pub out: PathBuf,
    pub repeats: Option<usize>,
    /// ssh configuration for the scenario's hosts (`-F FILE`).
    pub ssh_config: Option<PathBuf>,
    /// Copy this binary to the scenario's hosts for the run.
    pub push: bool,
    /// The muxlab binary on the scenario's hosts (without `push`).
    pub remote_bin: String,
    /// Another muxlab binary: every model cell runs with it too, right after this one's
    /// (`MODEL @baseline`), for a before/after of the server in one sitting.
    pub baseline: Option<PathBuf>,
    /// Sets the scenario's `steer_rx`.
    pub steer_rx: bool,
    /// Lets idle CPUs halt as they usually do (by default they poll for the run: see
    /// [`crate::sys::cpuidle`]).
    pub deep_idle: bool,
    /// Runs a scenario estimated to take over a day (refused without).
    pub yes_long: bool,
}
