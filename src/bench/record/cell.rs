//! One cell's record: the target it measured at a connection count and repeat, how it ended
//! ([`CellStatus`]), its [`Figures`], and the load's document and the server's stats line as
//! they were.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::Error;
use super::placed::Placed;
use crate::load::Document;
use crate::server::lines::StatsLine;

/// What a cell's event streams did: the client's side (time to first event, gaps, loss) and
/// the server's (its events and the late ones, from its stats line).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamFigures {
    /// Events the client received in the window, and per second.
    pub events: u64,
    pub events_per_s: f64,
    pub lost: u64,
    pub cut: u64,
    /// Time to first event and the gaps between events, in microseconds (`None`: none came).
    pub ttfe_p50_us: Option<f64>,
    pub ttfe_p99_us: Option<f64>,
    pub gap_p50_us: Option<f64>,
    pub gap_p99_us: Option<f64>,
    /// The window's length, in seconds (CPU per event is the window's CPU over its events).
    pub window_s: f64,
    /// The samples of those quantiles: first events and gaps the client timed (`None`: results
    /// from before they were counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_events: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gaps: Option<u64>,
    /// The server's events over the whole run, and those sent past `--stream-slack` after
    /// their due time (`None`: a server whose stats line was not read).
    pub server_events: Option<u64>,
    pub server_late: Option<u64>,
}

impl StreamFigures {
    /// Late events as a share of the events sent, in per cent.
    pub fn late_pct(&self) -> Option<f64> {
        let (late, all) = (self.server_late?, self.server_events?);
        (all > 0).then(|| late as f64 * 100.0 / all as f64)
    }
}

/// The figures of one cell (one target at one connection count, one repeat).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Figures {
    pub throughput_rps: f64,
    pub requests: u64,
    pub errors: u64,
    /// Latency quantiles over the requests completed, in microseconds (`None`: none completed
    /// in the window, so nothing was measured: never 0).
    #[serde(default)]
    pub p50_us: Option<f64>,
    #[serde(default)]
    pub p99_us: Option<f64>,
    #[serde(default)]
    pub p999_us: Option<f64>,
    /// Server CPU (whole process tree) per request, in microseconds; `None`: not measured (a
    /// server muxlab does not run, or nothing was served).
    pub server_cpu_us_per_req: Option<f64>,
    /// Server CPU use over the window, in cores (1.0 = one core busy).
    pub server_cpu_cores: Option<f64>,
    /// Where the server's CPU time came from.
    #[serde(default)]
    pub cpu_source: Option<CpuSource>,
    /// Client CPU use as a share of its threads.
    pub client_cpu_util: f64,
    /// The client was saturated: the throughput may understate the server.
    pub client_bound: bool,
    /// Growth of the server's proportional set size (PSS: a page shared by N processes counts
    /// 1/N in each) from before the load to the window's end, per connection, in KiB. Results
    /// written before 2026-11-24 hold the growth of the summed RSS here.
    pub mem_per_conn_kib: Option<f64>,
    /// Growth of the kernel's TCP memory (/proc/net/sockstat: both ends on loopback, and every
    /// socket of the machine) while loaded, per connection, in KiB.
    #[serde(default)]
    pub kernel_tcp_kib_per_conn: f64,
    /// Growth of the kernel's slab (/proc/meminfo's `Slab`: its objects of every kind on the
    /// machine — both ends' sockets on loopback, their files, inodes, dentries and epoll
    /// entries, a task's structures; its reclaimable caches too) from before the load to the
    /// window's end, per connection, in KiB; `None`: not read, it shrank, or nothing connected.
    #[serde(default)]
    pub kernel_slab_kib_per_conn: Option<f64>,
    /// The server tree's largest RSS and thread count while loaded (`None`: not sampled).
    pub peak_rss_mib: Option<f64>,
    pub peak_threads: Option<u64>,
    /// Context switches of the server's threads over the window; `None` where threads came
    /// or went during it (those that exited took their counts with them).
    pub context_switches: Option<u64>,
    /// Jain's index over the server's workers (requests) and over the client's connections.
    pub jain_workers: Option<f64>,
    /// `None`: no connection was served (nothing to measure).
    #[serde(default)]
    pub jain_conns: Option<f64>,
    pub starved_conns: u64,
    /// Seed 003's effective loop ratio: useful events / events examined.
    pub useful_ratio: Option<f64>,
    pub syscalls_per_req: Option<f64>,
    /// Accept attempts that found nothing, per accepted connection.
    pub lost_races_per_accept: Option<f64>,
    /// A keyed store's locks (`None`: no lock taken, or not a muxlab server): what the
    /// server's counters say of them over its cells. See [`LockFigures`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locks: Option<LockFigures>,
    /// Keyed commands sent to another thread to run (a key of another worker's shard, or
    /// io-threads' executor), per command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops_per_req: Option<f64>,
    pub established: u64,
    /// The machine's steal time over the window, per cent of all its CPU time (a hypervisor
    /// running something else): `None` where /proc/stat could not be read.
    #[serde(default)]
    pub steal_pct: Option<f64>,
    /// A capacity search (`slo`): the highest rate that held, with every probe; the cell's
    /// other figures are those of the last probe that held (or of the last probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::load::slo::Capacity>,
    /// What the design's queueing implies for this cell (`crate::queueing`): `None` where
    /// there is no prediction (no work, a peer, a design or load not modelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<crate::queueing::Prediction>,
    /// Why a cell whose experiment predicts has no prediction (its design's calibration did
    /// not finish, or measured no cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unpredicted: Option<String>,
    /// Per request class of the load (`mix`), in its order; empty without classes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassFigure>,
    /// Event streams the load received (`sse`): `None` in other cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<StreamFigures>,
    /// Where the time went, as raw figures (the judge works a cell's card out of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<super::why::Why>,
}

