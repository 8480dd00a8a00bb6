//! The workload as a person writes it. `muxlab load`'s flags (clap) and a scenario's experiment
//! keys (serde) are one struct, [`Workload`]: a key has the flag's name, default, meaning and
//! check. [`LoadArgs`] adds what only a command line says (the target, the connection count,
//! where the client runs, its share of a split run). [`LoadArgs::resolve`] checks them and
//! makes the [`Spec`] a run uses; [`LoadArgs::to_args`] writes them back as argv, the one place
//! argv is made (shard processes, hosts, bench's load child).

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::shard::Shard;
use super::spec::{Class, Spec};
use super::{tls, unix_ms, Error, Kind, Pacing, Payload, Target};
use crate::units::{exact_duration, parse_duration, serde_as, AddrRange, CpuList};

/// What is sent, how fast, for how long: the flags of `muxlab load` that a scenario's
/// experiment may also set, under the same names (`body_size` for `--body-size`).
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Workload {
    /// Measure for this long, after the warm-up [default: 10s unless -n is given].
    #[arg(short = 'd', long, value_parser = parse_duration)]
    #[serde(default, with = "serde_as::opt_duration", skip_serializing_if = "Option::is_none")]
    pub duration: Option<Duration>,
    /// Send this many requests in all.
    #[arg(short = 'n', long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Run this long before measuring; nothing from it is counted.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    #[serde(
        default,
        serialize_with = "serde_as::duration::serialize",
        deserialize_with = "warmup_or_none"
    )]
    pub warmup: Duration,
    /// Open loop: this many requests per second overall, latency corrected for coordinated omission.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Closed loop with a pause after each response, per connection.
    #[arg(long, value_parser = parse_duration)]
    #[serde(default, with = "serde_as::opt_duration", skip_serializing_if = "Option::is_none")]
    pub think: Option<Duration>,
    /// HTTP/2 over TLS (https:// targets; ALPN h2): a server that picks http/1.1 ends the run
    /// (exit 2). With http:// it is h2c (prior knowledge), as an h2c:// target.
    #[arg(long)]
    #[serde(default)]
    pub h2: bool,
    /// HTTP/2: requests in flight per connection, each on its own stream (at most the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS).
    #[arg(long, default_value_t = 1)]
    #[serde(default = "one", deserialize_with = "pipeline_or_none")]
    pub streams: usize,
    /// HTTP/1.1: requests in flight per connection (pipelined).
    #[arg(long, default_value_t = 1)]
    #[serde(default = "one", deserialize_with = "pipeline_or_none")]
    pub pipeline: usize,
    /// One request per connection, like ab (latency includes the connect).
    #[arg(long)]
    #[serde(default)]
    pub close: bool,
    /// Open a new connection after this many requests.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_conn: Option<u64>,
    /// Give up on a connect or a response after this long (counted as a timeout).
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    #[serde(
        default = "five_seconds",
        serialize_with = "serde_as::duration::serialize",
        deserialize_with = "timeout_or_none"
    )]
    pub timeout: Duration,
    /// Open at most this many new connections per second.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_rate: Option<f64>,
    /// Send nothing until every connection is up (or --timeout has passed): the server accepts
    /// all of them before it serves any (tcpkali's way; a thread-per-connection server on few
    /// cores cannot accept while thousands of its threads are busy).
    #[arg(long)]
    #[serde(default)]
    pub connect_first: bool,
    /// Source addresses, e.g. 127.0.0.2-127.0.0.20 (several joined by commas), to get past one
    /// address's ephemeral ports.
    #[arg(long)]
    #[serde(default, with = "serde_as::opt_text", skip_serializing_if = "Option::is_none")]
    pub bind: Option<AddrRange>,
    /// Message size in bytes for echo and packet targets.
    #[arg(long, default_value_t = 128)]
    #[serde(default = "message_size", deserialize_with = "size_or_none")]
    pub size: usize,
    /// HTTP method [default: GET, or POST when a body is given].
    #[arg(short = 'm', long, default_value = "", hide_default_value = true)]
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub method: String,
    /// Request body: a string, or @FILE for a file's bytes (sent as it is in every request).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Request body of this many generated bytes per request (e.g. 64KiB); the echoed body of
    /// every 200 is verified byte for byte (muxlab's server echoes POST and PUT bodies).
    #[arg(long, value_parser = crate::units::parse_size)]
    #[serde(default, with = "serde_as::opt_size", skip_serializing_if = "Option::is_none")]
    pub body_size: Option<usize>,
    /// Send the body with chunked transfer coding instead of a Content-Length.
    #[arg(long)]
    #[serde(default)]
    pub chunked: bool,
    /// Extra HTTP header, e.g. -H 'Accept: */*' (repeatable).
    #[arg(short = 'H', long = "header")]
    #[serde(default, rename = "header", alias = "headers", skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// https: accept any server certificate (a self-signed test server).
    #[arg(long, short = 'k')]
    #[serde(default)]
    pub insecure: bool,
    /// https: trust the CA certificates in this PEM file (instead of the system's).
    #[arg(long, value_name = "FILE")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cacert: Option<PathBuf>,
    /// https: resume TLS sessions on new connections (off by default: every connection makes a
    /// full handshake, as a new visitor does).
    #[arg(long)]
    #[serde(default)]
    pub tls_resume: bool,
    /// A request class, NAME=WEIGHT:PATH (repeatable): requests pick a class by weight, and
    /// each class gets its own counts and latency (e.g. --mix short=995:/?cpu=20us
    /// --mix long=5:/?cpu=5ms against `serve --work-from-request`).
    #[arg(long = "mix", value_name = "NAME=WEIGHT:PATH")]
    #[serde(default, with = "serde_as::text_list", skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixEntry>,
    /// Request classes from a file, one per line: NAME WEIGHT METHOD PATH [@BODYFILE] (# starts
    /// a comment).
    #[arg(long, value_name = "FILE")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix_file: Option<PathBuf>,
    /// Open loop's arrivals: uniform (a fixed interval) or poisson (exponential gaps, the same
    /// mean rate).
    #[arg(long, value_enum, default_value = "uniform")]
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Seed of the random choices (classes, poisson gaps): the same seed, the same sequence.
    #[arg(long, default_value_t = 1)]
    #[serde(default = "seed_one")]
    pub seed: u64,
    /// Find the highest open-loop rate at which this latency target holds: p99<=5ms (p50, p90,
    /// p99, p999), several joined by ',', a class's as NAME:p99<=1ms. Probes at rising rates from
    /// --rate (default 1000), then bisection to 2 %; each probe is a run of its own (--warmup,
    /// then -d, default 2s). A probe the client could not drive makes the answer inconclusive.
    #[arg(long, value_name = "TARGET")]
    #[serde(default, with = "serde_as::opt_text", skip_serializing_if = "Option::is_none")]
    pub slo: Option<super::slo::Slo>,
    /// How long the --slo search may take.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    #[serde(
        default = "sixty_seconds",
        serialize_with = "serde_as::duration::serialize",
        deserialize_with = "slo_time_or_none"
    )]
    pub slo_time: Duration,
}

