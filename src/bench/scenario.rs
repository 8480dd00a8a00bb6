//! Scenarios: TOML files, one matrix per `[[experiment]]`: models (with serve flags) and peers
//! × connection counts × repeats, under one workload. Built-in ones are compiled in.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use super::check::parse;
use super::error::Error;
use crate::units::parse_duration;

/// The built-in scenarios: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("quick", include_str!("../../scenarios/quick.toml")),
    ("seed-short-conn", include_str!("../../scenarios/seed-short-conn.toml")),
    (
        "seed-thread-per-conn",
        include_str!("../../scenarios/seed-thread-per-conn.toml"),
    ),
    (
        "seed-epoll-architectures",
        include_str!("../../scenarios/seed-epoll-architectures.toml"),
    ),
    (
        "seed-poll-vs-epoll",
        include_str!("../../scenarios/seed-poll-vs-epoll.toml"),
    ),
    ("accept-herd", include_str!("../../scenarios/accept-herd.toml")),
    (
        "readiness-vs-completion",
        include_str!("../../scenarios/readiness-vs-completion.toml"),
    ),
    ("slow-handlers", include_str!("../../scenarios/slow-handlers.toml")),
    ("uploads", include_str!("../../scenarios/uploads.toml")),
    ("c100k", include_str!("../../scenarios/c100k.toml")),
    ("tls-handshakes", include_str!("../../scenarios/tls-handshakes.toml")),
    ("server-cost", include_str!("../../scenarios/server-cost.toml")),
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
}

fn one() -> usize {
    1
}

/// One matrix: every target × every connection count.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// `http`, `echo` or `packet`.
    pub proto: String,
    /// Models, each optionally followed by serve flags: `"epoll --trigger edge"`.
    #[serde(default)]
    pub models: Vec<String>,
    /// Production servers to compare with: `"nginx"`, or `"nginx deferred"` (its listen socket
    /// with TCP_DEFER_ACCEPT, as `serve --defer-accept`).
    #[serde(default)]
    pub peers: Vec<String>,
    pub connections: Vec<usize>,
    /// Measure for this long (after `warmup`)...
    #[serde(default)]
    pub duration: Option<String>,
    /// ...or send this many requests.
    #[serde(default)]
    pub requests: Option<u64>,
    #[serde(default)]
    pub warmup: Option<String>,
    #[serde(default)]
    pub pipeline: Option<usize>,
    /// One request per connection (ab-style).
    #[serde(default)]
    pub close: bool,
    #[serde(default)]
    pub rate: Option<f64>,
    #[serde(default)]
    pub think: Option<String>,
    /// Message size for echo / packet.
    #[serde(default)]
    pub size: Option<usize>,
    /// HTTP only: a generated request body of this size (`"64KiB"`), POSTed and verified.
    #[serde(default)]
    pub body_size: Option<String>,
    /// HTTP only: send the body with chunked coding.
    #[serde(default)]
    pub chunked: bool,
    /// HTTP only: HTTPS. Models serve with `--tls self-signed`, the load connects with
    /// `https://` and `--insecure` (a full handshake per connection: no resumption).
    #[serde(default)]
    pub tls: bool,
    /// Per-request work on the server: `cpu:100us`.
    #[serde(default)]
    pub work: Option<String>,
    /// `--workers` for models that have workers.
    #[serde(default)]
    pub workers: Option<usize>,
    #[serde(default)]
    pub timeout: Option<String>,
    /// New connections per second, overall (a connect ramp for many connections).
    #[serde(default)]
    pub connect_rate: Option<f64>,
    /// Send nothing until every connection is up (`muxlab load --connect-first`).
    #[serde(default)]
    pub connect_first: bool,
    /// Client source addresses (`127.0.0.2-127.0.0.20`), for many connections.
    #[serde(default)]
    pub bind: Option<String>,
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
    #[serde(default)]
    pub reference: Option<String>,
    /// Published numbers of the seed, shown beside the measured ones.
    #[serde(default)]
    pub published: Vec<Published>,
    /// What the seed found, in a sentence (shown in the report).
    #[serde(default)]
    pub seed_note: Option<String>,
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

impl Experiment {
    pub fn duration(&self) -> Option<Duration> {
        self.duration.as_deref().and_then(|d| parse_duration(d).ok())
    }
    pub fn warmup(&self) -> Duration {
        self.warmup
            .as_deref()
            .and_then(|d| parse_duration(d).ok())
            .unwrap_or_default()
    }
}

/// The model name of a model entry (`"epoll --trigger edge"` -> `epoll`).
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
