//! `muxlab bench` over keyed stores: resp and memcache experiments against muxlab's stores and
//! the real redis-server and memcached started by bench, threaded targets on their own CPUs,
//! the choice the headline makes, the locks each store's counters measured, and the
//! predictions calibrated from a lighter experiment.

mod common;

use std::process::Command;

use common::bench_files::*;
use common::*;
use serde_json::Value;

fn cells<'a>(r: &'a Value, experiment: &str) -> Vec<&'a Value> {
    r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["experiment"] == experiment)
        .collect()
}

fn cell<'a>(r: &'a Value, experiment: &str, target: &str) -> &'a Value {
    cells(r, experiment)
        .into_iter()
        .find(|c| c["target"] == target && c["calibration"].is_null())
        .unwrap_or_else(|| panic!("no cell of {target} in {experiment}"))
}

/// The choice a verdict's headline opens with, clause by clause (one per placement where the
/// targets ran placed differently), agrees with its findings: "choose X" names the best of a
/// clear finding of that placement; "no pick" comes only where the first metric chosen by
/// (server CPU per request) did not separate there.
fn choice_agrees_with_the_findings(v: &Value) {
    let h = v["headline"].as_str().unwrap();
    let findings = v["findings"].as_array().unwrap();
    let first = h.split(". ").next().unwrap();
    let clauses: Vec<(Value, &str)> = match first.strip_prefix("Server on ") {
        Some(rest) => rest
            .split("; server on ")
            .map(|c| {
                let (at, said) = c.split_once(": ").unwrap_or_else(|| panic!("{h}"));
                (Value::from(format!("server on {at}")), said)
            })
            .collect(),
        None => vec![(Value::Null, first)],
    };
    for (placed, said) in clauses {
        let mine: Vec<&Value> = findings
            .iter()
            .filter(|f| f["class"].is_null() && f.get("placed").unwrap_or(&Value::Null) == &placed)
            .collect();
        let said = said.to_lowercase();
        match said.strip_prefix("choose ") {
            Some(rest) => {
                let x = rest.split(": ").next().unwrap();
                assert!(
                    mine.iter().any(|f| f["clear"] == true && f["best"] == x),
                    "'{h}' chooses {x}, the best of no clear finding at {placed}: {v}"
                );
            }
            None => {
                assert!(said.starts_with("no pick"), "{h}");
                let cpu = mine.iter().find(|f| f["metric"] == "server CPU per request");
                assert!(
                    cpu.is_none_or(|f| f["clear"] == false),
                    "'{h}' makes no pick though CPU separated: {v}"
                );
            }
        }
    }
}

