//! The result of a load run as one typed document: what `muxlab load --json` prints, what
//! `merge` adds up, what `--hosts` collects from each host and what bench keeps per cell.
//! Serde both ways, so every reader gets the writer's keys and types: the keys docs/design.md
//! promises (`requests`, `errors`, `duration_s`, `throughput_rps`, `latency_us`,
//! `client_cpu_s`), the flags and the machine, and the lossless `interchange` form (the
//! [`Outcome`] with its histograms) a merge is made from.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Error, Outcome, Pacing, Payload, Spec};
use crate::hist::Latency;
use crate::sys;

/// What a document's `tool` says.
pub const TOOL: &str = "muxlab load";

/// The version of the `interchange` section this build reads and writes.
const INTERCHANGE: u32 = 1;

/// One `muxlab load --json` document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    pub tool: String,
    pub version: String,
    /// The commit the binary was built from (`-dirty`: its tree had changes not committed;
    /// `unknown`: built outside a checkout); empty in documents from before builds said.
    #[serde(default)]
    pub build: String,
    pub target: String,
    pub config: RunConfig,
    pub environment: Environment,
    #[serde(flatten)]
    pub results: Results,
    pub interchange: Interchange,
    /// A merged document: one line per document it was made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// A run from other hosts (`--hosts`): one line per host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostLine>,
    /// `--slo`: the capacity found, with every probe; the rest of the document is the last
    /// probe that held (or the last probe, where none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<super::slo::Capacity>,
    /// `--fail-if`: each gate, the figure it found, and whether it held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<super::gates::Judged>,
}

/// The flags of the run, as a document records them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunConfig {
    pub kind: String,
    pub connections: usize,
    pub threads: usize,
    pub shards: usize,
    pub shard: Option<String>,
    pub duration_s: Option<f64>,
    pub requests: Option<u64>,
    pub warmup_s: f64,
    pub pacing: String,
    pub rate: Option<f64>,
    pub think_s: Option<f64>,
    pub pipeline: usize,
    /// HTTP/2 (`h2c://`, `--h2`), and its streams per connection.
    #[serde(default)]
    pub h2: bool,
    #[serde(default = "one")]
    pub streams: usize,
    pub close: bool,
    pub requests_per_conn: Option<u64>,
    pub timeout_s: f64,
    pub bind: Vec<String>,
    pub size: usize,
    pub method: String,
    pub headers: Vec<String>,
    pub body_bytes: usize,
    pub body_generated: bool,
    pub chunked: bool,
    pub connect_rate: Option<f64>,
    pub connect_first: bool,
    /// Open loop's arrivals: `uniform` or `poisson`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<String>,
    /// The request classes of `--mix` / `--mix-file`, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassConfig>,
    /// Keyed targets (`resp://`, `memcache://`): keys, their draw, value sizes, checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyed: Option<super::keyed::Config>,
    /// `--hosts`: the hosts the run was split over, and the instant they started at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_ms: Option<u64>,
}

/// A request class as the document records it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClassConfig {
    pub name: String,
    pub weight: f64,
    pub method: String,
    pub path: String,
}

/// What one request class measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClassFigures {
    /// Requests of the class completed in the window.
    pub requests: u64,
    /// Failures with a request of the class the oldest in flight.
    pub errors: u64,
    /// Its HTTP responses other than 2xx/3xx (among `requests`: refused, not served).
    #[serde(default)]
    pub non_2xx_3xx: u64,
    /// Their latency (corrected, in an open loop).
    pub latency_us: Latency,
}

/// The machine, and where client and server may run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub kernel: String,
    pub cpu_model: String,
    pub cores: usize,
    pub client_cpus: Option<String>,
    /// The process listening on the target port, when the target is on this machine.
    pub server_pid: Option<i32>,
    pub server_cpus: Option<String>,
}