fn sixty_seconds() -> Duration {
    Duration::from_secs(60)
}

fn slo_time_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    Ok(serde_as::opt_duration::deserialize(d)?.unwrap_or_else(sixty_seconds))
}

fn seed_one() -> u64 {
    1
}

/// When an open loop's requests are due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// At a fixed interval.
    #[default]
    Uniform,
    /// With exponential gaps (a Poisson process): arrivals bunch as real ones do.
    Poisson,
}

/// The most streams per connection `--streams` asks for.
pub const MAX_STREAMS: usize = 1000;

/// The largest weight a class may have (weights add up in floating point: a sum that overflows
/// would send every request to one class).
const MAX_WEIGHT: f64 = 1e9;

/// One `--mix NAME=WEIGHT:PATH`.
#[derive(Debug, Clone, PartialEq)]
pub struct MixEntry {
    pub name: String,
    pub weight: f64,
    pub path: String,
}

impl std::str::FromStr for MixEntry {
    type Err = crate::units::BadValue;
    fn from_str(s: &str) -> Result<MixEntry, Self::Err> {
        let bad = || {
            crate::units::BadValue(format!(
                "--mix '{s}' is not NAME=WEIGHT:PATH (e.g. short=995:/?cpu=20us)"
            ))
        };
        let (name, rest) = s.split_once('=').ok_or_else(bad)?;
        let (weight, path) = rest.split_once(':').ok_or_else(bad)?;
        let weight: f64 = weight.trim().parse().map_err(|_| bad())?;
        if name.is_empty() || name.contains(char::is_whitespace) || !(weight > 0.0 && weight <= MAX_WEIGHT) {
            return Err(bad());
        }
        if path.contains(|c: char| c.is_whitespace() || c.is_control()) {
            return Err(crate::units::BadValue(format!(
                "--mix '{s}': the path holds a space or a control character (encode it: %20)"
            )));
        }
        if !path.starts_with('/') {
            return Err(crate::units::BadValue(format!(
                "--mix '{s}': the path must start with /"
            )));
        }
        Ok(MixEntry {
            name: name.into(),
            weight,
            path: path.into(),
        })
    }
}

