//! Event streams (`GET /stream`, `serve --stream`) from every model, read by real clients: curl
//! over HTTP/1.1 and HTTP/2, and an independent SSE parser (Python's sseclient-py, which
//! `.ci/run` installs). Counts, order, ids and lower bounds on time only: no timing assertion.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{for_each_model, skip, Server};
use serde_json::Value;

/// Where `.ci/run` installs the Python SSE parser.
fn pydeps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/pydeps")
}

/// Why the real clients cannot run here, if they cannot.
fn clients_missing() -> Option<String> {
    let curl = Command::new("curl").arg("--version").output();
    if !curl.is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("HTTP2")) {
        return Some("curl with HTTP/2 is not installed (apt-get install curl)".into());
    }
    let py = Command::new("python3")
        .args(["-c", "import sseclient"])
        .env("PYTHONPATH", pydeps())
        .output();
    if !py.is_ok_and(|o| o.status.success()) {
        return Some(format!(
            "Python's sseclient-py is not in {} (.ci/run installs it: python3 -m pip install --target target/pydeps sseclient-py)",
            pydeps().display()
        ));
    }
    None
}

/// The events curl read: their ids, and the size of each one's data.
fn curl_events(out: &Output) -> (Vec<u32>, Vec<usize>) {
    let text = String::from_utf8_lossy(&out.stdout);
    let (mut ids, mut sizes) = (Vec::new(), Vec::new());
    for line in text.lines() {
        if let Some(id) = line.strip_prefix("id: ") {
            ids.push(id.parse().unwrap());
        } else if let Some(data) = line.strip_prefix("data: ") {
            sizes.push(data.len());
        }
    }
    (ids, sizes)
}

