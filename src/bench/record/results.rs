//! Results of a bench run: the scenario, where it ran ([`Environment`]), one [`Cell`] per cell,
//! and the verdicts its caller worked out from them (the record holds them; the judge
//! makes them), and the files (`results.json`, `results.csv`) in
//! `results/<scenario>-<timestamp>/`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::cell::Cell;
use super::environment::Environment;
use super::error::{io_err, Error};
use super::results_error::ResultsError;
use super::scenario::Scenario;

/// The version of `results.json` this build writes; it reads its own and those before it (1:
/// no `format` key; 2: an A/A twin's target ended in " (A/A)", now [`Cell::twin`]).
pub const FORMAT: u32 = 3;

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

/// One CSV row per cell (an A/A twin's target written with its " (A/A)" mark, as before format 3).
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
            "{},{},{},{},{},{:.1},{},{},{},{},{},{},{},{:.3},{},{},{:.2},{},{},{},{},{},{},{},{},{}\n",
            q(&c.experiment),
            q(&c.label()),
            c.connections,
            c.repeat,
            q(c.status.text()),
            f.throughput_rps,
            f.requests,
            f.errors,
            fixed(f.p50_us, 1),
            fixed(f.p99_us, 1),
            fixed(f.p999_us, 1),
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

/// Everything a results directory holds: the contents of `results.json`. `V` is a verdict,
/// worked out by the caller from the cells (the judge): a file's own are not read, so
/// results written before a verdict rule changed get today's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results<V> {
    /// [`FORMAT`] (1 for files written before it was recorded).
    #[serde(default = "format_one")]
    pub format: u32,
    pub scenario: Scenario,
    pub environment: Environment,
    #[serde(default)]
    pub interrupted: bool,
    /// One per experiment (and one across shapes where the scenario compares them).
    #[serde(default = "Vec::new", skip_deserializing)]
    pub verdicts: Vec<V>,
    pub cells: Vec<Cell>,
}

fn format_one() -> u32 {
    1
}

impl<V: Serialize> Results<V> {
    /// The results of `cells`, with the `verdicts` its caller worked out from them.
    pub fn new(
        scenario: Scenario,
        environment: Environment,
        cells: Vec<Cell>,
        interrupted: bool,
        verdicts: Vec<V>,
    ) -> Self {
        let mut cells = cells;
        super::settle::settle(&scenario, &environment, &mut cells);
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
        let text = serde_json::to_string_pretty(self).expect("results serialise");
        std::fs::write(dir.join("results.json"), text).map_err(io_err("writing results.json"))?;
        std::fs::write(dir.join("results.csv"), csv(&self.cells)).map_err(io_err("writing results.csv"))?;
        Ok(())
    }
}

/// The results file a path names: `PATH/results.json` for a results directory, the path
/// itself for a file (a kept result: `docs/results/NAME.json`).
pub fn file_of(path: &Path) -> std::path::PathBuf {
    match path.is_dir() {
        true => path.join("results.json"),
        false => path.to_path_buf(),
    }
}

/// Where a page made from the results at `path` goes: `PATH/NAME` beside a directory's
/// results, `STEM.NAME` beside a results file (`docs/results/quick.json` →
/// `docs/results/quick.report.html`).
pub fn beside(path: &Path, name: &str) -> std::path::PathBuf {
    match path.is_dir() {
        true => path.join(name),
        false => {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            path.with_file_name(format!("{stem}.{name}"))
        }
    }
}

/// Reads a results directory's `results.json`, or a results file (this version's, or an
/// earlier one's), its verdicts left for the caller to work out.
pub fn read<V>(dir: &Path) -> Result<Results<V>, Error> {
    let path = file_of(dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(source) => return Err(ResultsError::Read { path, source }.into()),
    };
    let mut r: Results<V> = match serde_json::from_str(&text) {
        Ok(r) => r,
        Err(source) => return Err(ResultsError::Json { path, source }.into()),
    };
    if r.format > FORMAT {
        return Err(ResultsError::Later {
            path,
            format: r.format,
            reads: FORMAT,
        }
        .into());
    }
    if r.format < 3 {
        r.cells.iter_mut().for_each(Cell::twin_from_label);
    }
    super::settle::settle(&r.scenario, &r.environment, &mut r.cells);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timestamp_is_a_utc_date_and_time() {
        let t = timestamp();
        assert_eq!(t.len(), 15);
        assert!(t.starts_with("20") && t.as_bytes()[8] == b'-', "{t}");
    }

    /// An A/A twin is a field of its cell: written so, and read so from results of format 2,
    /// which marked it by its label's end.
    #[test]
    fn a_twin_is_a_field_and_an_old_label_suffix_reads_as_one() {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"epoll\"]\nconnections = [10]\nduration = \"1s\"\n";
        let sc = crate::bench::record::scenario::parse(text, "t").unwrap();
        let mut twin = Cell::new("e", "epoll", 10, 0);
        twin.twin = true;
        let cells = vec![Cell::new("e", "epoll", 10, 0), twin];
        let r: Results<()> = Results::new(sc, Environment::default(), cells, false, Vec::new());
        let dir = std::env::temp_dir().join(format!("muxlab-twin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        r.save(&dir).unwrap();
        let path = dir.join("results.json");
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["cells"][1]["target"], "epoll");
        assert_eq!(v["cells"][1]["twin"], true);
        assert!(v["cells"][0].get("twin").is_none(), "only a twin says so");
        // As format 2 wrote it.
        v["format"] = 2.into();
        v["cells"][1]["target"] = "epoll (A/A)".into();
        v["cells"][1].as_object_mut().unwrap().remove("twin");
        std::fs::write(&path, v.to_string()).unwrap();
        let back: Results<()> = read(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((back.cells[1].target.as_str(), back.cells[1].twin), ("epoll", true));
        assert_eq!(back.cells[1].label(), "epoll (A/A)");
        assert!(!back.cells[0].twin);
    }
}
