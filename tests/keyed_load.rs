//! `muxlab load resp://` and `memcache://` against Debian's redis-server and memcached (which
//! `.ci/run` installs), against muxlab's own keyed servers, and against small stores written
//! here that lie (another key's value, a stale one) or count how commands arrive.

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread;

use common::stores::Store;
use common::*;
use serde_json::Value;

/// `muxlab load ARGS --json`, its outcome checked against its golden recording
/// (`tests/golden/keyed_load.json`, see `common::golden`).
fn load(args: &[&str]) -> (i32, Value, String) {
    let (code, doc, err) = common::load(args);
    common::golden::check(args, Some(code), Some(&doc));
    (code, doc, err)
}

/// Asserts a fixed-rate run of `url` answered every command it scheduled, right.
fn clean_run(url: &str, pipeline: &str, what: &str) -> Value {
    let (code, doc, err) = load(&[
        url,
        "-c",
        "8",
        "--rate",
        "4000",
        "-d",
        "1s",
        "--pipeline",
        pipeline,
        "--keys",
        "2000",
        "--prefill",
        "--value-size",
        "32-300",
    ]);
    let what = format!("{what} at pipeline {pipeline}");
    assert_eq!(code, 0, "{what}: {err}");
    assert_eq!(doc["error_total"], 0, "{what}: {}", doc["errors"]);
    let k = &doc["keyed"];
    assert_eq!(k["wrong_values"], 0, "{what}: {k}");
    assert_eq!(k["prefilled_keys"], 2000, "{what}: every key written before the window");
    let gets = k["gets"].as_u64().unwrap();
    assert!(
        gets > 0 && k["hits"] == gets,
        "{what}: prefilled, nothing evicted: every GET hits: {k}"
    );
    assert_eq!(
        k["checked_exact"], gets,
        "{what}: every owned key checked against its last write"
    );
    assert!(k["sets"].as_u64().unwrap() > 0, "{what}: {k}");
    let scheduled = doc["scheduled"].as_u64().unwrap();
    assert!(
        scheduled.abs_diff(4000) <= 16,
        "{what}: 4,000 a second for a second, in batches of the pipeline: {scheduled} scheduled"
    );
    // Every command scheduled is answered or, sent too near the close, counted as not
    // completed (how many depends on the machine's timing at the close, not on the store: not
    // asserted).
    let (requests, late) = (
        doc["requests"].as_u64().unwrap(),
        doc["not_completed"].as_u64().unwrap(),
    );
    assert_eq!(
        requests + late,
        scheduled,
        "{what}: nothing scheduled is unaccounted for"
    );
    let classes = &doc["classes"];
    assert!(
        classes["get"]["latency_us"]["p99"].as_f64().is_some() && classes["set"]["requests"].as_u64() > Some(0),
        "{what}: per-command latency: {classes}"
    );
    doc
}

/// A second run against a store the first filled, without --prefill: the first run's values
/// are found (and pass their integrity check) while the second writes its own, in batches.
fn second_run(url: &str, what: &str) {
    let (code, doc, err) = load(&[
        url,
        "-c",
        "8",
        "-n",
        "20000",
        "--pipeline",
        "16",
        "--keys",
        "2000",
        "--ratio",
        "1:1",
    ]);
    assert_eq!(code, 0, "{what}: {err}");
    let k = &doc["keyed"];
    assert_eq!(
        k["wrong_values"], 0,
        "{what}: an earlier run's values are not wrong: {k}"
    );
    assert!(
        k["checked_integrity"].as_u64() > Some(0),
        "{what}: an earlier run's values found: {k}"
    );
    assert!(k["checked_exact"].as_u64() > Some(0), "{what}: and this run's own: {k}");
}

#[test]
fn fixed_rate_runs_against_redis_answer_everything_right_at_pipeline_1_and_16() {
    let Some(redis) = Store::redis(&[]) else { return };
    for pipeline in ["1", "16"] {
        clean_run(&redis.url("resp"), pipeline, "redis-server");
    }
    second_run(&redis.url("resp"), "redis-server");
}