impl std::fmt::Display for MixEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}:{}", self.name, self.weight, self.path)
    }
}

fn one() -> usize {
    1
}

fn five_seconds() -> Duration {
    Duration::from_secs(5)
}

fn message_size() -> usize {
    128
}

// A key written as null (results of earlier versions wrote absent keys so) means its default.
fn warmup_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    Ok(serde_as::opt_duration::deserialize(d)?.unwrap_or_default())
}

fn timeout_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    Ok(serde_as::opt_duration::deserialize(d)?.unwrap_or_else(five_seconds))
}

fn pipeline_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    Ok(Option::<usize>::deserialize(d)?.unwrap_or_else(one))
}

fn size_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    Ok(Option::<usize>::deserialize(d)?.unwrap_or_else(message_size))
}

impl Default for Workload {
    /// What an empty command line (and an experiment without workload keys) means.
    fn default() -> Self {
        Workload {
            duration: None,
            requests: None,
            warmup: Duration::ZERO,
            rate: None,
            think: None,
            h2: false,
            streams: one(),
            pipeline: one(),
            close: false,
            requests_per_conn: None,
            timeout: five_seconds(),
            connect_rate: None,
            connect_first: false,
            bind: None,
            size: message_size(),
            method: String::new(),
            body: None,
            body_size: None,
            chunked: false,
            headers: Vec::new(),
            insecure: false,
            cacert: None,
            tls_resume: false,
            mix: Vec::new(),
            mix_file: None,
            arrivals: Arrivals::Uniform,
            seed: seed_one(),
            slo: None,
            slo_time: sixty_seconds(),
        }
    }
}

