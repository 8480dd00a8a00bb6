//! The `offload` model: work leaves the loop for a pool, responses come back in order, a long
//! request does not hold short ones, reserved workers take only short work, a reset HTTP/2
//! stream cancels its queued work, and the flags are refused where there is no pool. Order
//! and counts only: no timing assertion.

mod common;

use std::io::{Read, Write};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{get, skip, Server, BIN};
use muxlab::peer::h2::wire::{self, Coding};

fn total(stats: &serde_json::Value, name: &str) -> u64 {
    stats["totals"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no {name} in {stats}"))
}

/// Sends `path` on a fresh connection and reads its response, telling `done` its tag when it
/// has come.
fn request(
    server: &Server,
    path: &str,
    tag: &'static str,
    done: mpsc::Sender<(&'static str, std::time::Instant)>,
) -> std::thread::JoinHandle<()> {
    let mut c = server.connect();
    let req = format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n");
    std::thread::spawn(move || {
        c.write_all(req.as_bytes()).unwrap();
        let r = get(&mut c, &mut Vec::new());
        assert_eq!(r.status, 200, "{tag}");
        done.send((tag, std::time::Instant::now())).unwrap();
    })
}

#[test]
fn pipelined_requests_whose_work_went_to_the_pool_are_answered_in_order() {
    let server = Server::start(
        "offload",
        &["--work-from-request", "--max-work", "2s", "--workers", "2"],
    );
    let mut c = server.connect();
    // The first takes longest: a pool of two could finish the others first.
    let paths = ["/?sleep=60ms", "/?sleep=1ms", "/?cpu=100us", "/?sleep=20ms"];
    let mut batch = String::new();
    for p in paths {
        batch.push_str(&format!("GET {p} HTTP/1.1\r\nHost: t\r\n\r\n"));
    }
    batch.push_str("HEAD /?sleep=1ms HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    c.write_all(batch.as_bytes()).unwrap();
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    let text = String::from_utf8_lossy(&all);
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 5, "{text}");
    assert_eq!(
        text.matches("<html>hello</html>").count(),
        4,
        "HEAD has no body: {text}"
    );
    assert!(
        text.ends_with("Connection: close\r\n\r\n"),
        "the HEAD's is last: {text}"
    );
    let stats = server.stop().stats;
    assert_eq!(total(&stats, "offload_queued"), 5, "{stats}");
    assert_eq!(total(&stats, "offload_done"), 5, "{stats}");
    assert_eq!(total(&stats, "requests"), 5, "{stats}");
}

#[test]
fn short_requests_on_other_connections_are_answered_while_a_long_ones_work_is_in_the_pool() {
    for (model, args) in [("offload", vec!["--workers", "2"]), ("reactor", vec![])] {
        let mut a = vec!["--work-from-request", "--max-work", "2s"];
        a.extend(args);
        let server = Server::start(model, &a);
        let (tx, rx) = mpsc::channel();
        let long = request(&server, "/?sleep=1500ms", "long", tx.clone());
        std::thread::sleep(Duration::from_millis(300));
        let sent = std::time::Instant::now();
        let shorts: Vec<_> = (0..5)
            .map(|_| request(&server, "/?cpu=20us", "short", tx.clone()))
            .collect();
        let done: Vec<(&str, std::time::Instant)> = (0..6)
            .map(|_| {
                rx.recv_timeout(Duration::from_secs(30))
                    .expect("a response within 30 s")
            })
            .collect();
        long.join().unwrap();
        shorts.into_iter().for_each(|h| h.join().unwrap());
        let long_at = done.iter().find(|(t, _)| *t == "long").unwrap().1;
        let shorts_at: Vec<std::time::Instant> = done.iter().filter(|(t, _)| *t == "short").map(|d| d.1).collect();
        // The loop only parses and writes: every short is answered before the long one. A
        // reactor does the long call inline: every short waits behind the rest of it (a lower
        // bound on time).
        match model {
            "offload" => assert!(shorts_at.iter().all(|s| *s < long_at), "{model}: {done:?}"),
            _ => assert!(
                shorts_at
                    .iter()
                    .all(|s| s.duration_since(sent) >= Duration::from_millis(1000)),
                "{model}: a short answered before the long call ended"
            ),
        }
        server.stop();
    }
}

#[test]
fn a_reserved_worker_takes_the_short_request_while_the_others_hold_long_ones() {
    let server = Server::start(
        "offload",
        &[
            "--work-from-request",
            "--max-work",
            "2s",
            "--workers",
            "2",
            "--reserve",
            "under=1ms:1",
        ],
    );
    let (tx, rx) = mpsc::channel();
    // Two long ones: the one worker that takes any work holds the first, the second waits.
    let longs: Vec<_> = (0..2)
        .map(|_| request(&server, "/?sleep=1200ms", "long", tx.clone()))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let short = request(&server, "/?cpu=20us", "short", tx.clone());
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(30))
            .expect("a response within 30 s")
            .0,
        "short",
        "the reserved worker was free for it"
    );
    short.join().unwrap();
    longs.into_iter().for_each(|h| h.join().unwrap());
    let stats = server.stop().stats;
    // Besides it, only the harness's probes (work of nothing: short) may have gone there.
    let reserved = total(&stats, "offload_reserved");
    assert!(
        reserved >= 1 && reserved <= total(&stats, "offload_done") - 2,
        "{stats}"
    );
}