/// What one request class measured in a cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassFigure {
    pub name: String,
    /// The path its requests asked for (its query may name its work).
    pub path: String,
    pub requests: u64,
    /// Transport failures (timeouts, resets, ...) with a request of the class the oldest in flight.
    pub errors: u64,
    /// Its responses other than 2xx/3xx (a class the server refuses measures no service): its
    /// latency is then not ranked.
    #[serde(default)]
    pub refused: u64,
    /// Its latency (corrected, in an open loop); `None`: none of its requests completed.
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
}

impl Figures {
    /// Server CPU per request where it was measured (results written before 2026-11-24 hold
    /// 0 for "not measured").
    pub fn cpu_per_req(&self) -> Option<f64> {
        self.server_cpu_us_per_req.filter(|v| *v > 0.0)
    }

    /// Server CPU per event, in microseconds: the window's server CPU over the events the
    /// client received in it (event-stream cells whose server CPU was measured).
    pub fn cpu_per_event(&self) -> Option<f64> {
        let s = self.streams.as_ref()?;
        let cpu = self.server_cpu_cores? * s.window_s;
        // No CPU read over the window (its clock's ticks are 10 ms) is not a cost of 0.
        (s.events > 0 && cpu > 0.0).then(|| cpu * 1e6 / s.events as f64)
    }

    /// Memory per connection where the server was sampled (its CPU read over the window: the
    /// same samples). Event streams that complete no request in the window have it too.
    pub fn mem_per_conn(&self) -> Option<f64> {
        self.mem_per_conn_kib
            .filter(|_| self.server_cpu_cores.is_some_and(|c| c > 0.0))
    }

    /// The capacity at the experiment's target where a search found one.
    pub fn capacity_rps(&self) -> Option<f64> {
        self.capacity.as_ref()?.rps
    }

    /// Context switches per request where they were counted.
    pub fn switches_per_req(&self) -> Option<f64> {
        self.context_switches
            .filter(|_| self.requests > 0)
            .map(|n| n as f64 / self.requests as f64)
    }
}

/// How the server's CPU time was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CpuSource {
    /// A cgroup v1 cpuacct group made for the server: every process ever in it, exited forked
    /// children included, in ns.
    Cgroup,
    /// The CPU-time clocks of the tree's live processes (ns, exited threads included) and the
    /// reaped children's times (clock ticks).
    ProcessClocks,
}

impl CpuSource {
    pub fn label(self) -> &'static str {
        match self {
            CpuSource::Cgroup => "cgroup",
            CpuSource::ProcessClocks => "process clocks",
        }
    }
}

/// How a cell ended. In `results.json` a string: `ok`, `interrupted`, `skipped: why`, or the
/// reason it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellStatus {
    Ok,
    /// Ctrl-C stopped the run during the cell.
    Interrupted,
    /// Not run, for a stated reason (a peer that is missing or cannot speak the protocol).
    Skipped(String),
    /// Run, and failed: why.
    Failed(String),
}

impl CellStatus {
    /// The status as `results.json` and the tables write it.
    pub fn text(&self) -> &str {
        match self {
            CellStatus::Ok => "ok",
            CellStatus::Interrupted => "interrupted",
            CellStatus::Skipped(s) | CellStatus::Failed(s) => s,
        }
    }

    /// Reads [`CellStatus::text`]'s form.
    pub fn of_text(s: &str) -> CellStatus {
        match s {
            "ok" => CellStatus::Ok,
            "interrupted" => CellStatus::Interrupted,
            s if s.starts_with("skipped") => CellStatus::Skipped(s.to_string()),
            s => CellStatus::Failed(s.to_string()),
        }
    }
}

