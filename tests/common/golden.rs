//! Golden outcomes of `muxlab load` runs, for the tests that hold the client's behaviour
//! against hostile servers and keyed stores: the exit code, the error classes seen, and the
//! counts (requests, errors by class, status classes, keyed and event-stream counts). Recorded
//! before a change of the load generator, compared after it.
//!
//! Counts are kept only for clean runs (exit 0) bounded by a number of requests (`-n`): a run
//! bounded by time (`-d`, `--rate`) completes what the machine's timing lets it, and a failing
//! one may fail before its requests went, so of those only the exit code, the error classes
//! seen (a time-bounded run's without `unanswered`) and whether it was interrupted are kept. And a recording keeps only
//! the fields that were the same in every recording of the run, so a golden file holds what the
//! client does, not what the machine did. Record from no file, several times over (some beside
//! two busy loops, which move what timing moves):
//!
//! ```text
//! rm tests/golden/hostile_servers.json
//! for i in 1 2 3; do MUXLAB_GOLDEN=record cargo test --test hostile_servers; done
//!
//! A recording over an existing file says on stderr (not captured by the test harness) each
//! field it drops: a recording made after a change would lose what the change altered.
//! ```
//!
//! Without `MUXLAB_GOLDEN`, every run is compared with its recording, field by field.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::{Map, Value};

/// Recordings of one test binary are read and written under this lock (its tests run on
/// several threads).
static FILE: Mutex<()> = Mutex::new(());

thread_local! {
    /// The runs of the current test so far: the key of its next run.
    static RUNS: Cell<usize> = const { Cell::new(0) };
}

/// The fields of a run that a golden file may hold: its exit code and, from its JSON document
/// (when it printed one), its error classes and, for a run of a number of requests (`counted`),
/// its counts.
pub fn outcome(code: Option<i32>, doc: Option<&Value>, counted: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("exit".into(), code.map_or(Value::Null, Value::from));
    let Some(doc) = doc else {
        return m;
    };
    m.insert("interrupted".into(), doc["interrupted"].clone());
    m.insert("error_classes".into(), classes_seen(doc, counted));
    // Counts only of a clean run of -n requests: one that failed may fail while connecting,
    // before its request went (how many went is the machine's timing, in the old engine as
    // in the new: `sent` moved so once in about 20 runs of the continuation flood).
    if !counted || code != Some(0) {
        return m;
    }
    for k in ["requests", "sent", "error_total", "non_2xx_3xx"] {
        if let Some(v) = doc.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    for section in ["errors", "status_classes", "keyed", "sse", "open_loop"] {
        if let Some(o) = doc[section].as_object() {
            for (k, v) in o {
                if v.is_u64() || v.is_boolean() || v.is_string() {
                    m.insert(format!("{section}.{k}"), v.clone());
                }
            }
        }
    }
    m
}

/// The error classes a document counted, sorted; of a run bounded by time (not `counted`),
/// without `unanswered`: whether a request is in flight when the window closes is the
/// machine's timing (an endless body's run counted one in 2 of 12 runs of the old engine,
/// beside two busy loops).
fn classes_seen(doc: &Value, counted: bool) -> Value {
    let mut seen: Vec<&str> = doc["errors"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, n)| n.as_u64() > Some(0) && (counted || *k != "unanswered"))
        .map(|(k, _)| k.as_str())
        .collect();
    seen.sort();
    Value::from(seen)
}

/// Whether a run of `muxlab load ARGS` is bounded by a number of requests.
fn counted(args: &[&str]) -> bool {
    args.iter().any(|a| *a == "-n" || *a == "--requests")
}

/// [`check`] of a run of `args` whose stdout is `stdout` (a JSON document, or not).
pub fn check_output(args: &[&str], code: Option<i32>, stdout: &str) {
    check(args, code, serde_json::from_str::<Value>(stdout.trim()).ok().as_ref())
}

/// Checks a run of `muxlab load ARGS` (exit `code`, its document `doc`) against its
/// recording, or records it with `MUXLAB_GOLDEN=record`. The run is known by its test's name
/// and its place among that test's runs.
pub fn check(args: &[&str], code: Option<i32>, doc: Option<&Value>) {
    let test = std::thread::current().name().unwrap_or("main").to_string();
    assert_ne!(
        test, "main",
        "golden outcomes are keyed by the test's thread: run with more than one test thread"
    );
    let n = RUNS.with(|c| {
        let n = c.get();
        c.set(n + 1);
        n
    });
    let key = format!("{test}#{n}");
    let path = format!(
        "{}/tests/golden/{}.json",
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_CRATE_NAME")
    );
    let observed = outcome(code, doc, counted(args));
    let _held = FILE.lock().unwrap_or_else(|e| e.into_inner());
    let mut all: BTreeMap<String, Map<String, Value>> = match std::fs::read_to_string(&path) {
        Ok(s) => serde_json::from_str(&s).unwrap_or_else(|e| panic!("{path}: {e}")),
        Err(_) => BTreeMap::new(),
    };
    if std::env::var("MUXLAB_GOLDEN").as_deref() == Ok("record") {
        let kept = match all.remove(&key) {
            // Only what every recording agrees on stays.
            Some(mut was) => {
                let times = was.get("recordings").and_then(Value::as_u64).unwrap_or(1);
                // Said on stderr: a field recorded before that this run changes is dropped (a
                // recording made after a change would lose what the change altered).
                for (k, v) in was
                    .iter()
                    .filter(|(k, v)| *k != "recordings" && observed.get(*k) != Some(*v))
                {
                    // Straight to stderr: the harness captures `eprintln!` of a passing test.
                    let said = format!("golden {key}: `{k}` dropped: recorded {v}, now {:?}\n", observed.get(k));
                    let _ = std::io::Write::write_all(&mut std::io::stderr(), said.as_bytes());
                }
                was.retain(|k, v| k == "recordings" || observed.get(k) == Some(v));
                was.insert("recordings".into(), Value::from(times + 1));
                was
            }
            None => {
                let mut first = observed;
                first.insert("recordings".into(), Value::from(1));
                first
            }
        };
        all.insert(key, kept);
        std::fs::create_dir_all(std::path::Path::new(&path).parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&all).unwrap() + "\n").unwrap();
        return;
    }
    let golden = all
        .get(&key)
        .unwrap_or_else(|| panic!("no golden outcome for {key} in {path}: record it (see tests/common/golden.rs)"));
    for (field, want) in golden.iter().filter(|(k, _)| *k != "recordings") {
        assert_eq!(
            observed.get(field),
            Some(want),
            "{key}: `{field}` is not what it was when recorded ({path}); the run: {observed:?}"
        );
    }
}
