//! Scenarios: TOML files, one matrix per `[[experiment]]`: models (with serve flags) and peers
//! × connection counts × repeats, under one workload. Built-in ones are compiled in.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use super::check::{check, parse};
use crate::bench::error::Error;
use crate::load::{LoadArgs, Target, Workload};

/// The built-in scenarios: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("quick", include_str!("../../../scenarios/quick.toml")),
    (
        "seed-short-conn",
        include_str!("../../../scenarios/seed-short-conn.toml"),
    ),
    (
        "seed-thread-per-conn",
        include_str!("../../../scenarios/seed-thread-per-conn.toml"),
    ),
    (
        "seed-epoll-architectures",
        include_str!("../../../scenarios/seed-epoll-architectures.toml"),
    ),
    (
        "seed-poll-vs-epoll",
        include_str!("../../../scenarios/seed-poll-vs-epoll.toml"),
    ),
    ("accept-herd", include_str!("../../../scenarios/accept-herd.toml")),
    (
        "readiness-vs-completion",
        include_str!("../../../scenarios/readiness-vs-completion.toml"),
    ),
    ("slow-handlers", include_str!("../../../scenarios/slow-handlers.toml")),
    ("uploads", include_str!("../../../scenarios/uploads.toml")),
    ("c100k", include_str!("../../../scenarios/c100k.toml")),
    ("tls-handshakes", include_str!("../../../scenarios/tls-handshakes.toml")),
    ("server-cost", include_str!("../../../scenarios/server-cost.toml")),
    ("blocking-calls", include_str!("../../../scenarios/blocking-calls.toml")),
    ("head-of-line", include_str!("../../../scenarios/head-of-line.toml")),
    ("capacity", include_str!("../../../scenarios/capacity.toml")),
    (
        "streams-vs-connections",
        include_str!("../../../scenarios/streams-vs-connections.toml"),
    ),
    ("token-streams", include_str!("../../../scenarios/token-streams.toml")),
    ("kv", include_str!("../../../scenarios/kv.toml")),
    ("products", include_str!("../../../scenarios/products.toml")),
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
    /// shape it serves best (`bench::shapes`).
    #[serde(default)]
    pub compare_shapes: bool,
    /// Runs of every cell; results give the median and the spread.
    #[serde(default = "one")]
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
    #[serde(rename = "experiment")]
    pub experiments: Vec<Experiment>,
    /// What reading the file noted (an old key read the new way): the run shows them.
    #[serde(skip)]
    pub notes: Vec<String>,
}

fn one() -> usize {
    1
}