impl From<&Error> for CellStatus {
    /// A cell that could not run (skipped) or failed, with the error's words.
    fn from(e: &Error) -> CellStatus {
        match e {
            Error::Skipped(_) => CellStatus::Skipped(e.to_string()),
            e => CellStatus::Failed(e.to_string()),
        }
    }
}

impl Serialize for CellStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.text())
    }
}

impl<'de> Deserialize<'de> for CellStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CellStatus, D::Error> {
        Ok(CellStatus::of_text(&String::deserialize(d)?))
    }
}

/// How an A/A twin's label ends.
pub const TWIN: &str = "(A/A)";

/// How a calibration cell's label ends.
pub const CALIBRATION: &str = "(calibration)";

/// One cell's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub experiment: String,
    /// The model entry (`epoll --trigger edge`) or the peer (`nginx`).
    pub target: String,
    /// A paired experiment's first model measured a second time in the same rounds: the A/A
    /// figure (the smallest difference the machine resolves) comes from it; it is not a target
    /// to rank.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub twin: bool,
    /// A calibration cell (`bench::predict::calibration`): the design measured under lighter load than
    /// the experiment's (its conditions, in words), whose CPU per request every prediction of
    /// the design's cells is made from. Never ranked, never the cell it predicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<String>,
    pub connections: usize,
    pub repeat: usize,
    /// Where its target ran (`None`: results from before a run recorded it and gave no
    /// environment to tell). Targets placed differently are not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed: Option<Placed>,
    /// Its target does none of the experiment's work (a peer serving a fixed body beside
    /// designs doing `work`): it is ranked on nothing beside them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub does_no_work: bool,
    pub status: CellStatus,
    pub seconds: f64,
    pub figures: Figures,
    /// The load generator's document and the server's stats line, as they were (`None`: not
    /// there, or of a version this one does not read).
    #[serde(deserialize_with = "lenient")]
    pub load: Option<Box<Document>>,
    #[serde(deserialize_with = "lenient")]
    pub server_stats: Option<StatsLine>,
}

/// A value that reads, or `None`: a document an older version wrote does not stop its
/// results from loading (the figures were worked out from it when it was written).
fn lenient<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

impl Cell {
    /// A cell of `experiment` for `target` that has not run yet.
    pub fn new(experiment: &str, target: &str, connections: usize, repeat: usize) -> Cell {
        Cell {
            experiment: experiment.into(),
            target: target.into(),
            twin: false,
            calibration: None,
            connections,
            repeat,
            placed: None,
            does_no_work: false,
            status: CellStatus::Ok,
            seconds: 0.0,
            figures: Figures::default(),
            load: None,
            server_stats: None,
        }
    }

    pub fn ok(&self) -> bool {
        self.status == CellStatus::Ok
    }

    /// Not run, for a stated reason.
    pub fn skipped(&self) -> bool {
        matches!(self.status, CellStatus::Skipped(_))
    }

    /// The target as tables and reports name it: an A/A twin's with [`TWIN`] after it, a
    /// calibration cell's with [`CALIBRATION`].
    pub fn label(&self) -> String {
        match (self.twin, &self.calibration) {
            (true, _) => format!("{} {TWIN}", self.target),
            (false, Some(_)) => format!("{} {CALIBRATION}", self.target),
            (false, None) => self.target.clone(),
        }
    }

    /// A cell of a target the experiment compares: not an A/A twin (the machine's noise), not
    /// a calibration (the design under lighter load).
    pub fn compared(&self) -> bool {
        !self.twin && self.calibration.is_none()
    }

    /// Results written before the twin was a field of its own (format 2 and earlier) marked it
    /// by its label's end: read it the new way.
    pub(super) fn twin_from_label(&mut self) {
        if let Some(t) = self.target.strip_suffix(TWIN) {
            self.target = t.trim_end().to_string();
            self.twin = true;
        }
    }
}

/// A keyed store's table locks, from the server's counters (`store::taken`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LockFigures {
    /// Locks taken per command.
    pub per_req: f64,
    /// The share of acquisitions that found the lock held and waited.
    pub contended: f64,
    /// The mean critical section (µs: acquired to released) and the mean wait to acquire,
    /// over the one acquisition in 64 timed (`None`: none was).
    pub hold_us: Option<f64>,
    pub wait_us: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::{CellError, SkipReason};

    /// A cell that could not run keeps "skipped: " and its reason; one that failed, its error's
    /// words.
    #[test]
    fn a_status_keeps_the_errors_words() {
        let skipped = Error::Skipped(SkipReason::RemoteServer { product: "nginx" });
        assert_eq!(
            CellStatus::from(&skipped),
            CellStatus::Skipped("skipped: the nginx peer runs on this machine only".into())
        );
        let failed = Error::from(CellError::NoStats {
            host: None,
            errors: Vec::new(),
        });
        assert_eq!(CellStatus::from(&failed), CellStatus::Failed("no stats line".into()));
    }
}