impl Workload {
    /// The keys a scenario's experiment takes from this struct (its field names as serde reads
    /// them).
    pub fn keys() -> &'static [&'static str] {
        crate::units::serde_fields::<Workload>()
    }

    /// These values as `muxlab load` flags, each `--flag=VALUE` (a value may start with `-`);
    /// a value at its default is left out. clap reads them back into an equal `Workload`.
    pub fn to_args(&self) -> Vec<String> {
        let d = Workload::default();
        let mut a = Vec::new();
        let mut put = |flag: &str, value: Option<String>| {
            if let Some(v) = value {
                a.push(format!("--{flag}={v}"));
            }
        };
        put("duration", self.duration.map(exact_duration));
        put("requests", self.requests.map(|n| n.to_string()));
        put("warmup", (self.warmup != d.warmup).then(|| exact_duration(self.warmup)));
        put("rate", self.rate.map(|r| r.to_string()));
        put("think", self.think.map(exact_duration));
        put(
            "pipeline",
            (self.pipeline != d.pipeline).then(|| self.pipeline.to_string()),
        );
        put("streams", (self.streams != d.streams).then(|| self.streams.to_string()));
        put("requests-per-conn", self.requests_per_conn.map(|n| n.to_string()));
        put(
            "timeout",
            (self.timeout != d.timeout).then(|| exact_duration(self.timeout)),
        );
        put("connect-rate", self.connect_rate.map(|r| r.to_string()));
        put("bind", self.bind.as_ref().map(|b| b.to_string()));
        put("size", (self.size != d.size).then(|| self.size.to_string()));
        put("method", (!self.method.is_empty()).then(|| self.method.clone()));
        put("body", self.body.clone());
        put("body-size", self.body_size.map(|n| n.to_string()));
        put("cacert", self.cacert.as_ref().map(|p| p.display().to_string()));
        put("mix-file", self.mix_file.as_ref().map(|p| p.display().to_string()));
        put("arrivals", (self.arrivals != d.arrivals).then(|| "poisson".to_string()));
        put("seed", (self.seed != d.seed).then(|| self.seed.to_string()));
        put("slo", self.slo.as_ref().map(|s| s.to_string()));
        put(
            "slo-time",
            (self.slo_time != d.slo_time).then(|| exact_duration(self.slo_time)),
        );
        for m in &self.mix {
            put("mix", Some(m.to_string()));
        }
        for h in &self.headers {
            put("header", Some(h.clone()));
        }
        for (flag, on) in [
            ("--close", self.close),
            ("--h2", self.h2),
            ("--connect-first", self.connect_first),
            ("--chunked", self.chunked),
            ("--insecure", self.insecure),
            ("--tls-resume", self.tls_resume),
        ] {
            if on {
                a.push(flag.to_string());
            }
        }
        a
    }
}

/// A complete `muxlab load` command line: the target, how many connections, where the client
/// runs and which share of a split run it is, and the [`Workload`].
#[derive(clap::Args, Debug, Clone)]
pub struct LoadArgs {
    /// Target: http://HOST:PORT/PATH, https://HOST:PORT/PATH, h2c://HOST:PORT/PATH (HTTP/2,
    /// prior knowledge), echo://HOST:PORT or packet://HOST:PORT.
    #[arg(value_parser = Target::parse)]
    pub target: Target,
    /// Connections to keep open (or, with --close, concurrent requests).
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    /// Engine threads [default: the CPUs this process may run on].
    #[arg(short = 't', long)]
    pub threads: Option<usize>,
    /// Pin the client to these CPUs, e.g. 1.
    #[arg(long)]
    pub cpus: Option<CpuList>,
    /// Run share I of N (counting from 0) of the connections, requests and rates; run every
    /// share (anywhere: other hosts, a Kubernetes Indexed Job) with --json and add the
    /// documents up with `muxlab merge`. Shares are exact: their totals are the flags' totals.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Internal: the part of this process's share it runs when the share needs more
    /// descriptors than one process may open (set by the parent process).
    #[arg(long, hide = true)]
    pub subshard: Option<Shard>,
    /// Start at this wall-clock instant, in milliseconds since the Unix epoch (e.g.
    /// $(date -d '+20 sec' +%s%3N)), so that pieces started apart (--shard by a scheduler)
    /// measure the same window; --hosts sets it itself.
    #[arg(long, value_name = "UNIX_MS")]
    pub start_at: Option<u64>,
    #[command(flatten)]
    pub workload: Workload,
}

impl LoadArgs {
    /// The arguments of a run against `target` with `connections` and `workload`, run here.
    pub fn new(target: Target, connections: usize, workload: Workload) -> LoadArgs {
        LoadArgs {
            target,
            connections,
            threads: None,
            cpus: None,
            shard: None,
            subshard: None,
            start_at: None,
            workload,
        }
    }

