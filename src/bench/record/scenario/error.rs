//! What can be wrong with a scenario ([`ScenarioError`]): a file that cannot be read, a name
//! that is no scenario, or a value refused ([`BadScenario`]: where, and its [`ScenarioFault`]).

use std::path::PathBuf;

use super::axes::BadAxis;
use super::entry::BadEntry;
use super::expect::BadExpect;
use super::experiment::{BadRateOf, Protocol};
use super::file::Unsteerable;
use super::peer::{BadPeer, BadPeerWork, Peer};

/// A scenario that cannot be run: every one is the user's to fix (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A scenario file that cannot be read.
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// A name that is neither a built-in scenario nor a file.
    #[error(
        "no scenario '{given}': use one of {} or a path to a .toml file (muxlab bench --list)",
        builtin.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
    )]
    NotFound {
        given: String,
        /// The built-in scenarios the message offers instead.
        builtin: &'static [(&'static str, &'static str)],
    },
    /// A key or value refused, where it is in the file.
    #[error(transparent)]
    Bad(Box<BadScenario>),
}

impl From<BadScenario> for ScenarioError {
    fn from(e: BadScenario) -> Self {
        ScenarioError::Bad(Box::new(e))
    }
}

impl ScenarioError {
    /// What is wrong, where a value was refused.
    pub fn fault(&self) -> Option<&ScenarioFault> {
        match self {
            ScenarioError::Bad(b) => Some(&b.fault),
            _ => None,
        }
    }

    /// The field a refused value was given in.
    pub fn field(&self) -> Option<&str> {
        match self {
            ScenarioError::Bad(b) => b.field.as_deref(),
            _ => None,
        }
    }
}

/// A value a scenario gives that is refused: the scenario (its file, or a built-in's name), the
/// line and field it is at where known, the experiment it is about, and what is wrong.
#[derive(Debug, thiserror::Error)]
pub struct BadScenario {
    /// The file's path or the built-in's name, as the message names it.
    pub origin: String,
    /// 1-based, where the scenario has text to point into.
    pub line: Option<usize>,
    pub field: Option<String>,
    /// The experiment the value is in, where the message names it.
    pub experiment: Option<String>,
    pub fault: ScenarioFault,
}

impl std::fmt::Display for BadScenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.origin)?;
        match (self.line, &self.field) {
            (Some(l), Some(field)) => write!(f, ", line {l}, field '{field}': ")?,
            (None, Some(field)) => write!(f, ", field '{field}': ")?,
            (Some(l), None) => write!(f, ", line {l}: ")?,
            (None, None) => f.write_str(": ")?,
        }
        if let Some(x) = &self.experiment {
            write!(f, "experiment '{x}': ")?;
        }
        self.fault.fmt(f)
    }
}

/// What is wrong with a scenario's value.
#[derive(Debug)]
pub enum ScenarioFault {
    /// Not TOML, or not a scenario's shape (serde's words).
    Toml(toml::de::Error),
    /// A workload key whose value the workload cannot read (serde's words).
    Value(toml::de::Error),
    /// An axis list refused.
    Axis(BadAxis),
    /// No `[[experiment]]` table.
    NoExperiments,
    /// `tls = true` (the old key) on another protocol than http.
    TlsNotHttp,
    /// Two experiments of one name.
    SameName { name: String },
    /// `server_addr` that is not an IP address.
    NotAnIp {
        given: String,
        source: std::net::AddrParseError,
    },
    /// Client hosts with no server they could reach.
    NoServerForClients,
    /// `repeats = 0`.
    ZeroRepeats,
    /// A host name ssh could read as an option.
    NotAHost { given: String },
    /// `steer_rx` where it cannot steer.
    Steer(Unsteerable),
    /// `prometheus = true` with servers or clients on other hosts.
    PrometheusWithHosts,
    /// `server_cpus` or `client_cpus` that is not a CPU list.
    Cpus(crate::units::BadValue),
    /// `threaded_cpus` that is neither a CPU list nor "all".
    ThreadedCpus(crate::units::BadValue),
    /// A key no experiment has.
    UnknownKey { key: String },
    /// No model and no peer.
    NoTargets,
    /// No connection count, or one of 0.
    NoConnections,
    /// Nothing that ends a cell: no duration, requests or slo.
    NoEnd,
    /// `work` that does not read.
    Work(<crate::server::Work as std::str::FromStr>::Err),
    /// An `expect` entry refused.
    Expect(BadExpect),
    /// A `choose_by` word that is no metric.
    NotAMetric { given: String },
    /// A request class whose work its models would refuse.
    Query {
        class: String,
        source: crate::server::RefusedWork,
    },
    /// `rotate_sources` with `bind`.
    RotateWithBind,
    /// A model entry serve would refuse.
    Entry(BadEntry),
    /// The workload load would refuse.
    Load(crate::load::Error),
    /// `paired` with `slo`.
    PairedSlo,
    /// `paired` with `server_host`.
    PairedRemote,
    /// `fail_if` with `slo`.
    FailIfSlo,
    /// A `fail_if` gate on a class the mix does not have.
    Gate(crate::load::gates::UnknownClass),
    /// A `rate_of` value refused.
    RateOf(BadRateOf),
    /// `rate_of` or `calibrate_by` naming no experiment before this one.
    NotBefore { name: String },
    /// `rate_of` with `rate` or `slo`.
    RateGiven,
    /// `rate_of` and `busy_of` both.
    TwoRates,
    /// `busy_of` on work with a blocking call.
    BusyOfCalls,
    /// `rate_of` naming an experiment without cells at one of this one's counts.
    NoCellsAt { of: String, conns: usize },
    /// `calibrate_by` naming an experiment of other models or protocol.
    NotSameServers { by: String },
    /// A model entry naming no model.
    UnknownModel { name: String },
    /// A peer entry refused.
    Peer(BadPeer),
    /// A peer that does not speak the experiment's protocol.
    Speaks { peer: Peer, proto: Protocol },
    /// A peer that cannot serve the experiment's work.
    PeerWork(BadPeerWork),
    /// `reference` naming none of the experiment's targets.
    NotATarget { given: String },
}

