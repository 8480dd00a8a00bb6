//! [`Workload`]: what is sent, how fast, for how long — one struct for `muxlab load`'s flags
//! (clap) and a scenario's experiment keys (serde), its defaults, and its flags written back;
//! with the open loop's [`Arrivals`].

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{MixEntry, Rate, Slo};
use crate::units::{exact_duration, parse_duration, serde_as, AddrRange};

fn parse_rate(s: &str) -> Result<Rate, super::BadRate> {
    s.parse()
}

fn parse_gates(s: &str) -> Result<crate::load::gates::Gates, crate::load::gates::BadGate> {
    s.parse()
}

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
    /// Pass/fail gates for CI, e.g. 'p99>10ms,errors>0.1%,rps<5000' (a class of --mix:
    /// 'short:p99>5ms'; figures p50, p90, p99, p99.9, max, errors (a count, or % of requests
    /// and errors), rps). Given, they alone decide the exit: 0 when all hold, 3 naming the
    /// failed ones (a figure not measured fails its gate). In a scenario, each cell's load is
    /// judged by them and the report shows how it fared.
    #[arg(long, value_name = "GATES", value_parser = parse_gates)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_if: Option<crate::load::gates::Gates>,
    /// Open loop: this many requests per second overall, latency corrected for coordinated
    /// omission; or a ramp: A:B/T (linear from A to B over T), A,B,C/T (steps of T each),
    /// from the measured window's start (without -d the window is the ramp's length).
    #[arg(long, value_parser = parse_rate)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
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
    /// Read every response as an event stream (SSE, LLM token streams) and measure each event:
    /// time to first event (from the intended start), the gaps between events, each stream's
    /// duration, events and bytes, its ids checked for order and loss. Without it, responses
    /// whose Content-Type is text/event-stream are measured the same way.
    #[arg(long)]
    #[serde(default)]
    pub sse: bool,
    /// HTTP/1.1: requests in flight per connection (pipelined). resp:// and memcache://:
    /// commands written at once, the next batch once all are answered (redis-benchmark -P).
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
    /// Give up on a connect or a response after this long (counted as a timeout); also how long
    /// the client waits after the window for what is still in flight (counted as unanswered if
    /// it never comes).
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
    /// The share of the connections that send, e.g. 1% (the rest hold: they connect and stay
    /// open sending nothing); the rate, or the closed loop, is spread over the senders. The
    /// document counts active and held connections apart. Not with -n, --close or
    /// --requests-per-conn (a held connection ends with the run).
    #[arg(long, value_name = "P%")]
    #[serde(default, with = "serde_as::opt_text", skip_serializing_if = "Option::is_none")]
    pub active: Option<super::Active>,
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
    /// --rate (default 1000), then bisection to 2 %, then both ends probed again over 3 times the
    /// window; each probe is a run of its own (--warmup, then -d, default 2s, lengthened until
    /// each bound has 10/(1-q) samples: 1,000 for a p99). Errors and non-2xx/3xx responses fail a
    /// probe; a miss the client's own lateness accounts for, or a shortfall of what it sent,
    /// makes the answer inconclusive.
    #[arg(long, value_name = "TARGET")]
    #[serde(default, with = "serde_as::opt_text", skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
    /// resp:// and memcache://: how many keys commands name (mx:000000000000 on).
    /// [default: 100000]
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<u64>,
    /// resp:// and memcache://: how keys are drawn: uniform or sequential (each connection
    /// over the keys it owns, every value checked against its last write) or zipf:S (S e.g.
    /// 0.99, over the whole keyspace, shared: values checked for integrity only)
    /// [default: uniform].
    #[arg(long, value_name = "DIST")]
    #[serde(default, with = "serde_as::opt_text", skip_serializing_if = "Option::is_none")]
    pub key_dist: Option<crate::load::keyed::KeyDist>,
    /// resp:// and memcache://: SETs to GETs, e.g. 1:10 (the default), 1:0 for SETs only.
    #[arg(long, value_name = "SET:GET")]
    #[serde(default, with = "serde_as::opt_text", skip_serializing_if = "Option::is_none")]
    pub ratio: Option<crate::load::keyed::Ratio>,
    /// resp:// and memcache://: a SET's value size: 64 (the default), 32-1024 (uniform),
    /// exp(512), mix(90%:64,10%:4KiB); at least 32 bytes (the value's own description) unless
    /// --no-verify.
    #[arg(long, value_name = "SIZES")]
    #[serde(default, with = "serde_as::opt_text", skip_serializing_if = "Option::is_none")]
    pub value_size: Option<crate::load::keyed::Sizes>,
    /// resp:// and memcache://: write every key once before the window, so GETs hit from
    /// the start.
    #[arg(long)]
    #[serde(default)]
    pub prefill: bool,
    /// resp:// and memcache://: do not check the values GETs return (checked by default: each
    /// value carries its key, writer, sequence and checksum).
    #[arg(long)]
    #[serde(default)]
    pub no_verify: bool,
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

fn one() -> usize {
    1
}

fn five_seconds() -> Duration {
    Duration::from_secs(5)
}

pub(in crate::load) fn message_size() -> usize {
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
            fail_if: None,
            rate: None,
            think: None,
            h2: false,
            sse: false,
            streams: one(),
            pipeline: one(),
            close: false,
            requests_per_conn: None,
            timeout: five_seconds(),
            connect_rate: None,
            active: None,
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
            keys: None,
            key_dist: None,
            ratio: None,
            value_size: None,
            prefill: false,
            no_verify: false,
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
        // Not `--fail-if`: gates judge the whole run, where it is put together (a piece that
        // exits 3 would read as a failed piece).
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
        put("active", self.active.map(|a| a.to_string()));
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
        put("keys", self.keys.map(|n| n.to_string()));
        put("key-dist", self.key_dist.map(|d| d.to_string()));
        put("ratio", self.ratio.map(|r| r.to_string()));
        put("value-size", self.value_size.as_ref().map(|v| v.to_string()));
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
            ("--prefill", self.prefill),
            ("--no-verify", self.no_verify),
        ] {
            if on {
                a.push(flag.to_string());
            }
        }
        a
    }
}
