//! Scenarios: TOML files, one matrix per `[[experiment]]`: models (with serve flags) and peers
//! × connection counts × repeats, under one workload. Built-in ones are compiled in.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

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

/// `muxlab load`'s workload flags, as the command line reads them.
#[derive(clap::Parser)]
#[command(no_binary_name = true)]
struct LoadLine {
    #[command(flatten)]
    config: crate::load::LoadConfig,
}

/// `muxlab serve`'s flags, as the command line reads them.
#[derive(clap::Parser)]
#[command(no_binary_name = true)]
struct ServeLine {
    #[arg(long)]
    model: String,
    #[command(flatten)]
    config: crate::server::Config,
}

/// What clap or a flag check said, in one line (clap's usage and help hints dropped).
fn first_line(e: impl std::fmt::Display) -> String {
    let text = e.to_string();
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    line.trim().trim_start_matches("error: ").to_string()
}

/// Checks a model entry with `muxlab serve`'s own rules: the flags it gives must be ones the
/// model honours, with values serve accepts (`"poll --trigger edge"` is refused here, before
/// any cell runs, as `muxlab serve --model poll --trigger edge` is).
fn check_model_entry(entry: &str, x: &Experiment, addr: &str) -> Result<(), String> {
    let args = super::process::serve_args(entry, x, addr, "0").map_err(first_line)?;
    let line = <ServeLine as clap::Parser>::try_parse_from(&args[1..]).map_err(first_line)?;
    let model = crate::models::find(&line.model).ok_or_else(|| format!("unknown model '{}'", line.model))?;
    line.config
        .validate(model.name, model.workers, model.flags)
        .map(drop)
        .map_err(first_line)
}

/// Checks an experiment's workload with `muxlab load`'s own rules, at every connection count.
fn check_workload(x: &Experiment, addr: std::net::IpAddr) -> Result<(), String> {
    for &conns in &x.connections {
        let args = super::runner::workload_args(x, std::net::SocketAddr::new(addr, 1), conns, 0);
        let line = <LoadLine as clap::Parser>::try_parse_from(&args[1..]).map_err(first_line)?;
        line.config.resolve().map_err(first_line)?;
    }
    Ok(())
}

/// The scenario key of a `muxlab load` flag a message names, if any.
fn key_of_flag(msg: &str) -> &'static str {
    const KEYS: &[(&str, &str)] = &[
        ("--pipeline", "pipeline"),
        ("--connect-rate", "connect_rate"),
        ("--rate", "rate"),
        ("--think", "think"),
        ("--close", "close"),
        ("--timeout", "timeout"),
        ("--warmup", "warmup"),
        ("--bind", "bind"),
        ("--body-size", "body_size"),
        ("--chunked", "chunked"),
        ("--size", "size"),
        ("-d", "duration"),
        ("-n", "requests"),
        ("-c", "connections"),
    ];
    KEYS.iter()
        .find(|(flag, _)| {
            msg.match_indices(flag).any(|(i, _)| {
                let after = msg[i + flag.len()..].chars().next();
                !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            })
        })
        .map_or("experiment", |(_, key)| key)
}

/// Whether a host name could be read as an option by ssh.
fn bad_host(h: &str) -> bool {
    h.is_empty() || h.starts_with('-') || h.chars().any(|c| c.is_whitespace() || c.is_control())
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

/// 1-based line of the first occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map_or(0, |i| text[..i].matches('\n').count() + 1)
}

/// 1-based line of `key = ` in the experiment whose table holds `at` (its name line), or of
/// that name line when the key is not there.
fn line_in(text: &str, at: &str, key: &str) -> usize {
    let tables = text.find("[[experiment]]").unwrap_or(0);
    let Some(start) = text[tables..].find(at).map(|i| tables + i) else {
        return 0;
    };
    let table_start = text[..start].rfind("[[experiment]]").unwrap_or(0);
    let table_end = text[start..].find("[[experiment]]").map_or(text.len(), |i| start + i);
    let table = &text[table_start..table_end];
    let found = table.lines().scan(0, |off, l| {
        let here = *off;
        *off += l.len() + 1;
        Some((here, l))
    });
    let pos = found
        .filter(|(_, l)| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with('='))
        })
        .map(|(off, _)| table_start + off)
        .next()
        .unwrap_or(start);
    text[..pos].matches('\n').count() + 1
}

