//! What one process measured: the [`Outcome`] of a run (its tally, window, connections and the
//! client's CPU), what a document's figures are derived from and a merge adds up.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{unix_ms, ClientLimit, Tally};
use crate::units::serde_as;

/// What one process measured (or, merged, a whole run: see [`merge`](super::merge)). Its serde
/// form is the `interchange` section of a [`Document`](super::Document), lossless.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    /// Connection slots this outcome covers (its share of `-c`).
    pub connections: usize,
    /// The open-loop rate this share was asked for (`--rate`).
    pub offered_rps: Option<f64>,
    /// When the measured window began, in milliseconds since the Unix epoch (aligns the
    /// per-second series of pieces run by different processes or hosts).
    pub window_start_ms: u64,
    /// Length of the measured window.
    #[serde(rename = "elapsed_s", with = "serde_as::secs")]
    pub elapsed: Duration,
    /// How long opening the connections took, before the warm-up and the window began.
    #[serde(rename = "connecting_s", with = "serde_as::secs", default)]
    pub connecting: Duration,
    /// CPU time (user + system) the client used over the window.
    #[serde(rename = "client_cpu_s", with = "serde_as::secs")]
    pub client_cpu: Duration,
    /// CPUs the client's threads could use at once (threads, at most the cores).
    pub cpu_slots: usize,
    pub threads: usize,
    pub shards: usize,
    /// Set when the run was cut short by Ctrl-C.
    #[serde(default)]
    pub interrupted: bool,
    pub tally: Tally,
}

impl Outcome {
    /// An outcome with nothing in it (no piece reported), over `connections`.
    pub fn empty(connections: usize, interrupted: bool) -> Outcome {
        Outcome {
            tally: Tally::default(),
            connections,
            offered_rps: None,
            window_start_ms: unix_ms(),
            elapsed: Duration::ZERO,
            connecting: Duration::ZERO,
            client_cpu: Duration::ZERO,
            cpu_slots: 0,
            threads: 0,
            shards: 0,
            interrupted,
        }
    }

    /// Client CPU use as a share of the time its CPUs had.
    pub fn utilization(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs <= 0.0 || self.cpu_slots == 0 {
            return 0.0;
        }
        self.client_cpu.as_secs_f64() / (secs * self.cpu_slots as f64)
    }

    /// Whether the client may have been the bottleneck.
    pub fn saturated(&self) -> bool {
        ClientLimit::busy(self.utilization()).is_some()
    }
}