#[test]
fn keyed_experiments_run_the_real_stores_beside_the_models_and_choose_one() {
    if !have("redis-server", "redis-server") || !have("memcached", "memcached") {
        return;
    }
    let d = tmpdir("bench-kv");
    let common = "connections = [8]\nkeys = 2000\nprefill = true\nkey_dist = \"zipf:0.99\"\nworkers = 2\n\
                  choose_by = [\"cpu\", \"p99\"]\nduration = \"500ms\"\nwarmup = \"100ms\"\n";
    let p = scenario(
        &d,
        &format!(
            "threaded_cpus = \"all\"\n\
             [[experiment]]\nname = \"light\"\nproto = \"resp\"\nmodels = [\"reactor\", \"queue-pool --store locked\"]\n\
             peers = [\"redis-server\", \"redis-server --io-threads 2\"]\nrate = 2000\n{common}\
             [[experiment]]\nname = \"heavier\"\nproto = \"resp\"\nmodels = [\"reactor\", \"queue-pool --store locked\"]\n\
             peers = [\"redis-server\"]\nrate = 4000\ncalibrate_by = \"light\"\n{common}\
             [[experiment]]\nname = \"mc\"\nproto = \"memcache\"\nmodels = [\"dispatch --store striped:8\"]\n\
             peers = [\"memcached -t 1\", \"memcached -t 2\"]\nrate = 2000\npipeline = 4\n{common}"
        ),
    );
    let (r, stdout) = bench_ok(&p, &d);
    for c in r["cells"].as_array().unwrap() {
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["figures"]["errors"], 0, "{c}");
        assert_eq!(c["load"]["keyed"]["wrong_values"], 0, "{c}");
    }
    // The peers ran, served by the products themselves.
    let redis = cell(&r, "light", "redis-server");
    assert!(redis["figures"]["throughput_rps"].as_f64().unwrap() > 0.0, "{redis}");
    assert!(
        cell(&r, "mc", "memcached -t 2")["load"]["keyed"]["hits"]
            .as_u64()
            .unwrap()
            > 0
    );
    // Threaded targets on every CPU, single-threaded ones on the server's: models and peers.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let all: Vec<String> = (0..cpus).map(|c| c.to_string()).collect();
    assert_eq!(r["environment"]["threaded_cpus"], all.join(","), "{}", r["environment"]);
    let on = |x: &str, t: &str| cell(&r, x, t)["figures"]["why"]["server_cpus"].as_u64();
    let server = r["environment"]["server_cpus"].as_str().unwrap().split(',').count() as u64;
    assert_eq!(on("light", "reactor"), Some(server));
    assert_eq!(on("light", "redis-server"), Some(server));
    assert_eq!(on("mc", "memcached -t 1"), Some(server));
    for (x, t) in [
        ("light", "queue-pool --store locked"),
        ("light", "redis-server --io-threads 2"),
        ("mc", "memcached -t 2"),
        ("mc", "dispatch --store striped:8"),
    ] {
        assert_eq!(on(x, t), Some(cpus as u64), "{x} {t}");
    }
    // The locked store's counters measured its lock; the owned one takes none.
    let locks = &cell(&r, "light", "queue-pool --store locked")["figures"]["locks"];
    assert_eq!(locks["per_req"].as_f64(), Some(1.0), "{locks}");
    assert!(locks["hold_us"].as_f64().is_some_and(|h| h > 0.0), "{locks}");
    assert!(cell(&r, "light", "reactor")["figures"]["locks"].is_null());
    // Each experiment's verdict's headline makes the choice.
    for v in r["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["experiment"] != "fidelity")
    {
        choice_agrees_with_the_findings(v);
        assert_eq!(v["findings"][0]["metric"], "server CPU per request", "{v}");
    }
    // The heavier experiment's predictions take their costs from the light one's cells.
    let predicted = &cell(&r, "heavier", "queue-pool --store locked")["figures"]["predicted"];
    let from = predicted["costs_from"].as_str().unwrap_or_default();
    assert!(
        from.contains("its cell of 'light'") && from.contains("holding a lock"),
        "{predicted}"
    );
    // The store's part of the predicted p99 (its lock's wait) is a time within the whole: 0
    // where the lock never waits (a light load), never more than the p99 it is part of.
    let whole = predicted["p99_us"].as_f64().filter(|v| *v > 0.0);
    assert!(whole.is_some(), "{predicted}");
    assert!(
        predicted["store_p99_us"]
            .as_f64()
            .is_some_and(|v| (0.0..=whole.unwrap()).contains(&v)),
        "{predicted}"
    );
    assert!(
        cells(&r, "heavier").iter().all(|c| c["calibration"].is_null()),
        "calibrated by 'light': no calibration cells of its own"
    );
    assert!(stdout.contains("Contention: queue-pool --store locked"), "{stdout}");
    // The stores beside the models that stand for them, in the fidelity verdict: redis-server
    // beside reactor, memcached beside dispatch (io-threads did not run: no row for
    // redis-server --io-threads 2).
    let pairs: Vec<String> = fidelity_rows(&r)
        .iter()
        .map(|r| {
            format!(
                "{} {} ~ {}",
                r["experiment"].as_str().unwrap(),
                r["product"].as_str().unwrap(),
                r["model"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            "light redis-server ~ reactor",
            "heavier redis-server ~ reactor",
            "mc memcached -t 1 ~ dispatch --store striped:8",
            "mc memcached -t 2 ~ dispatch --store striped:8"
        ]
    );
}

/// A peer the protocol does not fit is refused when the file is read, naming it.
#[test]
fn a_peer_that_does_not_speak_the_protocol_is_refused_by_name() {
    let d = tmpdir("bench-kv-peer");
    let p = scenario(
        &d,
        "[[experiment]]\nname = \"e\"\nproto = \"resp\"\nmodels = [\"reactor\"]\npeers = [\"memcached -t 2\"]\n\
         connections = [1]\nduration = \"1s\"\n",
    );
    let out = Command::new(BIN).args(["bench", p.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("memcached speaks memcache, not resp"), "{err}");
}