#[test]
fn work_under_offload_over_stays_on_the_loop() {
    let server = Server::start(
        "offload",
        &[
            "--work-from-request",
            "--max-work",
            "2s",
            "--workers",
            "2",
            "--offload-over",
            "1ms",
        ],
    );
    let mut c = server.connect();
    let mut pending = Vec::new();
    for path in ["/?cpu=20us", "/?sleep=2ms", "/?cpu=50us"] {
        c.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
            .unwrap();
        assert_eq!(get(&mut c, &mut pending).status, 200);
    }
    let stats = server.stop().stats;
    // The 2 ms call went to the pool; the two short ones (and the harness's probes) did not.
    assert_eq!(total(&stats, "offload_queued"), 1, "{stats}");
    assert!(total(&stats, "offload_inline") >= 2, "{stats}");
}

#[test]
fn a_reset_http2_stream_cancels_its_queued_work() {
    let server = Server::start(
        "offload",
        &[
            "--proto",
            "h2",
            "--work-from-request",
            "--max-work",
            "2s",
            "--workers",
            "1",
        ],
    );
    let mut c = server.connect();
    let mut b = Vec::new();
    wire::preface(&mut b);
    for id in [1, 3, 5] {
        let block = wire::request_block("GET", "/?sleep=300ms", &[], Coding::Plain);
        wire::headers(&mut b, id, &block, true);
    }
    // Stream 5 waits behind 1 (in the one worker) and 3: reset before its turn.
    wire::frame(&mut b, 3, 0, 5, &8u32.to_be_bytes());
    c.write_all(&b).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    while !(ended(&got, 1) && ended(&got, 3)) {
        let n = c.read(&mut buf).unwrap();
        assert!(n > 0, "closed before streams 1 and 3 were answered");
        got.extend_from_slice(&buf[..n]);
    }
    let read = wire::read(&got);
    assert!(
        read.streams.get(&5).is_none_or(|s| s.status.is_none()),
        "no response on the reset stream"
    );
    let stats = server.stop().stats;
    assert_eq!(total(&stats, "offload_cancelled"), 1, "{stats}");
    assert_eq!(total(&stats, "offload_done"), 2, "{stats}");
}

fn ended(bytes: &[u8], id: u32) -> bool {
    wire::read(bytes).streams.get(&id).is_some_and(|s| s.ended)
}

#[test]
fn offload_serves_h2load_and_short_connections_completely() {
    let server = Server::start("offload", &["--proto", "h2", "--work", "cpu:20us", "--workers", "2"]);
    let out = Command::new(BIN)
        .args(["load", &server.url(), "--close", "-c", "20", "-n", "3000", "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (doc["requests"].as_u64(), doc["error_total"].as_u64()),
        (Some(3000), Some(0)),
        "{doc}"
    );
    match Command::new("h2load").arg("--version").output() {
        Ok(_) => {
            let out = Command::new("h2load")
                .args(["-c", "10", "-m", "10", "-n", "5000", &server.url()])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("5000 succeeded, 0 failed, 0 errored"), "{text}");
        }
        Err(_) => return skip("h2load is not installed (apt-get install nghttp2-client)"),
    }
    let stats = server.stop().stats;
    assert!(total(&stats, "offload_done") >= 8000, "{stats}");
}

#[test]
fn the_pool_flags_are_refused_where_there_is_no_pool_or_no_worker_left() {
    for args in [
        vec!["--model", "epoll", "--reserve", "under=1ms:1"],
        vec!["--model", "reactor", "--offload-over", "1ms"],
        vec!["--model", "offload", "--workers", "2", "--reserve", "under=1ms:2"],
        vec!["--model", "offload", "--reserve", "1ms:1"],
        vec!["--model", "offload", "--reserve", "under=1ms:0"],
        // The default pool (4 workers) all reserved.
        vec!["--model", "offload", "--reserve", "under=1ms:4"],
    ] {
        let out = Command::new(BIN)
            .arg("serve")
            .args(&args)
            .args(["--port", "0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--"),
            "{args:?}: says which flag"
        );
    }
}