fn total(stats: &Value, name: &str) -> u64 {
    stats["totals"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no {name} in {stats}"))
}

const PATH: &str = "/stream?events=50&every=10ms&size=32";

#[test]
fn every_model_streams_fifty_events_in_order_to_curl_over_both_versions_and_to_an_sse_parser() {
    if let Some(why) = clients_missing() {
        return skip(&why);
    }
    for_each_model(|model, args| {
        // A cleartext h2 port answers HTTP/1.1 too.
        let mut a = args.to_vec();
        a.extend(["--proto", "h2"]);
        let server = Server::start(model, &a);
        let (host, port) = (server.addr.ip().to_string(), server.addr.port().to_string());
        let url = format!("http://{}{PATH}", server.addr);
        let t0 = Instant::now();
        let curl = |v: &str| {
            Command::new("curl")
                .args(["-sSN", "--max-time", "30", v, &url])
                .output()
                .unwrap()
        };
        let (h1, h2, parsed) = std::thread::scope(|s| {
            let h1 = s.spawn(|| curl("--http1.1"));
            let h2 = s.spawn(|| curl("--http2-prior-knowledge"));
            let py = Command::new("python3")
                .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sse/read.py"))
                .args([&host, &port, PATH])
                .env("PYTHONPATH", pydeps())
                .output()
                .unwrap();
            (h1.join().unwrap(), h2.join().unwrap(), py)
        });
        let elapsed = t0.elapsed();
        let want: Vec<u32> = (1..=50).collect();
        for (name, out) in [("curl --http1.1", &h1), ("curl --http2-prior-knowledge", &h2)] {
            assert!(out.status.success(), "{model} {name}: {out:?}");
            let (ids, sizes) = curl_events(out);
            assert_eq!(ids, want, "{model} {name}: ids");
            assert!(sizes.iter().all(|&n| n == 32), "{model} {name}: {sizes:?}");
        }
        assert!(parsed.status.success(), "{model} sseclient: {parsed:?}");
        let got: Value = serde_json::from_slice(&parsed.stdout).unwrap();
        assert_eq!(got["status"], 200, "{model}: {got}");
        assert_eq!(got["content_type"], "text/event-stream", "{model}: {got}");
        let ids: Vec<u32> = serde_json::from_value(got["ids"].clone()).unwrap();
        assert_eq!(ids, want, "{model} sseclient: ids");
        assert!(
            got["sizes"].as_array().unwrap().iter().all(|n| n == 32),
            "{model}: {got}"
        );
        // The 50th event is due 500 ms after the request: no stream can be done sooner.
        assert!(got["seconds"].as_f64().unwrap() >= 0.49, "{model}: {got}");
        assert!(elapsed >= Duration::from_millis(490), "{model}: {elapsed:?}");
        let stats = server.stop().stats;
        assert_eq!(total(&stats, "sse_started"), 3, "{model}: {stats}");
        assert_eq!(total(&stats, "sse_finished"), 3, "{model}: {stats}");
        assert_eq!(total(&stats, "sse_events"), 150, "{model}: {stats}");
        let buckets: u64 = [
            "le_1ms", "le_2ms", "le_5ms", "le_10ms", "le_50ms", "le_100ms", "le_1s", "over_1s",
        ]
        .iter()
        .map(|b| total(&stats, &format!("sse_late_{b}")))
        .sum();
        assert_eq!(
            buckets, 150,
            "{model}: every event is in the lateness histogram: {stats}"
        );
    });
}

#[test]
fn a_stopping_server_ends_its_open_streams_cleanly_in_every_model() {
    if let Some(why) = clients_missing() {
        return skip(&why);
    }
    for_each_model(|model, args| {
        let mut a = args.to_vec();
        a.extend(["--proto", "h2"]);
        let server = Server::start(model, &a);
        let url = format!("http://{}/stream?events=1000&every=20ms&size=8", server.addr);
        let spawn = |v: &str| {
            Command::new("curl")
                .args(["-sSN", "--max-time", "30", v, &url])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        // A stream per client; a design that holds one stream at a time (iterative) gets one.
        let one = muxlab::models::ALL
            .iter()
            .any(|m| m.name == model && m.one_conn_per_worker && m.workers == muxlab::server::Workers::None);
        let mut clients = vec![("HTTP/1.1", spawn("--http1.1"))];
        if !one {
            clients.push(("HTTP/2", spawn("--http2-prior-knowledge")));
        }
        let n = clients.len() as u64;
        std::thread::sleep(Duration::from_millis(600));
        let stats = server.stop().stats;
        for (name, c) in clients {
            let out = c.wait_with_output().unwrap();
            // curl exits 0 only for a response that ended properly: the last chunk over
            // HTTP/1.1, END_STREAM over HTTP/2 (18 is a transfer cut short).
            assert!(out.status.success(), "{model} {name}: {out:?}");
            let (ids, _) = curl_events(&out);
            assert!(
                !ids.is_empty() && ids.len() < 1000,
                "{model} {name}: {} events",
                ids.len()
            );
            assert!(ids.iter().copied().eq(1..=ids.len() as u32), "{model} {name}: in order");
        }
        assert_eq!(total(&stats, "sse_started"), n, "{model}: {stats}");
        assert_eq!(total(&stats, "sse_cut"), n, "{model}: {stats}");
    });
}

#[test]
fn stream_requests_past_the_bounds_get_400_and_serve_stream_makes_every_get_a_stream() {
    if let Some(why) = clients_missing() {
        return skip(&why);
    }
    let server = Server::start(
        "epoll",
        &[
            "--stream",
            "events=3,every=exp(5ms),size=4",
            "--max-stream",
            "events=10,time=1s,size=1KiB",
        ],
    );
    let status = |path: &str| {
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10"])
            .arg(format!("http://{}{path}", server.addr))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for bad in [
        "/stream?events=11",
        "/stream?size=2KiB",
        "/stream?events=10&every=200ms",
        "/stream?every=soon",
        "/stream?events=0",
        // A client names no file of the server's (/dev/zero would grow it without end).
        "/stream?every=hist:/dev/zero",
        "/stream?first=hist%3A%2Fdev%2Fzero",
        "/stream?every=mix(50%:mix(50%:mix(50%:1ms)))",
    ] {
        assert_eq!(status(bad), "400", "{bad}");
    }
    // Any GET is a stream with --stream's defaults; a query's keys win over them.
    let out = Command::new("curl")
        .args(["-sSN", "--max-time", "10"])
        .arg(format!("http://{}/", server.addr))
        .output()
        .unwrap();
    assert_eq!(curl_events(&out), (vec![1, 2, 3], vec![4, 4, 4]));
    let out = Command::new("curl")
        .args(["-sSN", "--max-time", "10"])
        .arg(format!("http://{}/anything?events=5&every=1ms", server.addr))
        .output()
        .unwrap();
    assert_eq!(curl_events(&out).0, vec![1, 2, 3, 4, 5]);
    let stats = server.stop().stats;
    assert_eq!(total(&stats, "sse_finished"), 2, "{stats}");
    // --stream is for HTTP: an echo server refuses it, saying why.
    let out = Command::new(common::BIN)
        .args([
            "serve", "--model", "epoll", "--proto", "echo", "--port", "0", "--stream", "events=3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--stream"), "{out:?}");
}

/// Raises this process's descriptor limit to its hard limit (the clients of many streams).
fn raise_nofile() {
    let (_, hard) = muxlab::sys::rlimit::nofile().unwrap();
    muxlab::sys::rlimit::set_nofile(hard).unwrap();
}

/// Opens `n` streams of `events` events every `every` to `server` at once (HTTP/1.1, a task
/// each), reads each to its last chunk, and returns every stream's ids.
fn many_streams(server: &Server, n: usize, events: u32, every: &str) -> Vec<Vec<u32>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let addr = server.addr;
    let req = format!("GET /stream?events={events}&every={every}&size=16 HTTP/1.1\r\nHost: t\r\n\r\n");
    rt.block_on(async move {
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..n {
            let req = req.clone();
            tasks.spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
                s.write_all(req.as_bytes()).await.unwrap();
                let mut got = Vec::new();
                let mut buf = vec![0u8; 16 * 1024];
                while !got.ends_with(b"\r\n0\r\n\r\n") {
                    let n = tokio::time::timeout(Duration::from_secs(60), s.read(&mut buf))
                        .await
                        .expect("a stream stalled for 60 s")
                        .unwrap();
                    assert!(n > 0, "stream {i}: closed before its last chunk");
                    got.extend_from_slice(&buf[..n]);
                }
                let text = String::from_utf8_lossy(&got).into_owned();
                text.lines()
                    .filter_map(|l| l.strip_prefix("id: "))
                    .map(|id| id.parse::<u32>().unwrap())
                    .collect::<Vec<u32>>()
            });
        }
        let mut all = Vec::new();
        while let Some(r) = tasks.join_next().await {
            all.push(r.unwrap());
        }
        all
    })
}

