//! A bench run's files as the tests make and read them: a scratch directory, a scenario file,
//! the results directory a run made and its results.json.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A fresh scratch directory for test `name`.
pub fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("muxlab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn scenario(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("s.toml");
    std::fs::write(&p, format!("name = \"t\"\ndescription = \"test scenario\"\n{body}")).unwrap();
    p
}

/// The single results directory under `out`.
pub fn results_dir(out: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.pop().unwrap()
}

pub fn results(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

/// Runs `muxlab bench SCENARIO --out OUT`, which must succeed: its results and what it printed.
pub fn bench_ok(scenario: &Path, out: &Path) -> (Value, String) {
    let run = std::process::Command::new(super::BIN)
        .args(["bench", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}{stdout}",
        String::from_utf8_lossy(&run.stderr)
    );
    (results(&results_dir(out)), stdout)
}

/// The fidelity verdict's rows of a run's results (it must have one).
pub fn fidelity_rows(r: &Value) -> Vec<Value> {
    let v = r["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["experiment"] == "fidelity")
        .unwrap_or_else(|| panic!("no fidelity verdict: {}", r["verdicts"]));
    v["fidelity"].as_array().unwrap().clone()
}