/// Runs `muxlab load` with `args`; its JSON document.
fn load(args: &[&str]) -> serde_json::Value {
    let out = Command::new(BIN).arg("load").args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "load {args:?}: {}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// 3,000 pipelined requests on one connection (about 90 KiB of input, more than the 64 KiB a
/// session once held behind a pending response before it closed the connection) whose work
/// goes to the pool: every one is answered, in order, over HTTP/1.1 and over TLS. Order: every
/// seventh request is a HEAD (a response without a body), so a response out of place shows.
#[test]
fn three_thousand_pipelined_requests_with_pooled_work_are_all_answered_in_order() {
    let server = Server::start("offload", &["--work", "sleep:100us", "--workers", "2"]);
    let n = 3000;
    let head = |i: usize| i % 7 == 3;
    let mut batch = Vec::new();
    for i in 0..n {
        let method = if head(i) { "HEAD" } else { "GET" };
        batch.extend_from_slice(format!("{method} /?i={i} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    }
    assert!(batch.len() > 64 * 1024);
    let c = server.connect();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut writer = c.try_clone().unwrap();
    let sent = std::thread::spawn(move || writer.write_all(&batch).is_ok());
    let mut reader = c;
    let mut pending = Vec::new();
    for i in 0..n {
        let r = common::read_response_to(&mut reader, &mut pending, head(i))
            .unwrap_or_else(|e| panic!("response {i} of {n}: {e}"))
            .unwrap_or_else(|| panic!("the connection closed after {i} of {n} responses"));
        assert_eq!(r.status, 200, "response {i}");
    }
    assert!(sent.join().unwrap(), "the client's writes went through");
    let stats = server.stop().stats;
    assert!(total(&stats, "offload_done") >= n as u64, "{stats}");
    // The same over TLS, through muxlab's own client pipelining all 3,000 at once.
    let server = Server::start(
        "offload",
        &["--work", "sleep:100us", "--workers", "2", "--tls", "self-signed"],
    );
    let url = format!("https://{}/", server.addr);
    let doc = load(&[
        &url,
        "-k",
        "-c",
        "1",
        "--pipeline",
        "3000",
        "-n",
        "3000",
        "--timeout",
        "60s",
    ]);
    assert_eq!(
        (doc["requests"].as_u64(), doc["error_total"].as_u64()),
        (Some(3000), Some(0)),
        "{doc}"
    );
    server.stop();
}

/// CPU time (ns) of every thread of process `pid`, from schedstat.
fn cpu_ns(pid: i32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// A client that keeps pipelining behind a request whose pooled work sleeps 1 s: the loop
/// stops reading its connection (the client's writes wait in TCP), so the server holds one
/// read at most and does not spin: its RSS grows by under 2 MiB (its PSS) for up to 10 MiB offered, and
/// it uses under 5 % of a CPU while it waits. Then every request is answered.
#[test]
fn a_client_pipelining_behind_pending_work_is_held_in_tcp_not_in_the_server() {
    let server = Server::start(
        "offload",
        &["--work-from-request", "--max-work", "2s", "--workers", "2"],
    );
    let mut c = server.connect();
    assert_eq!(get(&mut c, &mut Vec::new()).status, 200);
    let rss = || common::tree_pss_kib(server.pid());
    let (rss0, cpu0, t0) = (rss(), cpu_ns(server.pid()), Instant::now());
    c.write_all(b"GET /?sleep=1s HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    c.set_nonblocking(true).unwrap();
    let one = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";
    let chunk = one.repeat(1024);
    let mut offered = 0usize;
    while t0.elapsed() < Duration::from_millis(800) && offered < 10 << 20 {
        // The stream goes on where the last write stopped, mid-request or not.
        match c.write(&chunk[offered % chunk.len()..]) {
            Ok(n) => offered += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => panic!("the server closed the connection: {e}"),
        }
    }
    let (grown, used, wall) = (rss().saturating_sub(rss0), cpu_ns(server.pid()) - cpu0, t0.elapsed());
    assert!(
        grown < 2048,
        "RSS grew by {grown} KiB while {offered} bytes were pipelined behind pending work"
    );
    assert!(
        (used as f64) < 0.05 * wall.as_nanos() as f64,
        "the server used {used} ns of CPU in {wall:?} while a response was pending"
    );
    // Everything offered is answered once the work is done, the whole of it in order.
    let requests = 1 + offered / one.len();
    let tail = offered % one.len();
    c.set_nonblocking(false).unwrap();
    let mut rest = one[tail..].to_vec();
    rest.extend_from_slice(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let mut writer = c.try_clone().unwrap();
    let sent = std::thread::spawn(move || writer.write_all(&rest).is_ok());
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    assert!(sent.join().unwrap());
    let answered = String::from_utf8_lossy(&all).matches("HTTP/1.1 200 OK").count();
    assert_eq!(answered, requests + usize::from(tail > 0) + 1);
    server.stop();
}