    /// These arguments as `muxlab load`'s argv (after the word `load`).
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![self.target.url.clone(), format!("--connections={}", self.connections)];
        if let Some(t) = self.threads {
            a.push(format!("--threads={t}"));
        }
        if let Some(c) = &self.cpus {
            a.push(format!("--cpus={c}"));
        }
        if let Some(Shard(i, n)) = self.shard {
            a.push(format!("--shard={i}/{n}"));
        }
        if let Some(Shard(i, n)) = self.subshard {
            a.push(format!("--subshard={i}/{n}"));
        }
        if let Some(at) = self.start_at {
            a.push(format!("--start-at={at}"));
        }
        a.extend(self.workload.to_args());
        a
    }

    /// Checks the arguments and completes them (pacing, the default duration, the method's
    /// case, the body, TLS) into the plan of a run. An error names the key it is about and says
    /// in one line what to change.
    pub fn resolve(self) -> Result<Spec, Error> {
        let w = &self.workload;
        let bad = |key: &'static str, message: &str| Error::invalid(key, message);
        let http = self.target.kind == Kind::Http;
        if self.connections == 0 {
            return Err(bad("connections", "-c must be at least 1"));
        }
        if self.threads == Some(0) {
            return Err(bad("threads", "-t must be at least 1"));
        }
        let pacing = match (w.rate, w.think) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "rate",
                    "--rate (open loop) and --think (closed loop) exclude each other",
                ))
            }
            (Some(r), None) if !(r > 0.0 && r.is_finite()) => {
                return Err(bad("rate", "--rate must be a positive number"))
            }
            (Some(r), None) => Pacing::Rate(r),
            (None, Some(t)) => Pacing::Think(t),
            (None, None) => Pacing::Closed,
        };
        if http && w.size != message_size() {
            return Err(bad("size", "--size applies to echo:// and packet:// targets"));
        }
        let payload = match (&w.body, w.body_size) {
            (Some(_), Some(_)) => return Err(bad("body", "give --body or --body-size, not both")),
            (Some(b), None) => match b.strip_prefix('@') {
                Some(path) => Payload::Fixed(
                    std::fs::read(path).map_err(|e| bad("body", &format!("cannot read --body @{path}: {e}")))?,
                ),
                None => Payload::Fixed(b.clone().into_bytes()),
            },
            (None, Some(n)) => Payload::Generated(n),
            (None, None) => Payload::None,
        };
        if payload != Payload::None && !http {
            let key = if w.body.is_some() { "body" } else { "body_size" };
            return Err(bad(key, "--body and --body-size apply to http:// targets"));
        }
        if w.chunked && payload == Payload::None {
            return Err(bad("chunked", "--chunked sends a body: give --body or --body-size"));
        }
        let method = match w.method.as_str() {
            "" if payload != Payload::None => "POST".into(),
            "" => "GET".into(),
            m => m.to_ascii_uppercase(),
        };
        if w.slo.is_some() {
            if w.requests.is_some() {
                return Err(bad("requests", "--slo probes rates for a time each (-d): drop -n"));
            }
            if w.think.is_some() {
                return Err(bad("think", "--slo probes open-loop rates: drop --think"));
            }
            if w.slo_time.is_zero() {
                return Err(bad("slo_time", "--slo-time must be more than zero"));
            }
            let names: Vec<&str> = self.mix_names();
            for c in w.slo.iter().flat_map(|s| s.classes()) {
                if w.mix_file.is_none() && !names.contains(&c) {
                    return Err(bad(
                        "slo",
                        &format!("--slo names the class '{c}', which no --mix gives"),
                    ));
                }
            }
        }
        let (duration, requests) = match (w.duration, w.requests) {
            (Some(_), Some(_)) => return Err(bad("duration", "give either -d (duration) or -n (requests), not both")),
            (Some(d), _) if d.is_zero() => return Err(bad("duration", "-n and -d must be more than zero")),
            (_, Some(0)) => return Err(bad("requests", "-n and -d must be more than zero")),
            (None, None) if w.slo.is_some() => (Some(super::slo::PROBE), None),
            (None, None) => (Some(Duration::from_secs(10)), None),
            (d, n) => (d, n),
        };
        self.check_connections(http)?;
        self.check_rest(http)?;
        let h2 = self.target.h2c || w.h2;
        if h2 && !http {
            return Err(bad("h2", "--h2 applies to http:// and https:// targets"));
        }
        if h2 && w.chunked {
            return Err(bad("chunked", "--chunked is HTTP/1.1's: HTTP/2 frames the body itself"));
        }
        if h2 && w.pipeline > 1 {
            return Err(bad(
                "pipeline",
                "--pipeline is HTTP/1.1's: HTTP/2 keeps --streams requests in flight per connection",
            ));
        }
        if w.streams == 0 {
            return Err(bad("streams", "--streams must be at least 1"));
        }
        if w.streams > MAX_STREAMS {
            return Err(bad("streams", &format!("--streams is at most {MAX_STREAMS}")));
        }
        if !h2 && w.streams > 1 {
            return Err(bad(
                "streams",
                "--streams is HTTP/2's: give an h2c:// target, or https:// with --h2 (HTTP/1.1 has --pipeline)",
            ));
        }
        let tls = match (self.target.tls, w.insecure || w.cacert.is_some() || w.tls_resume) {
            (true, _) => Some(tls::client_config(w.insecure, w.cacert.as_deref(), w.tls_resume, h2)?),
            (false, true) => {
                return Err(bad(
                    "insecure",
                    "--insecure, --cacert and --tls-resume apply to https:// targets",
                ))
            }
            (false, false) => None,
        };
        let classes = self.classes(&method, &payload)?;
        let spec = Spec {
            duration,
            requests,
            pacing,
            payload,
            method,
            tls,
            classes,
            h2,
            args: self,
        };
        if h2 && !super::h2::fits_one_frame(&super::h2::H2Plan::of(&spec).classes) {
            return Err(bad(
                "header",
                "the request's headers (-H, the path) take more than one HTTP/2 frame (16 KiB): shorten them",
            ));
        }
        Ok(spec)
    }

    /// The rules about connections: how requests share them.
    fn check_connections(&self, http: bool) -> Result<(), Error> {
        let w = &self.workload;
        let bad = |key: &'static str, message: &str| Err(Error::invalid(key, message));
        if w.pipeline == 0 {
            return bad("pipeline", "--pipeline must be at least 1");
        }
        if w.close && w.pipeline > 1 {
            return bad("pipeline", "--pipeline needs keep-alive connections: drop --close");
        }
        if w.close && !http {
            return bad("close", "--close applies to http:// targets");
        }
        if w.close && w.requests_per_conn.is_some() {
            return bad(
                "requests_per_conn",
                "--close already means one request per connection: drop --requests-per-conn",
            );
        }
        if w.requests_per_conn == Some(0) {
            return bad("requests_per_conn", "--requests-per-conn must be at least 1");
        }
        if w.connect_rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            return bad("connect_rate", "--connect-rate must be a positive number");
        }
        if let Some(Shard(_, n)) = self.shard {
            if n > self.connections {
                return Err(Error::invalid(
                    "shard",
                    &format!(
                        "-c {} cannot be split into {n} shares: every share needs a connection",
                        self.connections
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The rules about everything else: sizes, sources, timeouts, headers, the start.
    fn check_rest(&self, http: bool) -> Result<(), Error> {
        let w = &self.workload;
        if !http && w.size == 0 {
            return Err(Error::invalid("size", "--size must be at least 1 byte"));
        }
        if w.bind.is_some() && !self.target.addr.is_ipv4() {
            return Err(Error::invalid(
                "bind",
                "--bind takes IPv4 addresses, the target is IPv6",
            ));
        }
        if w.timeout.is_zero() {
            return Err(Error::invalid("timeout", "--timeout must be more than zero"));
        }
        for h in &w.headers {
            let name = h.split_once(':').map(|(n, _)| n);
            let token = |n: &str| {
                !n.is_empty()
                    && n.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            };
            if !name.is_some_and(token) || h.contains(['\r', '\n']) {
                return Err(Error::invalid(
                    "header",
                    &format!(
                        "-H '{h}' is not a header: give 'Name: value' (a name of letters, digits and -, one line)"
                    ),
                ));
            }
        }
        if let Some(at) = self.start_at {
            let ahead = at.saturating_sub(unix_ms()) / 1000;
            if ahead > 3600 {
                return Err(Error::invalid(
                    "start_at",
                    &format!(
                        "--start-at {at} is {ahead} s away (more than an hour): give milliseconds since the epoch, e.g. $(date -d '+20 sec' +%s%3N)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The names of the `--mix` classes.
    fn mix_names(&self) -> Vec<&str> {
        self.workload.mix.iter().map(|m| m.name.as_str()).collect()
    }

    /// The classes of `--mix` (with the run's method and body) and of `--mix-file` (each with
    /// its own); names unique, http only, at most 255.
    fn classes(&self, method: &str, payload: &Payload) -> Result<Vec<Class>, Error> {
        let w = &self.workload;
        let mut classes: Vec<Class> = w
            .mix
            .iter()
            .map(|m| Class {
                name: m.name.clone(),
                weight: m.weight,
                method: method.to_string(),
                path: m.path.clone(),
                payload: payload.clone(),
            })
            .collect();
        if let Some(path) = &w.mix_file {
            classes.extend(read_mix_file(path, payload)?);
        }
        if classes.is_empty() {
            return Ok(classes);
        }
        let key = if w.mix.is_empty() { "mix_file" } else { "mix" };
        if self.target.kind != Kind::Http {
            return Err(Error::invalid(key, "--mix and --mix-file apply to http:// targets"));
        }
        if classes.len() > 255 {
            return Err(Error::invalid(key, "a mix holds at most 255 classes"));
        }
        for (i, c) in classes.iter().enumerate() {
            if classes[..i].iter().any(|o| o.name == c.name) {
                return Err(Error::invalid(
                    key,
                    &format!("the class name '{}' is given twice", c.name),
                ));
            }
            if c.method == "HEAD" {
                return Err(Error::invalid(
                    key,
                    "a mix cannot hold HEAD requests (their responses carry no body)",
                ));
            }
        }
        Ok(classes)
    }

    /// The source addresses of `--bind` (none: the kernel picks).
    pub fn sources(&self) -> &[Ipv4Addr] {
        self.workload.bind.as_ref().map_or(&[], |b| &b.0)
    }
}

/// The classes of a `--mix-file`: `NAME WEIGHT METHOD PATH [@BODYFILE]` per line. A class
/// with a body file sends its bytes; one without sends the run's body (`payload`).
fn read_mix_file(path: &std::path::Path, payload: &Payload) -> Result<Vec<Class>, Error> {
    let name = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::invalid("mix_file", &format!("cannot read --mix-file {name}: {e}")))?;
    let mut classes = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| Error::invalid("mix_file", &format!("--mix-file {name}, line {}: {why}", n + 1));
        let words: Vec<&str> = line.split_whitespace().collect();
        let [class, weight, method, target, rest @ ..] = words.as_slice() else {
            return Err(bad("write NAME WEIGHT METHOD PATH [@BODYFILE]"));
        };
        let weight: f64 = weight
            .parse()
            .ok()
            .filter(|w: &f64| *w > 0.0 && *w <= MAX_WEIGHT)
            .ok_or_else(|| {
                bad(&format!(
                    "the weight '{weight}' is not a number above 0 and at most 1e9"
                ))
            })?;
        if !target.starts_with('/') {
            return Err(bad(&format!("the path '{target}' must start with /")));
        }
        let body = match rest {
            [] => payload.clone(),
            [file] => {
                let file = file
                    .strip_prefix('@')
                    .ok_or_else(|| bad(&format!("'{file}': a body file is written @FILE")))?;
                if matches!(payload, Payload::Generated(_)) {
                    return Err(bad(
                        "a class's body file cannot go with --body-size (whose echoes are verified)",
                    ));
                }
                Payload::Fixed(std::fs::read(file).map_err(|e| bad(&format!("cannot read @{file}: {e}")))?)
            }
            _ => return Err(bad("too many words: NAME WEIGHT METHOD PATH [@BODYFILE]")),
        };
        classes.push(Class {
            name: class.to_string(),
            weight,
            method: method.to_ascii_uppercase(),
            path: target.to_string(),
            payload: body,
        });
    }
    Ok(classes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    #[command(no_binary_name = true)]
    struct Line {
        #[command(flatten)]
        args: LoadArgs,
    }

    fn parse(args: &[String]) -> LoadArgs {
        Line::try_parse_from(args)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .args
    }

    #[test]
    fn an_empty_command_line_and_an_empty_experiment_mean_the_same_workload() {
        let clap = parse(&["http://127.0.0.1:1/".to_string()]).workload;
        let serde: Workload = toml::from_str("").unwrap();
        assert_eq!(clap, serde);
        assert_eq!(clap, Workload::default());
    }

    #[test]
    fn argv_made_from_a_workload_reads_back_as_the_same_workload() {
        let toml = r#"
            duration = "1.5s"
            warmup = "250ms"
            think = "3us"
            pipeline = 4
            timeout = "2s"
            connect_rate = 1500.5
            connect_first = true
            bind = "127.0.0.2-127.0.0.4,127.0.0.9"
            size = 64
            method = "put"
            body = "-starts with a dash"
            header = ["Accept: */*", "X-A: b"]
            insecure = true
            tls_resume = true
            requests_per_conn = 7
        "#;
        let w: Workload = toml::from_str(toml).unwrap();
        let args = LoadArgs::new(Target::parse("http://127.0.0.1:1/").unwrap(), 3, w.clone());
        let back = parse(&args.to_args());
        assert_eq!(back.workload, w);
        assert_eq!(back.connections, 3);
        let w: Workload = toml::from_str(
            "requests = 9\nrate = -3.0\nbody_size = \"64KiB\"\nchunked = true\nclose = true\ncacert = \"/x.pem\"",
        )
        .unwrap();
        assert_eq!(w.body_size, Some(65536));
        let args = LoadArgs::new(Target::parse("http://127.0.0.1:1/").unwrap(), 1, w.clone());
        assert_eq!(parse(&args.to_args()).workload, w);
    }

    #[test]
    fn every_check_names_the_key_it_is_about() {
        let target = || Target::parse("http://127.0.0.1:1/").unwrap();
        for (toml, key) in [
            ("rate = 0.0", "rate"),
            ("pipeline = 0", "pipeline"),
            ("close = true\npipeline = 2", "pipeline"),
            ("timeout = \"0s\"", "timeout"),
            ("connect_rate = -1.0", "connect_rate"),
            ("size = 64", "size"),
            ("chunked = true", "chunked"),
            ("header = [\"no colon\"]", "header"),
            ("duration = \"1s\"\nrequests = 3", "duration"),
            ("insecure = true", "insecure"),
        ] {
            let w: Workload = toml::from_str(toml).unwrap();
            let e = LoadArgs::new(target(), 1, w).resolve().unwrap_err();
            assert_eq!(e.key(), Some(key), "{toml}: {e}");
        }
    }

    #[test]
    fn a_mix_entry_has_a_name_a_bounded_weight_and_a_plain_path() {
        let m: MixEntry = "short=995:/?cpu=20us".parse().unwrap();
        assert_eq!(
            (m.name.as_str(), m.weight, m.path.as_str()),
            ("short", 995.0, "/?cpu=20us")
        );
        for bad in [
            "x=1e300:/",
            "x=0:/",
            "x=-1:/",
            "x=nan:/",
            "=1:/",
            "x=1:/a b",
            "x=1:/a\tb",
            "x=1:a",
            "x:/",
        ] {
            assert!(bad.parse::<MixEntry>().is_err(), "{bad}");
        }
        assert!("x=1e9:/".parse::<MixEntry>().is_ok());
    }
}
