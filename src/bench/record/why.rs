//! What a cell measured about where its time went, as raw figures: the scheduler's view of the
//! server's threads and of its CPUs over the window (read at the window's two edges), and the
//! server's own time per request (its counters). The explain card and the bound-by label are
//! worked out from these alone, so `results.json` is enough to recompute them.

use serde::{Deserialize, Serialize};

/// The raw figures behind a cell's card; each `None` where it was not measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Why {
    /// The client's mean latency (µs), and whether it ran an open loop that completed what it
    /// scheduled (requests in flight at the close aside).
    pub latency_mean_us: Option<f64>,
    #[serde(default)]
    pub open_loop: bool,
    pub offered_completed: Option<bool>,
    /// The server's threads over the window (schedstat, scaled to the window): time on a CPU
    /// and time runnable waiting for one (s), slices run; user and system time (s).
    pub on_cpu_s: Option<f64>,
    pub runq_wait_s: Option<f64>,
    pub slices: Option<u64>,
    pub user_s: Option<f64>,
    pub system_s: Option<f64>,
    /// The server's CPUs over the window (/proc/stat, s): every task's time (user, nice,
    /// system), softirq, steal, and their whole time.
    pub cpus_busy_s: Option<f64>,
    pub cpus_softirq_s: Option<f64>,
    pub cpus_steal_s: Option<f64>,
    pub cpus_total_s: Option<f64>,
    /// Of the tasks' time, the harness's own (its sampling thread runs on the server's CPUs).
    #[serde(default)]
    pub harness_s: Option<f64>,
    /// The server's own counters over its life (every burst against it): the requests it
    /// timed (those of one feed in eight), and their time in the server and before their
    /// handling began, summed (ns).
    pub server_requests: Option<u64>,
    pub residence_ns: Option<u64>,
    pub wait_inside_ns: Option<u64>,
    /// Requests per worker, most ÷ fewest (`None`: one worker, or none measured).
    pub imbalance: Option<f64>,
    /// The server's CPUs (a count), and the work each request asked for on average (µs of CPU
    /// and of waiting, as the experiment's work draws it; `None`: no work known).
    pub server_cpus: Option<usize>,
    pub work_cpu_us: Option<f64>,
    pub work_sleep_us: Option<f64>,
    /// A closed loop without think time (where Little's law names the client's own turnaround).
    #[serde(default)]
    pub closed_no_think: bool,
    /// Connections of the load.
    #[serde(default)]
    pub connections: usize,
    /// Requests each connection keeps in flight in a closed loop (`--pipeline`, HTTP/2's
    /// `--streams`); `None`: not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_connection: Option<usize>,
    /// The client's CPU per request (µs: its CPU over the window ÷ its requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_us: Option<f64>,
    /// The run's loopback round trip between the server's and the client's CPUs (µs), and the
    /// client thread's CPU in it (µs): what the path outside the server costs at the least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip_client_cpu_us: Option<f64>,
}