/// Parses and checks a scenario; errors name `origin`, the line and the field.
pub fn parse(text: &str, origin: &str) -> Result<Scenario, Error> {
    let s: Scenario = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|sp| text[..sp.start].matches('\n').count() + 1);
        let msg = e.message().trim().to_string();
        Error::Scenario(match line {
            Some(l) => format!("{origin}, line {l}: {msg}"),
            None => format!("{origin}: {msg}"),
        })
    })?;
    let err = |needle: &str, field: &str, msg: String| {
        let l = line_of(text, needle);
        Error::Scenario(if l > 0 {
            format!("{origin}, line {l}, field '{field}': {msg}")
        } else {
            format!("{origin}, field '{field}': {msg}")
        })
    };
    if s.experiments.is_empty() {
        return Err(Error::Scenario(format!("{origin}: no [[experiment]] tables")));
    }
    if let Some(a) = &s.server_addr {
        a.parse::<std::net::IpAddr>()
            .map_err(|_| err(a, "server_addr", format!("'{a}' is not an IP address")))?;
    }
    if !s.client_hosts.is_empty() && s.server_host.is_none() && s.server_addr.is_none() {
        return Err(err(
            "client_hosts",
            "client_hosts",
            "the client hosts cannot reach a server on 127.0.0.1: give server_host, or server_addr \
             (this machine's address as they reach it)"
                .into(),
        ));
    }
    if s.repeats == 0 {
        return Err(err("repeats", "repeats", "must be at least 1".into()));
    }
    for (field, h) in s
        .server_host
        .iter()
        .map(|h| ("server_host", h))
        .chain(s.client_hosts.iter().map(|h| ("client_hosts", h)))
    {
        if bad_host(h) {
            return Err(err(
                &format!("\"{h}\""),
                field,
                format!("'{h}' is not a host name (a name must not be empty, start with '-', or hold spaces)"),
            ));
        }
    }
    if s.steer_rx {
        super::steer::applies(&s).map_err(|why| err("steer_rx", "steer_rx", why))?;
    }
    for cpus in [&s.server_cpus, &s.client_cpus].into_iter().flatten() {
        crate::units::parse_cpus(cpus).map_err(|e| err(cpus, "server_cpus / client_cpus", e.to_string()))?;
    }
    for x in &s.experiments {
        let at = format!("name = \"{}\"", x.name);
        let field_err = |field: &str, msg: String| err(&at, field, format!("experiment '{}': {msg}", x.name));
        if !["http", "echo", "packet"].contains(&x.proto.as_str()) {
            return Err(err(
                &format!("\"{}\"", x.proto),
                "proto",
                format!("'{}' is not http, echo or packet", x.proto),
            ));
        }
        if x.models.is_empty() && x.peers.is_empty() {
            return Err(field_err("models", "lists no models and no peers".into()));
        }
        for m in &x.models {
            let name = model_name(m);
            if crate::models::find(name).is_none() {
                return Err(err(
                    &format!("\"{m}\""),
                    "models",
                    format!("unknown model '{name}' (see muxlab models)"),
                ));
            }
        }
        for p in &x.peers {
            if p != "nginx" && p != "nginx deferred" {
                return Err(err(
                    &format!("\"{p}\""),
                    "peers",
                    format!("unknown peer '{p}': the peers are nginx and \"nginx deferred\""),
                ));
            }
        }
        if x.connections.is_empty() || x.connections.contains(&0) {
            return Err(field_err(
                "connections",
                "needs one or more counts, each at least 1".into(),
            ));
        }
        match (&x.duration, x.requests) {
            (Some(_), Some(_)) => return Err(field_err("duration", "give duration or requests, not both".into())),
            (None, None) => {
                return Err(field_err(
                    "duration",
                    "give a duration (\"3s\") or a number of requests".into(),
                ))
            }
            _ => {}
        }
        for (field, v) in [
            ("duration", &x.duration),
            ("warmup", &x.warmup),
            ("think", &x.think),
            ("timeout", &x.timeout),
        ] {
            if let Some(v) = v {
                parse_duration(v).map_err(|e| err(&format!("\"{v}\""), field, e.to_string()))?;
            }
        }
        if let Some(w) = &x.work {
            w.parse::<crate::server::Work>()
                .map_err(|e| err(&format!("\"{w}\""), "work", e.to_string()))?;
        }
        if x.close && x.proto != "http" {
            return Err(field_err("close", "applies to http only".into()));
        }
        if x.tls && x.proto != "http" {
            return Err(field_err("tls", "applies to http only (https)".into()));
        }
        if let Some(b) = &x.body_size {
            if x.proto != "http" {
                return Err(field_err("body_size", "applies to http only".into()));
            }
            crate::units::parse_size(b).map_err(|e| err(b, "body_size", e.to_string()))?;
        }
        if x.chunked && x.body_size.is_none() {
            return Err(field_err("chunked", "sends a body: give body_size too".into()));
        }
        if x.rotate_sources && x.bind.is_some() {
            return Err(field_err(
                "rotate_sources",
                "picks the source addresses itself: drop bind".into(),
            ));
        }
        if let Some(b) = &x.bind {
            crate::units::parse_ipv4_range(b).map_err(|e| err(b, "bind", e.to_string()))?;
        }
        if let Some(r) = &x.reference {
            if !x.models.contains(r) && !x.peers.contains(r) {
                return Err(err(
                    &format!("\"{r}\""),
                    "reference",
                    format!("experiment '{}': \"{r}\" is not one of its models or peers", x.name),
                ));
            }
        }
        // The model entries and the workload, by serve's and load's own rules: what the
        // command line would refuse is refused here, before anything runs.
        let addr = s.server_addr.as_deref().unwrap_or("127.0.0.1");
        for m in &x.models {
            check_model_entry(m, x, addr).map_err(|e| {
                err(
                    &format!("\"{m}\""),
                    "models",
                    format!("experiment '{}': \"{m}\": {e}", x.name),
                )
            })?;
        }
        check_workload(x, addr.parse().unwrap_or(std::net::Ipv4Addr::LOCALHOST.into())).map_err(|e| {
            let key = key_of_flag(&e);
            let l = line_in(text, &at, key);
            let place = if l > 0 { format!(", line {l}") } else { String::new() };
            Error::Scenario(format!("{origin}{place}, field '{key}': experiment '{}': {e}", x.name))
        })?;
        if x.paired && s.server_host.is_some() {
            return Err(field_err(
                "paired",
                "runs every server at once on this machine: drop server_host, or paired".into(),
            ));
        }
    }
    Ok(s)
}