/// What was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// Requests completed in the measured window.
    pub requests: u64,
    pub sent: u64,
    /// Errors by class (`refused`, `timeout`, ...), the classes with none left out.
    pub errors: BTreeMap<String, u64>,
    pub error_total: u64,
    /// HTTP responses by status class: `2xx` .. `5xx` (and `1xx` when a 101 was counted).
    pub status_classes: BTreeMap<String, u64>,
    pub non_2xx_3xx: u64,
    /// Length of the measured window.
    pub duration_s: f64,
    pub throughput_rps: f64,
    /// Latency from the intended send time (coordinated-omission corrected).
    pub latency_us: Latency,
    pub connect_latency_us: Latency,
    pub tls_handshake_us: Latency,
    pub connections: Connections,
    /// Completions per second of the window.
    pub per_second: Vec<u64>,
    pub fairness: Fairness,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// The client's CPU over the window, and per request (`None` when none completed).
    pub client_cpu_s: f64,
    pub client_cpu_per_request_us: Option<f64>,
    /// Client CPU as a share of the CPUs it could use.
    pub client_cpu_utilization: f64,
    pub client_saturated: bool,
    pub interrupted: bool,
    /// Per request class (`--mix`), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub classes: BTreeMap<String, ClassFigures>,
    /// HTTP/2 runs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h2: Option<super::H2Figures>,
    /// Runs that received event streams only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse: Option<super::sse::SseFigures>,
    /// Keyed targets only: GETs' hits and misses, SETs, how values were checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyed: Option<super::keyed::KeyedFigures>,
    /// Open loop (`--rate`) only.
    #[serde(flatten)]
    pub open_loop: Option<OpenLoop>,
}

fn one() -> usize {
    1
}

/// Connections of the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Connections {
    pub requested: usize,
    /// Open at some point (warm-up included).
    pub established: u64,
    pub connects_in_window: u64,
    pub never_connected: u64,
    #[serde(default)]
    pub connecting_s: f64,
    #[serde(default)]
    pub unresolved_at_start: u64,
}

/// How evenly the connections were served.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Fairness {
    /// Jain's index over connections (`None`: nothing was served).
    pub jain: Option<f64>,
    pub connections: usize,
    pub starved: usize,
    pub min: Option<u64>,
    pub max: Option<u64>,
}

/// What an open-loop run adds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpenLoop {
    /// Latency from the actual send time.
    pub uncorrected_latency_us: Latency,
    /// How late the client noticed requests were due, after their intended time: its own
    /// lateness (a wait for a free connection after that is counted apart).
    pub send_lag_us: Latency,
    /// Requests that, when due, found every connection busy and waited for one.
    #[serde(default)]
    pub waited_for_connection: u64,
    pub offered_rps: f64,
    pub achieved_rps: f64,
    /// Requests the window's schedule called for, and those of them not completed when it
    /// closed; `None` where the schedule is not known (a run of `-n` requests).
    pub scheduled: Option<u64>,
    pub not_completed: Option<u64>,
}

/// The lossless form of the run: everything a merge needs to rebuild its [`Outcome`] exactly.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Interchange {
    pub format: u32,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// One line of a merged document's `parts` (and a host's line in `hosts`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Part {
    pub host: String,
    pub requests: u64,
    pub throughput_rps: f64,
    pub latency_us: Latency,
    pub client_cpu_s: f64,
    pub client_saturated: bool,
    pub errors: BTreeMap<String, u64>,
    pub error_total: u64,
    pub window_start_ms: u64,
    pub environment: Option<Environment>,
}

/// A host's line in a `--hosts` document: what it measured, or why it has nothing.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum HostLine {
    Measured(Box<Part>),
    Failed { host: String, failed: String },
}

impl Environment {
    /// This machine, with the server's process when it listens on `target` here.
    pub fn here(target: std::net::SocketAddr) -> Environment {
        let (kernel, cpu_model) = sys::procfs::machine();
        let server_pid = sys::procfs::listening_pid(target.port()).filter(|_| target.ip().is_loopback());
        Environment {
            kernel,
            cpu_model,
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            client_cpus: sys::procfs::cpus_allowed(sys::process::pid()),
            server_pid,
            server_cpus: server_pid.and_then(sys::procfs::cpus_allowed),
        }
    }
}