/// The protocol an experiment speaks: the servers' `--proto` and the load's target scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Http,
    /// HTTP over TLS: models serve `--tls self-signed`, the load connects with `https://`
    /// (and `insecure` unless a `cacert` is given).
    Https,
    /// HTTP/2 in clear (prior knowledge): models serve `--proto h2`, the load connects with
    /// `h2c://` and keeps `streams` requests in flight per connection; nginx listens `http2`.
    H2,
    Echo,
    Packet,
    /// The redis protocol against the server's keyed store: models serve `--proto resp`, the
    /// load connects with `resp://` (SET and GET by `ratio`); the peer is redis-server.
    Resp,
    /// memcached's text protocol, likewise (`memcache://`); the peer is memcached.
    Memcache,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http => "http",
            Protocol::Https => "https",
            Protocol::H2 => "h2",
            Protocol::Echo => "echo",
            Protocol::Packet => "packet",
            Protocol::Resp => "resp",
            Protocol::Memcache => "memcache",
        }
    }

    /// HTTP, in clear or over TLS, 1.1 or 2.
    pub fn is_http(self) -> bool {
        matches!(self, Protocol::Http | Protocol::Https | Protocol::H2)
    }

    /// A keyed store's protocol (resp, memcache).
    pub fn is_keyed(self) -> bool {
        matches!(self, Protocol::Resp | Protocol::Memcache)
    }

    /// The server's `--proto`.
    pub fn served(self) -> &'static str {
        match self {
            Protocol::Https => "http",
            p => p.name(),
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One matrix: every target × every connection count, under one workload. Every `muxlab
/// load` flag is a key here with the same name, default and check ([`Workload`]); the keys
/// that cannot be plain flags follow one rule: what a scenario sweeps is a list and an axis
/// (`connections`), and where things run (CPUs, threads, hosts) is the scenario's own.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Experiment {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub proto: Protocol,
    /// Models, each optionally followed by serve flags: `"epoll --trigger edge"`.
    #[serde(default)]
    pub models: Vec<String>,
    /// Production servers to compare with: `"nginx"`, or `"nginx deferred"` (its listen socket
    /// with TCP_DEFER_ACCEPT, as `serve --defer-accept`).
    #[serde(default)]
    pub peers: Vec<String>,
    /// The connection counts: one cell per target and count.
    pub connections: Vec<usize>,
    /// Runs of this experiment's cells where it needs more than the scenario's `repeats` (a
    /// paired comparison is called by a sign test over its rounds: 5 won in 5 at least).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<usize>,
    /// What the load sends, how fast, for how long (every `muxlab load` flag of the workload).
    #[serde(flatten)]
    pub load: Workload,
    /// Per-request work on the server: `cpu:100us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<String>,
    /// Every model serves every GET as an event stream (`serve --stream`, e.g.
    /// `"events=200,every=exp(35ms),size=32,first=100ms"`); the load reads them as such
    /// (`sse`), and the verdicts rank the streams' lateness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Every model serves with `--work-from-request`: a request's query names its work (the
    /// load's classes, `mix = ["short=995:/?cpu=20us", ...]`, then carry their own service times).
    #[serde(default)]
    pub work_from_request: bool,
    /// The shape the description promises, checked by the verdict: `"METRIC: A < B [< C]"`,
    /// METRIC one of `throughput`, `p50`, `p99`, `cpu` (server CPU per request), optionally
    /// after a request class (`"short p99: thread < reactor"`); A, B: targets (a model entry, or
    /// a model's name where one entry has it), each value below the next beyond the noise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<String>,
    /// The metrics a choice among the targets is made on, in order (`throughput`, `p50`,
    /// `p99`, `cpu`): the verdict ranks them first, and its headline opens with the target to
    /// choose — the best on the first beyond the noise; where the first does not separate its
    /// best from the runner-up, the one of those two that is best on the next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choose_by: Vec<String>,
    /// `--workers` for models that have workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<usize>,
    /// The old way to say `proto = "https"` (still read, with a note).
    #[serde(default, skip_serializing)]
    pub tls: bool,
    /// Each cell connects from a source address of its own (127.0.0.10, .11, ...), so the
    /// TIME_WAIT sockets short connections leave behind do not slow the next cell.
    #[serde(default)]
    pub rotate_sources: bool,
    /// Every target's server up at once, the loads alternating between them repeat after
    /// repeat (the order reversed every other repeat): a change in the machine's state between
    /// repeats hits every target alike, and each cell is a short burst. The counters' figures
    /// (syscalls per request, ...) then cover all of a target's cells.
    #[serde(default)]
    pub paired: bool,
    /// A target (a model with its flags, or a peer such as `"nginx"`) every other target is
    /// compared with, cell by cell: the ratio of each figure to the reference's, with its spread,
    /// and whether it goes beyond the noise (in a paired experiment, round by round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// An open loop at a share of what an earlier experiment of the run measured:
    /// `"50% of http-keepalive"` — that share of the lowest throughput the named experiment's
    /// targets reached at the same connection count, worked out when the cell runs. Below the
    /// slowest target's rate every target keeps up, and below the client's capacity (which
    /// the named experiment, client-bound, found) the client is not the limit: latency then
    /// compares the servers. Not with `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_of: Option<String>,
    /// The experiment whose cells calibrate this one's predictions (the same targets under a
    /// lighter load, run before: `"resp-at50"` for an 80 % experiment), in place of a
    /// calibration cell of its own per design.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrate_by: Option<String>,
    /// Published numbers of the seed, shown beside the measured ones.
    #[serde(default)]
    pub published: Vec<Published>,
    /// What the seed found, in a sentence (shown in the report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_note: Option<String>,
    /// Keys that belong to nothing above (refused when the file is read).
    #[serde(flatten, skip_serializing)]
    pub(super) unknown: BTreeMap<String, serde::de::IgnoredAny>,
}

