//! A whole scenario file ([`Scenario`]): the run's own keys (repeats, CPUs, hosts) and its
//! `[[experiment]]` tables; the built-in ones, compiled in ([`BUILTIN`]).

use serde::{Deserialize, Serialize};

use super::experiment::Experiment;

/// The built-in scenarios: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("quick", include_str!("../../../../scenarios/quick.toml")),
    (
        "seed-short-conn",
        include_str!("../../../../scenarios/seed-short-conn.toml"),
    ),
    (
        "seed-thread-per-conn",
        include_str!("../../../../scenarios/seed-thread-per-conn.toml"),
    ),
    (
        "seed-epoll-architectures",
        include_str!("../../../../scenarios/seed-epoll-architectures.toml"),
    ),
    (
        "seed-poll-vs-epoll",
        include_str!("../../../../scenarios/seed-poll-vs-epoll.toml"),
    ),
    ("accept-herd", include_str!("../../../../scenarios/accept-herd.toml")),
    (
        "readiness-vs-completion",
        include_str!("../../../../scenarios/readiness-vs-completion.toml"),
    ),
    (
        "slow-handlers",
        include_str!("../../../../scenarios/slow-handlers.toml"),
    ),
    ("uploads", include_str!("../../../../scenarios/uploads.toml")),
    ("c100k", include_str!("../../../../scenarios/c100k.toml")),
    ("c1m", include_str!("../../../../scenarios/c1m.toml")),
    ("hold-100k", include_str!("../../../../scenarios/hold-100k.toml")),
    (
        "tls-handshakes",
        include_str!("../../../../scenarios/tls-handshakes.toml"),
    ),
    ("server-cost", include_str!("../../../../scenarios/server-cost.toml")),
    (
        "blocking-calls",
        include_str!("../../../../scenarios/blocking-calls.toml"),
    ),
    ("head-of-line", include_str!("../../../../scenarios/head-of-line.toml")),
    ("capacity", include_str!("../../../../scenarios/capacity.toml")),
    (
        "streams-vs-connections",
        include_str!("../../../../scenarios/streams-vs-connections.toml"),
    ),
    (
        "token-streams",
        include_str!("../../../../scenarios/token-streams.toml"),
    ),
    ("kv", include_str!("../../../../scenarios/kv.toml")),
    ("products", include_str!("../../../../scenarios/products.toml")),
];

/// A whole scenario file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// The seed article this reproduces (000..003), if any.
    #[serde(default)]
    pub seed: Option<String>,
    /// The experiments are shapes of one load (the same requests in flight carried by other
    /// connections, pipelines or streams): the verdict also says, target by target, which
    /// shape it serves best (the judge's shapes).
    #[serde(default)]
    pub compare_shapes: bool,
    /// Rounds: each visits every target once, at every connection count (the order rotating
    /// from round to round and reversed every other round). A gap is judged by the interval of
    /// its rounds; one round is shown and never judged. Default [`ROUNDS`].
    #[serde(default = "rounds")]
    pub repeats: usize,
    /// CPUs for the server and for the client (default: 0 and 1 on a machine with 2+ CPUs).
    #[serde(default)]
    pub server_cpus: Option<String>,
    #[serde(default)]
    pub client_cpus: Option<String>,
    /// Client engine threads (default: 1 on a 2-core machine, else one per client CPU).
    #[serde(default)]
    pub client_threads: Option<usize>,
    /// CPUs for the targets that serve on more than one thread (a model with several workers
    /// or a thread beside them, a peer with several threads); the others keep `server_cpus`.
    /// A CPU list, or `"all"`: every CPU of this machine, the client's too (the client then
    /// runs beside them, and each cell's bound-by card says whether it delayed them). This
    /// machine only (a server host gives the server all its CPUs anyway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threaded_cpus: Option<String>,
    /// Run the servers on this host, over ssh (as ssh names it; `--ssh-config` applies).
    #[serde(default)]
    pub server_host: Option<String>,
    /// Run the load from these hosts, over ssh (`muxlab load --hosts`).
    #[serde(default)]
    pub client_hosts: Vec<String>,
    /// The address the server listens on and the clients connect to (default: 127.0.0.1, or
    /// `server_host`'s address as ssh reaches it).
    #[serde(default)]
    pub server_addr: Option<String>,
    /// Steer loopback's receive processing to the client's CPUs for the run (RPS on `lo`,
    /// machine-wide, root; restored at the end): the server then pays for its own side only, as
    /// behind a NIC (see `bench::steer`). This machine only, server on 127.x.
    #[serde(default)]
    pub steer_rx: bool,
    /// Kernel settings the run needs at least, by name (`"vm.max_map_count" = "70000"`), beside
    /// those its counts of connections make it need: raised for the run as root and put back
    /// after (see `bench::setup::settings`), refused without root, naming each.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings: std::collections::BTreeMap<String, String>,
    /// Start a Prometheus (Debian's package) for the run, scraping every model's
    /// `serve --metrics` and every load's `load --metrics` each second into the run's directory
    /// (`prometheus/`), labelled by experiment and target. This machine only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prometheus: bool,
    #[serde(rename = "experiment")]
    pub experiments: Vec<Experiment>,
    /// What reading the file noted (an old key read the new way): the run shows them.
    #[serde(skip)]
    pub notes: Vec<String>,
}

/// The rounds a scenario runs where it does not say: the fewest an interval is taken from with
/// a t of its own (two rounds give one degree of freedom and an interval six times as wide).
pub const ROUNDS: usize = 3;

fn rounds() -> usize {
    ROUNDS
}

impl Scenario {
    /// A scenario of `experiments` with every other key at its default, as a program (not a
    /// file) makes one: `check::check` then reads it as a file's would be.
    pub fn of(name: &str, description: &str, experiments: Vec<Experiment>) -> Scenario {
        Scenario {
            name: name.into(),
            description: description.into(),
            seed: None,
            compare_shapes: false,
            repeats: ROUNDS,
            server_cpus: None,
            client_cpus: None,
            client_threads: None,
            threaded_cpus: None,
            server_host: None,
            client_hosts: Vec::new(),
            server_addr: None,
            steer_rx: false,
            settings: Default::default(),
            prometheus: false,
            experiments,
            notes: Vec::new(),
        }
    }

    /// The scenario as a TOML file writes it (`muxlab bench FILE` reads it back).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a scenario serialises")
    }

    /// Whether its loopback can be steered (`steer_rx`): its servers and clients on this
    /// machine, over loopback. The reason when not.
    pub fn steerable(&self) -> Result<(), Unsteerable> {
        if self.server_host.is_some() || !self.client_hosts.is_empty() {
            return Err(Unsteerable::Hosts);
        }
        if self.server_addr.as_deref().is_some_and(|a| !a.starts_with("127.")) {
            return Err(Unsteerable::NotLoopback);
        }
        Ok(())
    }
}

/// Why a scenario's loopback cannot be steered (`steer_rx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unsteerable {
    /// Its server or clients run on other hosts.
    #[error("steers this machine's loopback: drop server_host / client_hosts, or steer_rx")]
    Hosts,
    /// Its server listens on an address that is not loopback's.
    #[error("steers loopback: the server must listen on 127.x (server_addr)")]
    NotLoopback,
}
