//! What a run measured, as its document says it ([`Results`]): the totals, errors by class,
//! latency percentiles, connections, fairness, the client's CPU, per-class, HTTP/2, event-stream
//! and keyed figures, and what an open loop adds, all derived from an [`Outcome`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::run_config::ClassConfig;
use super::Outcome;
use crate::hist::Latency;

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
    /// `--active`: connections open at the end that sent, and those that held (sent nothing by
    /// design); absent where every connection sends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<u64>,
    /// `--active`: held connections the server closed while they were idle (its idle timeout
    /// shorter than the hold), each opened again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_closed_by_server: Option<u64>,
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
                active: t.active,
                held: t.held,
                held_closed_by_server: t.held.map(|_| t.held_closed),
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