impl std::fmt::Display for ScenarioFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use ScenarioFault as F;
        match self {
            F::Toml(e) | F::Value(e) => f.write_str(e.message().trim()),
            F::Axis(e) => e.fmt(f),
            F::Steer(e) => e.fmt(f),
            F::Cpus(e) => e.fmt(f),
            F::Gate(e) => e.fmt(f),
            F::ThreadedCpus(e) => write!(f, "{e} (or \"all\": every CPU of this machine)"),
            F::Work(e) => e.fmt(f),
            F::Expect(e) => e.fmt(f),
            F::Query { class, source } => write!(f, "class '{class}': {source}"),
            F::Entry(e) => write!(f, "\"{}\": {e}", e.entry),
            F::Load(e) => e.fmt(f),
            F::RateOf(e) => e.fmt(f),
            F::Peer(e) => e.fmt(f),
            F::PeerWork(e) => e.fmt(f),
            F::Speaks { peer, proto } => {
                write!(f, "{} speaks {}, not {proto}", peer.product(), peer.protocols())
            }
            F::NoExperiments => f.write_str("no [[experiment]] tables"),
            F::SameName { name } => write!(
                f,
                "'{name}' names two experiments (an axis's values may give one name twice): rename one"
            ),
            F::NotAnIp { given, .. } => write!(f, "'{given}' is not an IP address"),
            F::NoServerForClients => f.write_str(
                "the client hosts cannot reach a server on 127.0.0.1: give server_host, or server_addr \
                 (this machine's address as they reach it)",
            ),
            F::ZeroRepeats => f.write_str("must be at least 1"),
            F::PrometheusWithHosts => f.write_str(
                "the run's Prometheus scrapes this machine's servers and loads only: drop server_host and \
                 client_hosts, or prometheus",
            ),
            F::NotAHost { given } => write!(
                f,
                "'{given}' is not a host name (a name must not be empty, start with '-', or hold spaces)"
            ),
            F::UnknownKey { key } => write!(
                f,
                "unknown key '{key}' (every flag of muxlab load's workload is a key, see muxlab load --help; \
                 where the client runs is the scenario's: client_cpus, client_threads, client_hosts)"
            ),
            F::NoTargets => f.write_str("lists no models and no peers"),
            F::NoConnections => f.write_str("needs one or more counts, each at least 1"),
            F::NoEnd => f.write_str("give a duration (\"3s\"), a number of requests, or a latency target (slo)"),
            F::NotAMetric { given } => write!(f, "'{given}' is not a metric: throughput, p50, p99 or cpu"),
            F::RotateWithBind => f.write_str("picks the source addresses itself: drop bind"),
            F::PairedSlo => f.write_str("a capacity search probes one server at a time: drop paired, or slo"),
            F::PairedRemote => f.write_str("runs every server at once on this machine: drop server_host, or paired"),
            F::FailIfSlo => f.write_str(
                "judges each cell's load, and a capacity search's cells are its probes: drop fail_if or slo",
            ),
            F::NotBefore { name } => write!(f, "'{name}' is not an experiment before this one"),
            F::RateGiven => f.write_str("works out the rate itself: drop rate (and slo)"),
            F::TwoRates => f.write_str("rate_of and busy_of each work out the rate: give one"),
            F::BusyOfCalls => f.write_str(
                "sets each rate by the server's CPU per request, and this work blocks: a blocking call's load is \
                 its pool's occupancy, the same at one rate for pools of one size: give rate",
            ),
            F::NoCellsAt { of, conns } => {
                write!(f, "'{of}' has no cells at {conns} connections to take a rate from")
            }
            F::NotSameServers { by } => write!(
                f,
                "'{by}' must serve the same models over the same protocol to calibrate them"
            ),
            F::UnknownModel { name } => write!(f, "unknown model '{name}' (see muxlab models)"),
            F::NotATarget { given } => write!(f, "\"{given}\" is not one of its models or peers"),
            F::TlsNotHttp => f.write_str("applies to http only (proto = \"https\")"),
        }
    }
}
