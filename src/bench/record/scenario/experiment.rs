//! An experiment: one matrix of models (with serve flags) and peers × connection counts ×
//! repeats under one workload ([`Experiment`]), the protocol it speaks ([`Protocol`]), and what
//! its entries say (`model_name`, `rate_of`, the serve and load command lines of its cells).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::entry::{BadEntry, EntryFault};
use crate::load::{LoadArgs, Target, Workload};

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
    /// Rounds of this experiment where it needs more than the scenario's `repeats` (a gap is
    /// judged by the interval of its rounds: more rounds, a narrower interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<usize>,
    /// The A/A twin: its first model served a second time in every round, the machine's noise
    /// every interval is widened to (default: wherever the experiment has two targets or more;
    /// `false` leaves it out, and the intervals rest on the rounds' own spread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twin: Option<bool>,
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
    /// An open loop at the same load for every target, each in its own units: `"70% of cal"`
    /// gives each target the rate that keeps its server's CPUs that busy by its own CPU per
    /// request in the earlier experiment `cal` (the median of its finished cells there at the
    /// same connection count): λ = 0.7 × CPUs ÷ E[S]. Two designs of different cost are then
    /// compared at one utilization, not at one rate (a costlier one at the same rate queues
    /// longer for its cost, not its architecture). Not with `rate` or `rate_of`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_of: Option<String>,
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
            twin: None,
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
            busy_of: None,
            calibrate_by: None,
            published: Vec::new(),
            seed_note: None,
            unknown: BTreeMap::new(),
        }
    }

    /// Whether its first model is served twice in every round (the A/A twin): by default where
    /// it has two targets or more.
    pub fn has_twin(&self) -> bool {
        self.twin.unwrap_or(self.models.len() + self.peers.len() >= 2) && !self.models.is_empty()
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
    pub fn serve_args(&self, entry: &str, addr: &str, cpus: &str) -> Result<Vec<String>, BadEntry> {
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
        let model = crate::models::find(model_name(entry)).ok_or_else(|| BadEntry {
            entry: entry.to_string(),
            fault: EntryFault::NoModel,
        })?;
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
        if let Some(t) = x.idle_timeout().filter(|_| !entry.contains("--idle-timeout")) {
            args.extend(["--idle-timeout".into(), crate::units::exact_duration(t)]);
        }
        Ok(args)
    }

    /// How long the experiment's connections are held open: the connect allowance (`timeout`),
    /// the warm-up and the window.
    pub fn hold(&self) -> Duration {
        self.load.timeout + self.load.warmup + self.load.duration.unwrap_or(Duration::from_secs(10))
    }

    /// The `--idle-timeout` bench gives the experiment's servers where connections hold
    /// (`active`) longer than serve's default would keep them: the hold and a minute more.
    /// `None` where the default covers it (or nothing holds). A model entry's own
    /// `--idle-timeout` wins, and `check` refuses one shorter than the hold.
    pub fn idle_timeout(&self) -> Option<Duration> {
        let default = crate::server::DEFAULT_IDLE_TIMEOUT;
        (self.load.active.is_some() && self.hold() >= default).then(|| self.hold() + default)
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

/// A `rate_of` value refused: the text given, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRateOf {
    pub given: String,
    pub why: RateOfFault,
}

/// Why a `rate_of` value is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateOfFault {
    /// No " of EXPERIMENT".
    NoOf,
    /// A share that is not a percentage in (0, 100].
    Share,
}

impl std::fmt::Display for BadRateOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = &self.given;
        match self.why {
            RateOfFault::NoOf => write!(f, "'{text}': give \"P% of EXPERIMENT\", e.g. \"50% of http-keepalive\""),
            RateOfFault::Share => {
                let pct = text.split_once(" of ").map_or(text.as_str(), |(p, _)| p);
                write!(f, "'{pct}': a share between 0 and 100%, such as 50%")
            }
        }
    }
}

impl std::error::Error for BadRateOf {}

/// `rate_of`'s value read: the share (0, 1] and the experiment it is of.
pub fn rate_of(text: &str) -> Result<(f64, &str), BadRateOf> {
    let bad = |why| BadRateOf {
        given: text.to_string(),
        why,
    };
    let (pct, of) = text.split_once(" of ").ok_or_else(|| bad(RateOfFault::NoOf))?;
    let share = pct
        .trim()
        .strip_suffix('%')
        .and_then(|p| p.trim().parse::<f64>().ok())
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .ok_or_else(|| bad(RateOfFault::Share))?;
    Ok((share / 100.0, of.trim()))
}

/// The model name of a model entry (`"epoll --trigger edge"` -> `epoll`).
pub fn model_name(entry: &str) -> &str {
    entry.split_whitespace().next().unwrap_or("")
}