#[test]
fn fixed_rate_runs_against_memcached_answer_everything_right_at_pipeline_1_and_16() {
    let Some(mc) = Store::memcached(&["-t", "1"]) else {
        return;
    };
    for pipeline in ["1", "16"] {
        clean_run(&mc.url("memcache"), pipeline, "memcached");
    }
    second_run(&mc.url("memcache"), "memcached");
}

#[test]
fn a_store_refusing_writes_for_memory_is_a_server_error_and_the_connection_goes_on() {
    let Some(redis) = Store::redis(&["--maxmemory", "1mb", "--maxmemory-policy", "noeviction"]) else {
        return;
    };
    let (code, doc, err) = load(&[
        &redis.url("resp"),
        "-c",
        "2",
        "-n",
        "4000",
        "--keys",
        "4000",
        "--key-dist",
        "sequential",
        "--ratio",
        "1:0",
        "--value-size",
        "1KiB",
    ]);
    assert_eq!(code, 1, "refusals are errors: {err}");
    let k = &doc["keyed"];
    let refused = doc["errors"]["server_error"].as_u64().unwrap_or(0);
    assert!(refused > 0, "1 MB cannot hold 4 MB: {}", doc["errors"]);
    assert_eq!(k["refused"], refused, "{k}");
    assert_eq!(
        doc["requests"], 4000,
        "every SET answered, stored or refused, on the same connections: {doc}"
    );
    assert_eq!(
        doc["connections"]["connects_in_window"], 2,
        "no connection was failed for a refusal"
    );
    assert_eq!(k["wrong_values"], 0);
}

#[test]
fn muxlabs_own_keyed_servers_answer_the_load_generator_right() {
    for (proto, scheme) in [("resp", "resp"), ("memcache", "memcache")] {
        let srv = Server::start("reactor", &["--proto", proto]);
        let url = format!("{scheme}://{}", srv.addr);
        clean_run(&url, "16", &format!("reactor --proto {proto}"));
    }
}

#[test]
fn a_miss_after_eviction_is_a_miss_not_an_error() {
    // 2 MB of memory for 20,000 keys of 1 KiB: most are evicted as they are written.
    let Some(redis) = Store::redis(&["--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"]) else {
        return;
    };
    let (code, doc, err) = load(&[
        &redis.url("resp"),
        "-c",
        "4",
        "-n",
        "20000",
        "--keys",
        "20000",
        "--key-dist",
        "sequential",
        "--ratio",
        "1:1",
        "--value-size",
        "1KiB",
        "--prefill",
    ]);
    assert_eq!(code, 0, "{err}");
    let k = &doc["keyed"];
    assert_eq!(doc["error_total"], 0, "{}", doc["errors"]);
    assert_eq!(k["wrong_values"], 0, "{k}");
    assert!(k["misses"].as_u64().unwrap() > 0, "evicted keys miss: {k}");
    assert!(k["hit_ratio"].as_f64().unwrap() < 1.0, "{k}");
}

/// Each key's writes, oldest first.
type History = HashMap<Vec<u8>, Vec<Vec<u8>>>;

/// What a GET of a key gets, given every key's writes.
type Answer = fn(&History, &[u8]) -> Option<Vec<u8>>;

/// A RESP store written here, a thread per connection over one map; `answer` picks the value a
/// GET of a key gets from the map and that key's history of writes (oldest first).
fn resp_store(answer: Answer) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let kv: Arc<Mutex<History>> = Arc::default();
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            let kv = kv.clone();
            thread::spawn(move || serve_resp(s, &kv, answer));
        }
    });
    addr
}

/// Reads RESP arrays of bulk strings from `s` and answers SET and GET.
fn serve_resp(mut s: TcpStream, kv: &Mutex<History>, answer: Answer) {
    let mut input = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        let mut out = Vec::new();
        while let Some((args, used)) = parse_resp(&input) {
            input.drain(..used);
            let mut map = kv.lock().unwrap();
            match args[0].as_slice() {
                b"SET" => {
                    map.entry(args[1].clone()).or_default().push(args[2].clone());
                    out.extend_from_slice(b"+OK\r\n");
                }
                _ => match answer(&map, &args[1]) {
                    Some(v) => {
                        out.extend_from_slice(format!("${}\r\n", v.len()).as_bytes());
                        out.extend_from_slice(&v);
                        out.extend_from_slice(b"\r\n");
                    }
                    None => out.extend_from_slice(b"$-1\r\n"),
                },
            }
        }
        if !out.is_empty() && s.write_all(&out).is_err() {
            return;
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => input.extend_from_slice(&buf[..n]),
        }
    }
}