#[test]
fn two_thousand_concurrent_streams_on_the_event_loops_deliver_every_event_in_order() {
    raise_nofile();
    for model in ["epoll", "uring", "tokio"] {
        let server = Server::start(model, &["--workers", "1"]);
        let streams = many_streams(&server, 2000, 20, "50ms");
        assert_eq!(streams.len(), 2000, "{model}");
        for ids in &streams {
            assert!(ids.iter().copied().eq(1..=20), "{model}: {ids:?}");
        }
        let events: usize = streams.iter().map(Vec::len).sum();
        assert_eq!(events, 40_000, "{model}");
        let stats = server.stop().stats;
        assert_eq!(total(&stats, "sse_events"), 40_000, "{model}: {stats}");
        assert_eq!(total(&stats, "sse_finished"), 2000, "{model}: {stats}");
    }
}

#[test]
fn streams_waiting_between_events_do_not_spin_the_loop() {
    raise_nofile();
    for (model, args) in [
        ("epoll", vec![]),
        ("uring", vec!["--workers", "1"]),
        ("queue-pool", vec!["--workers", "1"]),
        ("offload", vec!["--workers", "1"]),
    ] {
        let server = Server::start(model, &args);
        // 500 streams, three events 700 ms apart: a loop that spun (waited with no timeout)
        // would turn tens of thousands of times a second; one that sleeps until the next due
        // time turns at most once per event, per accept, per request read and per tick. (The
        // request reads were left out of the bound until a run beside a nice-19 busy loop on
        // each CPU measured queue-pool at 2,140 turns against a bound of 2,122: its readiness
        // thread turns for each request's head as well.)
        let streams = many_streams(&server, 500, 3, "700ms");
        assert_eq!(streams.iter().map(Vec::len).sum::<usize>(), 1500, "{model}");
        let stats = server.stop().stats;
        let loops = total(&stats, "loop_iterations");
        let uptime = stats["uptime_s"].as_f64().unwrap();
        let bound = 1500 + 500 + 500 + (uptime * 10.0) as u64 + 100;
        assert!(
            loops <= bound,
            "{model}: {loops} loop iterations in {uptime:.1} s: over {bound}: {stats}"
        );
    }
}

/// Connections that never send a byte cost their loop nothing between their own timeouts: a
/// timeout that has come is never armed again for a time already past (which would turn the
/// loop as fast as it can). A loop turns once per accept, per connection's first timeout
/// (giving back its buffers) and per tick; a blocking thread per connection wakes at its own
/// ticks (a first short wait, then one a second); a tokio task at most once a tick (it looks
/// at the stop flag), which its bound allows.
#[test]
fn idle_connections_do_not_spin_the_loop() {
    for (model, args) in [
        ("epoll", vec!["--workers", "1"]),
        ("uring", vec!["--workers", "1"]),
        ("queue-pool", vec!["--workers", "1"]),
        ("thread", vec![]),
        ("tokio", vec!["--workers", "1"]),
    ] {
        let server = Server::start(model, &args);
        let conns: Vec<_> = (0..50).map(|_| server.connect()).collect();
        std::thread::sleep(Duration::from_millis(1500));
        drop(conns);
        let stats = server.stop().stats;
        let loops = total(&stats, "loop_iterations");
        let uptime = stats["uptime_s"].as_f64().unwrap();
        let ticks = (uptime * 10.0) as u64 + 1;
        let per_conn = if model == "tokio" { ticks + 4 } else { 4 };
        let bound = 50 * per_conn + ticks * 2 + 100;
        assert!(
            loops <= bound,
            "{model}: {loops} loop iterations in {uptime:.1} s: over {bound}: {stats}"
        );
        assert_eq!(total(&stats, "accepted"), 50, "{model}");
    }
}

