//! One probe of a capacity search: its length and warm-up where the run gives none, and what it
//! offered, measured and found ([`Probe`]), or why it says nothing of the server ([`Nothing`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A probe's own length when the run gives no `-d`.
pub const PROBE: Duration = Duration::from_secs(2);

/// A probe's own warm-up when the run gives no `--warmup`: its connections' first requests
/// (and a server's first touches of their buffers) are not the steady state.
pub const PROBE_WARMUP: Duration = Duration::from_millis(300);

/// A probe's warm-up: `--warmup`, or [`PROBE_WARMUP`] where it is zero.
pub fn probe_warmup(given: Duration) -> Duration {
    if given.is_zero() {
        PROBE_WARMUP
    } else {
        given
    }
}

/// Why a probe says nothing of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Nothing {
    /// The client was the limit ([`ClientLimit`](crate::load::ClientLimit)).
    Client,
    /// A bound had fewer samples than it needs to be judged.
    TooFewSamples,
}

/// One probe: what was offered and measured, and whether the target held — with what a reader
/// needs to audit the judgement (samples, the client's CPU and lateness, waits, errors).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub offered_rps: f64,
    /// Completions per second (the server's throughput).
    pub achieved_rps: Option<f64>,
    /// Requests the client sent per second of the window (what it offered).
    #[serde(default)]
    pub sent_rps: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// `None`: the probe says nothing of the server (`nothing` says why).
    pub holds: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nothing: Option<Nothing>,
    /// Why it failed, or why it says nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Its measured window (s), and whether it re-checked an end of the bracket.
    #[serde(default)]
    pub window_s: Option<f64>,
    #[serde(default)]
    pub recheck: bool,
    /// Latency samples in the window (completed, and not completed at its close).
    #[serde(default)]
    pub samples: Option<u64>,
    /// The client's CPU use (a share of its CPUs), and its send lag p99.
    #[serde(default)]
    pub client_cpu: Option<f64>,
    #[serde(default)]
    pub send_lag_p99_us: Option<f64>,
    /// Requests that waited for a free connection, and errors.
    #[serde(default)]
    pub waited_for_connection: Option<u64>,
    #[serde(default)]
    pub errors: Option<u64>,
}