impl RunConfig {
    /// The flags of `spec`, run by `o`'s threads and processes.
    pub fn of(spec: &Spec, o: &Outcome) -> RunConfig {
        let w = &spec.args().workload;
        RunConfig {
            kind: spec.target().kind.name().into(),
            connections: spec.connections(),
            threads: o.threads,
            shards: o.shards,
            shard: spec.shard().map(|s| s.to_string()),
            duration_s: spec.duration.map(|d| d.as_secs_f64()),
            requests: spec.requests,
            warmup_s: w.warmup.as_secs_f64(),
            pacing: match spec.args().workload.rate.filter(|r| r.is_ramp()) {
                Some(r) => format!(
                    "open loop, ramp {r} ({} req/s on average)",
                    crate::units::thousands(r.per_s().round() as u64)
                ),
                None => spec.pacing.describe(),
            },
            rate: match spec.pacing {
                Pacing::Rate(r) => Some(r),
                _ => None,
            },
            think_s: match spec.pacing {
                Pacing::Think(d) => Some(d.as_secs_f64()),
                _ => None,
            },
            pipeline: w.pipeline,
            h2: spec.h2,
            streams: w.streams,
            close: w.close,
            requests_per_conn: w.requests_per_conn,
            timeout_s: w.timeout.as_secs_f64(),
            bind: spec.sources().iter().map(|a| a.to_string()).collect(),
            size: w.size,
            method: spec.method.clone(),
            headers: w.headers.clone(),
            body_bytes: spec.payload.len(),
            body_generated: matches!(spec.payload, Payload::Generated(_)),
            chunked: w.chunked,
            connect_rate: w.connect_rate,
            connect_first: w.connect_first,
            arrivals: matches!(spec.pacing, Pacing::Rate(_)).then(|| {
                match w.arrivals {
                    super::Arrivals::Uniform => "uniform",
                    super::Arrivals::Poisson => "poisson",
                }
                .to_string()
            }),
            classes: spec
                .classes
                .iter()
                .map(|c| ClassConfig {
                    name: c.name.clone(),
                    weight: c.weight,
                    method: c.method.clone(),
                    path: c.path.clone(),
                })
                .collect(),
            keyed: spec.keyed.as_ref().map(|p| p.config()),
            hosts: None,
            start_at_ms: None,
        }
    }
}

impl Results {
    /// The figures of an outcome whose request classes are `classes` (in order).
    pub fn of(o: &Outcome, classes: &[ClassConfig]) -> Results {
        let t = &o.tally;
        let secs = o.elapsed.as_secs_f64();
        let rps = if secs > 0.0 { t.requests as f64 / secs } else { 0.0 };
        let util = o.utilization();
        Results {
            requests: t.requests,
            sent: t.sent,
            errors: t.errors_by_name(),
            error_total: t.error_total(),
            status_classes: t.status_classes(),
            non_2xx_3xx: t.non_2xx_3xx(),
            duration_s: secs,
            throughput_rps: rps,
            latency_us: t.latency.latency(),
            connect_latency_us: t.connect.latency(),
            tls_handshake_us: t.tls_handshake.latency(),
            connections: Connections {
                requested: o.connections,
                established: o.connections as u64 - t.never_connected,
                connects_in_window: t.connects,
                never_connected: t.never_connected,
                connecting_s: o.connecting.as_secs_f64(),
                unresolved_at_start: t.unresolved_at_start,
            },
            per_second: t.per_second.clone(),
            fairness: Fairness {
                jain: t.jain(),
                connections: t.per_conn.len(),
                starved: t.starved(),
                min: t.per_conn.iter().min().copied(),
                max: t.per_conn.iter().max().copied(),
            },
            bytes_in: t.bytes_in,
            bytes_out: t.bytes_out,
            client_cpu_s: o.client_cpu.as_secs_f64(),
            client_cpu_per_request_us: (t.requests > 0).then(|| o.client_cpu.as_secs_f64() * 1e6 / t.requests as f64),
            client_cpu_utilization: util,
            client_saturated: super::ClientLimit::busy(util).is_some(),
            interrupted: o.interrupted,
            classes: classes
                .iter()
                .zip(&t.classes)
                .map(|(c, k)| {
                    (
                        c.name.clone(),
                        ClassFigures {
                            requests: k.requests,
                            errors: k.errors,
                            non_2xx_3xx: k.non_2xx_3xx,
                            latency_us: k.latency.latency(),
                        },
                    )
                })
                .collect(),
            h2: t
                .h2
                .as_ref()
                .map(|h| super::H2Figures::of(h, t.requests, secs, o.connections)),
            sse: t
                .sse
                .as_ref()
                .map(|s| super::sse::SseFigures::of(s, secs, t.starved_streams().unwrap_or(t.per_conn.len()))),
            keyed: t.keyed.as_ref().map(super::keyed::KeyedFigures::of),
            // Measured only where the window's schedule is known (a duration run): else null.
            open_loop: o.offered_rps.map(|offered| OpenLoop {
                uncorrected_latency_us: t.uncorrected.latency(),
                send_lag_us: t.send_lag.latency(),
                waited_for_connection: t.waited_for_connection,
                offered_rps: offered,
                achieved_rps: rps,
                scheduled: t.scheduled,
                not_completed: t.not_completed,
            }),
        }
    }
}