#[test]
fn a_client_that_stops_reading_a_stream_is_bounded_and_closed_by_the_send_timeout() {
    for model in ["epoll", "thread", "uring"] {
        let server = Server::start(model, &["--max-output", "64KiB", "--idle-timeout", "1s"]);
        let mut c = server.connect();
        c.write_all(b"GET /stream?events=100000&every=100us&size=1KiB HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        // Never read: the server's output stops at the bound, then the send timeout closes it.
        std::thread::sleep(Duration::from_millis(5000));
        let stats = server.stop().stats;
        assert_eq!(total(&stats, "closed_send_timeout"), 1, "{model}: {stats}");
        assert_eq!(total(&stats, "sse_cut"), 1, "{model}: {stats}");
        // What went out fits the bound plus the two sockets' buffers, far from the 30,000
        // events due by then.
        let buffers: u64 = ["wmem", "rmem"]
            .iter()
            .map(|m| {
                let t = std::fs::read_to_string(format!("/proc/sys/net/ipv4/tcp_{m}")).unwrap();
                t.split_whitespace().last().unwrap().parse::<u64>().unwrap()
            })
            .sum();
        let sent = total(&stats, "sse_events") * 1024;
        assert!(
            sent <= 64 * 1024 + buffers,
            "{model}: {sent} bytes of events for a client that reads nothing"
        );
        drop(c);
    }
}

#[test]
fn streams_go_over_tls_by_both_versions() {
    if let Some(why) = clients_missing() {
        return skip(&why);
    }
    for model in ["epoll", "thread"] {
        let server = Server::start(model, &["--proto", "h2", "--tls", "self-signed"]);
        let url = format!(
            "https://127.0.0.1:{}/stream?events=5&every=5ms&size=16",
            server.addr.port()
        );
        for v in ["--http1.1", "--http2"] {
            let out = Command::new("curl")
                .args(["-sSNk", "--max-time", "20", v, &url])
                .output()
                .unwrap();
            assert!(out.status.success(), "{model} {v}: {out:?}");
            assert_eq!(curl_events(&out), (vec![1, 2, 3, 4, 5], vec![16; 5]), "{model} {v}");
        }
        let stats = server.stop().stats;
        assert_eq!(total(&stats, "sse_finished"), 2, "{model}: {stats}");
    }
}

/// 3,000 requests (about 80 KiB) pipelined behind an event stream: every model stops reading
/// while the stream goes (what the client sends meanwhile waits in TCP) and answers every one
/// after the stream's last event, in order. (Past 64 KiB a session once cut the connection.)
#[test]
fn input_pipelined_behind_an_event_stream_is_served_after_it() {
    for_each_model(|model, args| {
        let server = Server::start(model, args);
        let mut c = server.connect();
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut batch = b"GET /stream?events=4&every=100ms&size=8 HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
        let n = 3000;
        for i in 0..n {
            let close = if i == n - 1 { "Connection: close\r\n" } else { "" };
            batch.extend_from_slice(format!("GET / HTTP/1.1\r\nHost: t\r\n{close}\r\n").as_bytes());
        }
        let mut writer = c.try_clone().unwrap();
        let sent = std::thread::spawn(move || writer.write_all(&batch).is_ok());
        let all = common::read_to_end_lossy(&mut c);
        assert!(sent.join().unwrap(), "{model}: the client's writes went through");
        let text = String::from_utf8_lossy(&all);
        server.stop();
        let ids: Vec<&str> = text.lines().filter(|l| l.starts_with("id: ")).collect();
        assert_eq!(ids, ["id: 1", "id: 2", "id: 3", "id: 4"], "{model}: the stream first");
        assert_eq!(
            text.matches("HTTP/1.1 200 OK").count(),
            n + 1,
            "{model}: every request after the stream"
        );
        let end = text.find("0\r\n\r\n").expect("the stream's last chunk");
        assert_eq!(text[..end].matches("HTTP/1.1 200 OK").count(), 1, "{model}: in order");
    });
}
