//! Results of a bench run: one record per cell, derived figures, medians over repeats, and the
//! files (`results.json`, `results.csv`) in `results/<scenario>-<timestamp>/`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::costs::UnitCosts;
use super::error::Error;
pub use super::repeats::{drift, in_round, median, sign_test, spread, summarize, within_rounds, Spread, Summary};
use super::scenario::Scenario;
use crate::load::Document;
use crate::remote::ssh::Machine;
use crate::server::stats::StatsLine;

/// The version of `results.json` this build writes; it reads its own and those before it
/// (which had no `format` key).
pub const FORMAT: u32 = 2;

/// The figures of one cell (one target at one connection count, one repeat).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Figures {
    pub throughput_rps: f64,
    pub requests: u64,
    pub errors: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
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
    /// Per request class of the load (`mix`), in its order; empty without classes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassFigure>,
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

    /// Memory per connection where the server's CPU was measured too (the same samples).
    pub fn mem_per_conn(&self) -> Option<f64> {
        self.mem_per_conn_kib.filter(|_| self.cpu_per_req().is_some())
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

/// One cell's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub experiment: String,
    /// The model entry (`epoll --trigger edge`) or the peer (`nginx`).
    pub target: String,
    pub connections: usize,
    pub repeat: usize,
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
            connections,
            repeat,
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
}

/// Where a run's cells ran: the machine (or machines), the CPUs, what was held for the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub cpu_model: String,
    /// What a syscall and a context switch cost on the server's CPU (measured where the server
    /// runs on this machine).
    #[serde(default)]
    pub unit_costs: Option<UnitCosts>,
    #[serde(default)]
    pub cores: usize,
    #[serde(default)]
    pub server_cpus: String,
    #[serde(default)]
    pub client_cpus: String,
    #[serde(default)]
    pub client_threads: usize,
    #[serde(default)]
    pub server_addr: String,
    #[serde(default)]
    pub hosts: Option<HostsEnvironment>,
    #[serde(default)]
    pub muxlab_version: String,
    #[serde(default)]
    pub git_revision: String,
    /// What `--steer-rx` changed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steer_rx: Option<String>,
    /// Whether idle CPUs polled or halted for the run (results before 2026-11-25: halted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_idle: Option<String>,
}

/// The hosts of a run across hosts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostsEnvironment {
    pub server: Option<String>,
    #[serde(default)]
    pub clients: Vec<String>,
    #[serde(default)]
    pub machines: Vec<Machine>,
}

impl Environment {
    /// The unit costs the run measured, or the documented ones.
    pub fn unit_costs(&self) -> UnitCosts {
        self.unit_costs.unwrap_or(UnitCosts::DOCUMENTED)
    }

    /// What the verdicts are worked out against: the unit costs, and how many CPUs the server
    /// had (`None` where the results do not say).
    pub fn verdict_context(&self) -> super::verdict::Context {
        super::verdict::Context {
            costs: self.unit_costs(),
            server_cpus: crate::units::parse_cpus(&self.server_cpus)
                .ok()
                .map(|c| c.len())
                .filter(|n| *n > 0),
        }
    }
}