/// One number a seed article published.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    pub model: String,
    pub connections: usize,
    /// Requests (or messages) per second.
    pub rps: f64,
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
            repeats: 1,
            server_cpus: None,
            client_cpus: None,
            client_threads: None,
            threaded_cpus: None,
            server_host: None,
            client_hosts: Vec::new(),
            server_addr: None,
            steer_rx: false,
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
    pub fn steerable(&self) -> Result<(), Error> {
        if self.server_host.is_some() || !self.client_hosts.is_empty() {
            return Err(Error::Usage(
                "steers this machine's loopback: drop server_host / client_hosts, or steer_rx".into(),
            ));
        }
        if self.server_addr.as_deref().is_some_and(|a| !a.starts_with("127.")) {
            return Err(Error::Usage(
                "steers loopback: the server must listen on 127.x (server_addr)".into(),
            ));
        }
        Ok(())
    }
}

impl Experiment {
    /// Experiment `name` of `models` at `connections` under `load`, every other key at its
    /// default.
    pub fn new(
        name: &str,
        proto: Protocol,
        models: Vec<String>,
        connections: Vec<usize>,
        load: Workload,
    ) -> Experiment {
        Experiment {
            name: name.into(),
            description: String::new(),
            proto,
            models,
            peers: Vec::new(),
            connections,
            repeats: None,
            load,
            work: None,
            work_from_request: false,
            stream: None,
            expect: Vec::new(),
            choose_by: Vec::new(),
            workers: None,
            tls: false,
            rotate_sources: false,
            paired: false,
            reference: None,
            rate_of: None,
            calibrate_by: None,
            published: Vec::new(),
            seed_note: None,
            unknown: BTreeMap::new(),
        }
    }

    /// How many runs each of its cells gets when the scenario asks for `scenario`: its own
    /// `repeats` where that is more.
    pub fn rounds(&self, scenario: usize) -> usize {
        self.repeats.map_or(scenario, |r| r.max(scenario))
    }

    pub fn duration(&self) -> Option<Duration> {
        self.load.duration
    }

    pub fn warmup(&self) -> Duration {
        self.load.warmup
    }

    /// The load of one cell: this experiment's workload against `addr` with `connections`.
    pub fn load_args(&self, addr: std::net::SocketAddr, connections: usize) -> LoadArgs {
        let url = match self.proto {
            Protocol::Http => format!("http://{addr}/"),
            Protocol::Https => format!("https://{addr}/"),
            Protocol::H2 => format!("h2c://{addr}/"),
            p => format!("{p}://{addr}"),
        };
        let target = Target::parse(&url).expect("a URL made of a protocol and an address parses");
        let mut load = self.load.clone();
        // The servers bench starts for https present a self-signed certificate.
        load.insecure |= self.proto == Protocol::Https && load.cacert.is_none();
        let mut args = LoadArgs::new(target, connections, load);
        // Each cell keeps its time series (a second per interval) in its load document.
        args.interval = Some(SERIES_INTERVAL);
        args
    }
}

/// The interval of the time series every cell's load keeps.
pub const SERIES_INTERVAL: Duration = Duration::from_secs(1);

