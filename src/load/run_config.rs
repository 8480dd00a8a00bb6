//! The flags of a run as its document records them ([`RunConfig`]): what `--json` shows of
//! the command line, and what a merge checks its pieces agree on.

use serde::{Deserialize, Serialize};

use super::{Outcome, Pacing, Payload, Spec};

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

fn one() -> usize {
    1
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