impl Part {
    /// A piece `name` of a merged run (a shard file, a host).
    pub fn of(name: &str, o: &Outcome, environment: Option<Environment>) -> Part {
        let secs = o.elapsed.as_secs_f64();
        Part {
            host: name.to_string(),
            requests: o.tally.requests,
            throughput_rps: if secs > 0.0 {
                o.tally.requests as f64 / secs
            } else {
                0.0
            },
            latency_us: o.tally.latency.latency(),
            client_cpu_s: o.client_cpu.as_secs_f64(),
            client_saturated: o.saturated(),
            errors: o.tally.errors_by_name(),
            error_total: o.tally.error_total(),
            window_start_ms: o.window_start_ms,
            environment,
        }
    }
}

impl Document {
    /// The document of a run of `spec` that measured `o`.
    pub fn new(spec: &Spec, o: &Outcome) -> Document {
        Document {
            tool: TOOL.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            build: crate::origin::revision(),
            target: spec.target().url.clone(),
            config: RunConfig::of(spec, o),
            environment: Environment::here(spec.target().addr),
            results: Results::of(o, &RunConfig::of(spec, o).classes),
            interchange: Interchange {
                format: INTERCHANGE,
                outcome: o.clone(),
            },
            parts: Vec::new(),
            hosts: Vec::new(),
            capacity: None,
            gates: Vec::new(),
        }
    }

    /// The run's outcome, losslessly.
    pub fn outcome(&self) -> &Outcome {
        &self.interchange.outcome
    }

    /// Replaces what was measured with `o` (a merge of pieces): the figures and the
    /// interchange, the flags and the machine kept.
    pub fn set_outcome(&mut self, o: Outcome) {
        self.results = Results::of(&o, &self.config.classes);
        self.interchange.outcome = o;
    }

    /// Reads one document (`name` says where it came from): the error says in one line why
    /// it is not a muxlab load result, or which part of it is wrong.
    pub fn read(name: &str, text: &str) -> Result<Document, Error> {
        #[derive(Deserialize)]
        struct Head {
            tool: Option<String>,
            interchange: Option<Version>,
        }
        #[derive(Deserialize)]
        struct Version {
            format: Option<u32>,
        }
        let head: Head = serde_json::from_str(text.trim())
            .map_err(|_| Error::Usage(format!("{name}: not a muxlab load result (not a JSON document)")))?;
        if head.tool.as_deref() != Some(TOOL) {
            return Err(Error::Usage(format!(
                "{name}: not a muxlab load result (write one with muxlab load --json)"
            )));
        }
        if head.interchange.and_then(|v| v.format) != Some(INTERCHANGE) {
            return Err(Error::Usage(format!(
                "{name}: no interchange section of format {INTERCHANGE} (written by another muxlab version?)"
            )));
        }
        serde_json::from_str(text.trim()).map_err(|e| Error::Usage(format!("{name}: {e}")))
    }

    /// The warm-up the run had.
    pub fn warmup(&self) -> Duration {
        Duration::from_secs_f64(self.config.warmup_s.max(0.0))
    }
}