/// `YYYYmmdd-HHMMSS` in UTC.
pub fn timestamp() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A new results directory for `scenario` under `base`.
pub fn new_dir(base: &Path, scenario: &str) -> std::io::Result<PathBuf> {
    let dir = base.join(format!("{scenario}-{}", timestamp()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// One CSV row per cell.
pub fn csv(cells: &[Cell]) -> String {
    let mut s = String::from(
        "experiment,target,connections,repeat,status,throughput_rps,requests,errors,p50_us,p99_us,p999_us,\
         server_cpu_us_per_req,server_cpu_cores,client_cpu_util,client_bound,mem_per_conn_kib,kernel_tcp_kib_per_conn,peak_rss_mib,\
         peak_threads,context_switches,jain_workers,jain_conns,starved_conns,useful_ratio,syscalls_per_req,\
         lost_races_per_accept\n",
    );
    let opt = |v: Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_default();
    let fixed = |v: Option<f64>, places: usize| v.map(|x| format!("{x:.places$}")).unwrap_or_default();
    for c in cells {
        let f = &c.figures;
        let q = |t: &str| {
            if t.contains(',') || t.contains('"') {
                format!("\"{}\"", t.replace('"', "\"\""))
            } else {
                t.to_string()
            }
        };
        s.push_str(&format!(
            "{},{},{},{},{},{:.1},{},{},{:.1},{:.1},{:.1},{},{},{:.3},{},{},{:.2},{},{},{},{},{},{},{},{},{}\n",
            q(&c.experiment),
            q(&c.target),
            c.connections,
            c.repeat,
            q(c.status.text()),
            f.throughput_rps,
            f.requests,
            f.errors,
            f.p50_us,
            f.p99_us,
            f.p999_us,
            fixed(f.server_cpu_us_per_req, 2),
            fixed(f.server_cpu_cores, 3),
            f.client_cpu_util,
            f.client_bound,
            fixed(f.mem_per_conn_kib, 2),
            f.kernel_tcp_kib_per_conn,
            fixed(f.peak_rss_mib, 1),
            f.peak_threads.map(|n| n.to_string()).unwrap_or_default(),
            f.context_switches.map(|n| n.to_string()).unwrap_or_default(),
            opt(f.jain_workers),
            opt(f.jain_conns),
            f.starved_conns,
            opt(f.useful_ratio),
            opt(f.syscalls_per_req),
            opt(f.lost_races_per_accept),
        ));
    }
    s
}

/// Everything a results directory holds: the contents of `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// [`FORMAT`] (1 for files written before it was recorded).
    #[serde(default = "format_one")]
    pub format: u32,
    pub scenario: Scenario,
    pub environment: Environment,
    #[serde(default)]
    pub interrupted: bool,
    /// One per experiment, worked out from the cells (see `verdict`): worked out again when a
    /// file is read (what the file says is not read), so results written before a verdict
    /// rule changed get today's.
    #[serde(default, skip_deserializing)]
    pub verdicts: Vec<super::verdict::Verdict>,
    pub cells: Vec<Cell>,
}

fn format_one() -> u32 {
    1
}

impl Results {
    /// The results of `cells`, their verdicts worked out.
    pub fn new(scenario: Scenario, environment: Environment, cells: Vec<Cell>, interrupted: bool) -> Results {
        let verdicts = super::verdict::all(
            &scenario.experiments,
            &cells,
            scenario.repeats,
            &environment.verdict_context(),
            scenario.compare_shapes,
        );
        Results {
            format: FORMAT,
            scenario,
            environment,
            interrupted,
            verdicts,
            cells,
        }
    }

    /// Writes `results.json` and `results.csv` into `dir`.
    pub fn save(&self, dir: &Path) -> Result<(), Error> {
        save(dir, &self.scenario, &self.environment, &self.cells, self.interrupted)
    }
}

/// Writes `results.json` (the verdicts worked out) and `results.csv` of a run so far into `dir`.
pub fn save(
    dir: &Path,
    scenario: &Scenario,
    environment: &Environment,
    cells: &[Cell],
    interrupted: bool,
) -> Result<(), Error> {
    /// [`Results`] as it is written, borrowing what it holds.
    #[derive(Serialize)]
    struct Written<'a> {
        format: u32,
        scenario: &'a Scenario,
        environment: &'a Environment,
        interrupted: bool,
        verdicts: Vec<super::verdict::Verdict>,
        cells: &'a [Cell],
    }
    let doc = Written {
        format: FORMAT,
        scenario,
        environment,
        interrupted,
        verdicts: super::verdict::all(
            &scenario.experiments,
            cells,
            scenario.repeats,
            &environment.verdict_context(),
            scenario.compare_shapes,
        ),
        cells,
    };
    let text = serde_json::to_string_pretty(&doc).expect("results serialise");
    std::fs::write(dir.join("results.json"), text).map_err(super::error::io_err("writing results.json"))?;
    std::fs::write(dir.join("results.csv"), csv(cells)).map_err(super::error::io_err("writing results.csv"))?;
    Ok(())
}

/// Reads `DIR/results.json` (this version's, or an earlier one's).
pub fn read(dir: &Path) -> Result<Results, Error> {
    let path = dir.join("results.json");
    let bad = |what: String| Error::Usage(format!("{}: {what}", path.display()));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| bad(format!("{e} (is {} a bench results directory?)", dir.display())))?;
    let r: Results = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if r.format > FORMAT {
        return Err(bad(format!(
            "written in results format {} by a later muxlab; this one reads up to {FORMAT}",
            r.format
        )));
    }
    // The verdicts worked out again, the format the file's.
    let format = r.format;
    Ok(Results {
        format,
        ..Results::new(r.scenario, r.environment, r.cells, r.interrupted)
    })
}

#[cfg(test)]
mod bench_results {
    use crate::bench::results::*;

    #[test]
    fn medians_and_timestamps() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        let t = timestamp();
        assert_eq!(t.len(), 15);
        assert!(t.starts_with("20"));
    }
}