/// One RESP array of bulk strings at the front of `b`, and its length.
fn parse_resp(b: &[u8]) -> Option<(Vec<Vec<u8>>, usize)> {
    let line = |at: usize| -> Option<(usize, usize)> {
        let end = at + b[at..].windows(2).position(|w| w == b"\r\n")?;
        let n = std::str::from_utf8(&b[at + 1..end]).ok()?.parse().ok()?;
        Some((n, end + 2))
    };
    let (count, mut at) = line(0)?;
    let mut args = Vec::new();
    for _ in 0..count {
        let (len, start) = line(at)?;
        if b.len() < start + len + 2 {
            return None;
        }
        args.push(b[start..start + len].to_vec());
        at = start + len + 2;
    }
    Some((args, at))
}

#[test]
fn a_store_answering_another_keys_value_is_caught_as_a_wrong_value() {
    // The value of the key whose name sorts next after the one asked for, when there is one.
    let addr = resp_store(|map, key| {
        let other = map.keys().filter(|k| k.as_slice() > key).min()?;
        map[other].last().cloned()
    });
    let (code, doc, err) = load(&[
        &format!("resp://{addr}"),
        "-c",
        "2",
        "-n",
        "3000",
        "--keys",
        "100",
        "--prefill",
    ]);
    assert_eq!(code, 1, "a run with errors exits 1: {err}");
    let wrong = doc["errors"]["wrong_value"].as_u64().unwrap_or(0);
    assert!(wrong > 0, "another key's values passed: {}", doc["keyed"]);
    assert_eq!(doc["keyed"]["wrong_values"], wrong);
    let first = doc["keyed"]["first_wrong"].as_str().unwrap();
    assert!(first.contains("another key's value"), "{first}");
    assert_eq!(
        doc["classes"]["get"]["errors"], wrong,
        "the wrong values are GETs' errors"
    );
    // With zipf keys (shared, integrity only) it is caught too.
    let (_, doc, _) = load(&[
        &format!("resp://{addr}"),
        "-n",
        "2000",
        "--keys",
        "100",
        "--key-dist",
        "zipf:0.99",
    ]);
    assert!(
        doc["errors"]["wrong_value"].as_u64().unwrap_or(0) > 0,
        "{}",
        doc["keyed"]
    );
}

#[test]
fn a_store_that_loses_writes_is_caught_where_a_checksum_alone_would_pass_it() {
    // Every GET answers the key's first value ever written: intact, the right key, stale.
    let addr = resp_store(|map, key| map.get(key)?.first().cloned());
    let url = format!("resp://{addr}");
    let (code, doc, err) = load(&[
        &url,
        "-c",
        "2",
        "-n",
        "3000",
        "--keys",
        "50",
        "--ratio",
        "1:1",
        "--prefill",
    ]);
    assert_eq!(code, 1, "{err}");
    let k = &doc["keyed"];
    assert!(
        k["wrong_values"].as_u64().unwrap() > 0,
        "stale values passed: {k} {err}"
    );
    assert!(k["first_wrong"].as_str().unwrap().contains("last write"), "{k}");
    // Shared zipf keys are checked for integrity only: the same stale values pass, as the
    // summary says.
    let (_, doc, _) = load(&[
        &url,
        "-n",
        "2000",
        "--keys",
        "50",
        "--key-dist",
        "zipf:0.99",
        "--ratio",
        "1:1",
    ]);
    assert_eq!(doc["keyed"]["wrong_values"], 0, "{}", doc["keyed"]);
    assert_eq!(doc["keyed"]["checks"], "integrity");
    let out = Command::new(BIN)
        .args(["load", &url, "-n", "500", "--keys", "50", "--key-dist", "zipf:0.99"])
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("for integrity") && summary.contains("zipf keys are shared, the last write is not known"),
        "{summary}"
    );
}