impl Experiment {
    /// The `muxlab serve` command line of a model entry (`"epoll --trigger edge"`) in this
    /// experiment (what `scenario::parse` checks with serve's own rules when the file is read).
    pub fn serve_args(&self, entry: &str, addr: &str, cpus: &str) -> Result<Vec<String>, Error> {
        let x = self;
        let mut args: Vec<String> = vec!["serve".into(), "--model".into(), model_name(entry).into()];
        args.extend(entry.split_whitespace().skip(1).map(String::from));
        args.extend([
            "--proto".into(),
            x.proto.served().into(),
            "--port".into(),
            "0".into(),
            "--addr".into(),
            addr.to_string(),
            "--cpus".into(),
            cpus.to_string(),
        ]);
        let model = crate::models::find(model_name(entry))
            .ok_or_else(|| Error::Scenario(format!("unknown model in '{entry}'")))?;
        if let Some(w) = x.workers {
            if model.workers != crate::server::Workers::None && !entry.contains("--workers") {
                args.extend(["--workers".into(), w.to_string()]);
            }
        }
        if let Some(w) = &x.work {
            args.extend(["--work".into(), w.clone()]);
        }
        if let Some(spec) = &x.stream {
            args.extend(["--stream".into(), spec.clone()]);
        }
        if x.work_from_request && !entry.contains("--work-from-request") {
            args.push("--work-from-request".into());
        }
        if x.proto == Protocol::Https {
            args.extend(["--tls".into(), "self-signed".into()]);
        }
        if x.proto == Protocol::Packet {
            // The frames the load sends: one size for both.
            args.extend(["--packet-size".into(), x.load.size.to_string()]);
        }
        Ok(args)
    }

    /// `--max-work` of the experiment's models: the first model entry's that sets it, else
    /// serve's default (10ms).
    pub fn max_work(&self) -> Duration {
        self.models
            .iter()
            .find_map(|m| {
                let mut words = m.split_whitespace().skip_while(|w| *w != "--max-work");
                words.next()?;
                crate::units::parse_duration(words.next()?).ok()
            })
            .unwrap_or(Duration::from_millis(10))
    }
}

/// The model name of a model entry (`"epoll --trigger edge"` -> `epoll`).
/// `rate_of`'s value read: the share (0, 1] and the experiment it is of.
pub fn rate_of(text: &str) -> Result<(f64, &str), String> {
    let (pct, of) = text
        .split_once(" of ")
        .ok_or_else(|| format!("'{text}': give \"P% of EXPERIMENT\", e.g. \"50% of http-keepalive\""))?;
    let share = pct
        .trim()
        .strip_suffix('%')
        .and_then(|p| p.trim().parse::<f64>().ok())
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .ok_or_else(|| format!("'{pct}': a share between 0 and 100%, such as 50%"))?;
    Ok((share / 100.0, of.trim()))
}

pub fn model_name(entry: &str) -> &str {
    entry.split_whitespace().next().unwrap_or("")
}

/// Loads a built-in scenario by name, or a TOML file by path.
pub fn load(name_or_path: &str) -> Result<Scenario, Error> {
    if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return parse(text, &format!("built-in scenario '{name_or_path}'"));
    }
    let path = Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Scenario(format!("{}: {e}", path.display())))?;
        return parse(&text, &path.display().to_string());
    }
    let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    Err(Error::Scenario(format!(
        "no scenario '{name_or_path}': use one of {} or a path to a .toml file (muxlab bench --list)",
        names.join(", ")
    )))
}

/// An HTTP experiment `e` of 1 s over `models` (TOML list items) at `connections`, with `keys`
/// (TOML lines) added, read as a scenario file is: what the unit tests build theirs from.
#[cfg(test)]
pub(crate) fn experiment_of(models: &str, connections: &str, keys: &str) -> Result<Experiment, Error> {
    let text = format!(
        "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
         models = [{models}]\nconnections = [{connections}]\nduration = \"1s\"\n{keys}"
    );
    parse(&text, "test").map(|mut s| s.experiments.remove(0))
}
