//! The lines a server prints for whoever follows it (bench, the tests, `--procs`' parent):
//! `listening` once it can accept, `held` while a group runs, and `stats` when it stops, with
//! every counter of the shared blocks ([`super::stats`]) and, with `--metrics`, the duration
//! histogram in sum.

use serde::{Deserialize, Serialize};

use super::stats::{CounterValues, Stats};

/// The line a server prints on stdout once it can accept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listening {
    /// Always `listening`.
    pub event: String,
    pub addr: std::net::SocketAddr,
    pub pid: i32,
    pub model: String,
    pub proto: String,
    pub workers: usize,
    /// Processes of a group (`--procs`), each running `workers` workers; 1 for one process.
    #[serde(default = "one")]
    pub procs: usize,
    pub max_conns: usize,
    /// resp and memcache: the keyed store (`owned`, `locked`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// `--metrics`: where scrapes are answered (the port resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<std::net::SocketAddr>,
}

/// The line a server prints on stdout when it stops: every counter, in total and per worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsLine {
    /// Always `stats`.
    pub event: String,
    pub model: String,
    pub pid: i32,
    pub workers: usize,
    /// Processes of a group (`--procs`): `per_worker` holds `procs × workers` blocks, process
    /// by process.
    #[serde(default = "one")]
    pub procs: usize,
    /// The most connections held open at once (accepted − closed, over every worker and
    /// process); `None` in lines from before servers counted it.
    #[serde(default)]
    pub held_peak: Option<u64>,
    pub uptime_s: f64,
    pub ok: bool,
    pub error: Option<String>,
    pub totals: CounterValues,
    pub per_worker: Vec<CounterValues>,
    /// With `--work-from-request`: requests and busy time per class of work.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub classes: std::collections::BTreeMap<String, super::classes::ClassCount>,
    /// `--metrics`: the request duration histogram over every worker (sampled: the requests
    /// of the timed reads, `timed_requests` of them), as a scraper's `histogram_quantile`
    /// reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_duration: Option<DurationSummary>,
}

/// The request duration histogram (`--metrics`) in sum: requests timed, their mean, and
/// quantiles read from the buckets as Prometheus's `histogram_quantile` reads them
/// (microseconds; `None` where nothing was timed or the quantile is past 10 s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DurationSummary {
    pub count: u64,
    pub sum_s: f64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
}

impl DurationSummary {
    pub fn of(stats: &Stats) -> DurationSummary {
        let mut counts = [0u64; crate::metrics::SLOTS];
        let mut sum_ns = 0u64;
        for w in 0..stats.workers() {
            let (c, s) = stats.worker(w).durations();
            for (a, b) in counts.iter_mut().zip(c) {
                *a += b;
            }
            sum_ns += s;
        }
        let q = |p| crate::metrics::quantile_ns(&counts, p).map(|ns| ns / 1e3);
        DurationSummary {
            count: counts.iter().sum(),
            sum_s: sum_ns as f64 / 1e9,
            p50_us: q(0.5),
            p99_us: q(0.99),
        }
    }
}

fn one() -> usize {
    1
}

/// The line the parent of a process group prints while it runs, when the count has moved (at
/// most once a second), and once more when it stops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Held {
    /// Always `held`.
    pub event: String,
    pub procs: usize,
    /// Connections open now: accepted − closed, over every process.
    pub held: u64,
    /// The most open at once so far.
    pub peak: u64,
    /// The group's resident memory and CPU time (the parent and its members), where /proc
    /// could be read.
    pub rss_bytes: Option<u64>,
    pub cpu_s: Option<f64>,
}

impl Held {
    /// Reads a line a server printed, if it is a `held` line.
    pub fn read(line: &str) -> Option<Held> {
        serde_json::from_str::<Held>(line.trim())
            .ok()
            .filter(|l| l.event == "held")
    }
}

impl Listening {
    /// Reads a line a server printed, if it is its listening line.
    pub fn read(line: &str) -> Option<Listening> {
        serde_json::from_str::<Listening>(line.trim())
            .ok()
            .filter(|l| l.event == "listening")
    }
}

impl StatsLine {
    /// Reads a line a server printed, if it is its stats line.
    pub fn read(line: &str) -> Option<StatsLine> {
        serde_json::from_str::<StatsLine>(line.trim())
            .ok()
            .filter(|l| l.event == "stats")
    }
}