#[test]
fn at_pipeline_n_a_connection_sends_n_commands_together_and_no_more_until_all_are_answered() {
    // A store that answers only whole batches of 16: a client that sent fewer would wait for
    // ever (and time out); one that sent more would show more than 16 unanswered.
    let most = Arc::new(Mutex::new(0usize));
    let seen = most.clone();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let seen = seen.clone();
            thread::spawn(move || {
                let (mut input, mut buf, mut waiting) = (Vec::new(), [0u8; 65536], 0usize);
                loop {
                    while let Some((_, used)) = parse_resp(&input) {
                        input.drain(..used);
                        waiting += 1;
                    }
                    let mut m = seen.lock().unwrap();
                    *m = (*m).max(waiting);
                    drop(m);
                    if waiting == 16 {
                        // SETs only: each is stored.
                        if s.write_all(&b"+OK\r\n".repeat(16)).is_err() {
                            return;
                        }
                        waiting = 0;
                    }
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => input.extend_from_slice(&buf[..n]),
                    }
                }
            });
        }
    });
    let (code, doc, err) = load(&[
        &format!("resp://{addr}"),
        "-c",
        "4",
        "--rate",
        "3200",
        "-d",
        "1s",
        "--pipeline",
        "16",
        "--ratio",
        "1:0",
        "--timeout",
        "2s",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        doc["error_total"], 0,
        "a batch short of 16 was waited on: {}",
        doc["errors"]
    );
    assert_eq!(*most.lock().unwrap(), 16, "at most 16 in flight per connection");
    let (scheduled, requests) = (doc["scheduled"].as_u64().unwrap(), doc["requests"].as_u64().unwrap());
    assert_eq!(scheduled % 16, 0, "the schedule is of whole batches: {scheduled}");
    assert!(
        scheduled.abs_diff(3200) <= 16,
        "batches at 3,200 / 16 a second: {scheduled}"
    );
    let late = doc["not_completed"].as_u64().unwrap();
    assert_eq!(requests + late, scheduled, "{doc}");
}

#[test]
fn keyed_flags_that_cannot_work_are_one_clear_line_and_exit_2() {
    for (args, hint) in [
        (
            &["resp://127.0.0.1:1", "-c", "10", "--keys", "5"][..],
            "fewer than the 10 connections",
        ),
        (&["resp://127.0.0.1:1", "--value-size", "8"][..], "too short"),
        (&["resp://127.0.0.1:1", "--keys", "1000000000"][..], "4 bytes per key"),
        (
            &[
                "resp://127.0.0.1:1",
                "--value-size",
                "8",
                "--no-verify",
                "--keys",
                "1",
                "-c",
                "1",
            ][..],
            "",
        ),
        (
            &["http://127.0.0.1:1/", "--keys", "10"][..],
            "apply to resp:// and memcache://",
        ),
        (
            &["echo://127.0.0.1:1", "--prefill"][..],
            "apply to resp:// and memcache://",
        ),
        (&["memcache://127.0.0.1:1", "--mix", "a=1:/"][..], "weighted by --ratio"),
        (&["resp://127.0.0.1:1", "--size", "64"][..], "--value-size"),
        (&["resp://127.0.0.1:1", "--ratio", "0:0"][..], "not both 0"),
        (&["resp://127.0.0.1:1", "--key-dist", "zipf:0"][..], "above 0"),
        (&["resp://127.0.0.1:1", "--value-size", "10-5"][..], "larger than"),
        (&["resp://127.0.0.1:1", "--slo", "put:p99<=1ms"][..], "no --mix gives"),
        (&["resp://127.0.0.1:1/x"][..], "no path"),
        (&["resp://127.0.0.1:1", "-H", "X: y"][..], "HTTP's"),
        (&["memcache://127.0.0.1:1", "-m", "PUT"][..], "HTTP's"),
    ] {
        let out = Command::new(BIN)
            .arg("load")
            .args(args)
            .args(["-d", "1s"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if hint.is_empty() {
            // Accepted: the run goes on to find nothing listening.
            assert_ne!(out.status.code(), Some(2), "{args:?}: {err}");
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(hint), "{args:?}: {err}");
    }
}
