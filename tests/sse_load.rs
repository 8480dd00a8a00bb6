//! `muxlab load --sse` against streams it did not write: a streaming server a user would run
//! (sse-starlette under uvicorn, from the package index, which `.ci/run` installs) and muxlab's
//! own `/stream` with known delays, over HTTP/1.1 and HTTP/2, in one process and in shards.
//! Counts, order, ids, loss and lower bounds on time only: no timing assertion.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use common::{skip, Server, BIN};
use serde_json::Value;

fn pydeps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/pydeps")
}

/// The Python streaming server, and its port; `None` (skipped, saying why) where it cannot run.
struct PyServer {
    child: Child,
    port: u16,
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn py_server() -> Option<PyServer> {
    let ok = Command::new("python3")
        .args(["-c", "import sse_starlette, uvicorn"])
        .env("PYTHONPATH", pydeps())
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip(&format!(
            "sse-starlette and uvicorn are not in {} (.ci/run installs them: python3 -m pip install --target target/pydeps sse-starlette uvicorn)",
            pydeps().display()
        ));
        return None;
    }
    let mut child = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sse/server.py"))
        .arg("0")
        .env("PYTHONPATH", pydeps())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = serde_json::from_str::<Value>(&line).unwrap()["port"].as_u64().unwrap() as u16;
    Some(PyServer { child, port })
}

/// `muxlab load URL ARGS --json`: its document.
fn load(url: &str, args: &[&str]) -> Value {
    let out = Command::new(BIN)
        .args(["load", url, "--json", "--timeout", "20s"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{url} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap() / 1000.0
}

#[test]
fn load_sse_reads_a_real_streaming_server_every_event_in_order_and_no_sooner_than_sent() {
    let Some(py) = py_server() else { return };
    let url = format!("http://127.0.0.1:{}/events?n=10&gap_ms=20", py.port);
    let doc = load(&url, &["--sse", "-c", "4", "-n", "8"]);
    let s = &doc["sse"];
    assert_eq!(s["streams"], 8, "{s}");
    assert_eq!(s["events"], 80, "{s}");
    assert_eq!(
        (s["lost"].as_u64(), s["out_of_order"].as_u64()),
        (Some(0), Some(0)),
        "{s}"
    );
    assert_eq!(s["cut"], 0);
    assert_eq!(s["ttfe"]["count"], 8);
    assert_eq!(s["gap"]["count"], 72, "nine gaps per stream");
    // The server sleeps 20 ms before each event: none can come sooner.
    assert!(ms(&s["ttfe"]["min"]) >= 19.0, "{s}");
    assert!(ms(&s["duration"]["min"]) >= 199.0, "{s}");
    assert_eq!(doc["requests"], 8);
}

#[test]
fn a_stream_the_server_cuts_mid_way_is_an_error_of_its_own_with_the_events_it_delivered() {
    let Some(py) = py_server() else { return };
    let url = format!("http://127.0.0.1:{}/cut?n=3&gap_ms=10", py.port);
    // Without --sse: the Content-Type says it is an event stream.
    let doc = load(&url, &["-c", "2", "-n", "4"]);
    let s = &doc["sse"];
    assert_eq!(doc["errors"]["stream_cut"], 4, "{doc}");
    assert_eq!(
        (s["cut"].as_u64(), s["cut_events"].as_u64()),
        (Some(4), Some(12)),
        "{s}"
    );
    assert_eq!(s["duration"]["count"], 0, "a cut stream has no whole duration");
    assert_eq!(doc["requests"], 0);
}

#[test]
fn two_thousand_streams_of_twenty_events_deliver_exactly_forty_thousand_over_both_versions() {
    let server = Server::start("epoll", &["--proto", "h2"]);
    let path = "/stream?events=20&every=20ms&size=16";
    let doc = load(
        &format!("http://{}{path}", server.addr),
        &["--sse", "-c", "2000", "-n", "2000"],
    );
    let s = &doc["sse"];
    assert_eq!(
        (s["streams"].as_u64(), s["events"].as_u64()),
        (Some(2000), Some(40_000)),
        "{s}"
    );
    assert_eq!(
        (s["lost"].as_u64(), s["out_of_order"].as_u64()),
        (Some(0), Some(0)),
        "{s}"
    );
    // The first event is due 20 ms after each request arrives, the last 400 ms.
    assert!(ms(&s["ttfe"]["min"]) >= 19.0, "{s}");
    assert!(ms(&s["duration"]["min"]) >= 399.0, "{s}");
    // HTTP/2: ten concurrent streams per connection.
    let doc = load(
        &format!("h2c://{}{path}", server.addr),
        &["-c", "10", "--streams", "10", "-n", "200"],
    );
    let s = &doc["sse"];
    assert_eq!(
        (s["streams"].as_u64(), s["events"].as_u64()),
        (Some(200), Some(4000)),
        "{s}"
    );
    assert_eq!(s["lost"], 0);
    assert!(doc["h2"]["in_flight_max"].as_u64().unwrap() > 1, "{doc}");
    let stats = server.stop().stats;
    assert_eq!(stats["totals"]["sse_events"], 44_000);
}

#[test]
fn stream_figures_from_shards_merge_into_the_figures_of_one_run() {
    let server = Server::start("epoll", &[]);
    let url = format!("http://{}/stream?events=5&every=5ms&size=8", server.addr);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("sse-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for i in 0..2 {
        let doc = Command::new(BIN)
            .args(["load", &url, "--sse", "-c", "10", "-n", "40", "--json", "--shard"])
            .arg(format!("{i}/2"))
            .output()
            .unwrap();
        assert!(doc.status.success(), "{doc:?}");
        let f = dir.join(format!("part-{i}.json"));
        std::fs::write(&f, &doc.stdout).unwrap();
        files.push(f);
    }
    let merged = Command::new(BIN).arg("merge").args(&files).output().unwrap();
    assert!(merged.status.success(), "{merged:?}");
    let doc: Value = serde_json::from_slice(&merged.stdout).unwrap();
    let s = &doc["sse"];
    assert_eq!(
        (s["streams"].as_u64(), s["events"].as_u64()),
        (Some(40), Some(200)),
        "{s}"
    );
    assert_eq!(s["ttfe"]["count"], 40);
    assert_eq!(s["gap"]["count"], 160);
    server.stop();
}

#[test]
fn sse_is_refused_for_echo_and_packet_targets() {
    let out = Command::new(BIN)
        .args(["load", "echo://127.0.0.1:9", "--sse", "-n", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sse"), "{out:?}");
}
