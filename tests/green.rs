//! `green`: what goroutine-style threads promise beyond the conformance suite. A long `cpu:`
//! request is preempted at its slice, a blocking call hands its processor off, the OS threads
//! stay at the workers plus the blocking calls in flight, the stack's deepest path leaves room
//! to spare, and a green thread costs two mappings. Orderings and counts, never timings: each
//! property is shown by what is answered before what, the server's state read from /proc.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use common::{get, Server, BIN};

/// Sends `GET target` on a new connection, without reading the answer.
fn send(srv: &Server, target: &str) -> TcpStream {
    let mut c = srv.connect();
    write!(c, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    c
}

/// The server's OS threads now (/proc).
fn threads(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The most CPU any one of the server's threads has used (ns, /proc/PID/task/TID/schedstat).
fn busiest_thread_ns(pid: i32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
                .filter_map(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

/// Waits (at most 20 s) until `ready` holds: the server is where the test needs it, read from
/// /proc rather than guessed from a delay.
fn until(what: &str, ready: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether a response has arrived on `c` (without waiting for one).
fn answered(c: &TcpStream) -> bool {
    c.set_nonblocking(true).unwrap();
    let mut b = [0u8; 1];
    let got = matches!(c.peek(&mut b), Ok(n) if n > 0);
    c.set_nonblocking(false).unwrap();
    got
}

/// With one worker, a request computing 2 s of `cpu:` work yields every slice: another
/// connection's GET is answered while it is still computing. (Without the slices the one
/// processor would be held until the long request ended.)
#[test]
fn a_long_cpu_request_yields_its_slice_to_another_connections_get() {
    let srv = Server::start("green", &["--workers", "1", "--work-from-request", "--max-work", "5s"]);
    let before = busiest_thread_ns(srv.pid());
    let long = send(&srv, "/?cpu=2s");
    // Its carrier has computed 100 ms of it: a GET sent now finds the one processor held.
    until("the long request computes", || {
        busiest_thread_ns(srv.pid()) > before + 100_000_000
    });
    let mut other = srv.connect();
    assert_eq!(get(&mut other, &mut Vec::new()).status, 200);
    assert!(
        !answered(&long),
        "the GET was answered after the long request, not during it"
    );
    let mut long = long;
    let mut pending = Vec::new();
    assert_eq!(
        common::read_response(&mut long, &mut pending).unwrap().unwrap().status,
        200
    );
    let s = srv.stop();
    assert!(s.total("green_slices") >= 10, "2 s in 10 ms slices: {}", s.stats);
}

/// `--workers 1`: a request sleeping 2 s (a blocking call) hands its processor to another
/// carrier, which answers another connection's GET meanwhile; the carrier it made stays.
#[test]
fn a_blocking_call_hands_its_processor_to_another_carrier() {
    let srv = Server::start("green", &["--workers", "1", "--work-from-request", "--max-work", "5s"]);
    let sleeping = send(&srv, "/?sleep=2s");
    // The call has begun once a carrier was started to take the processor: the main thread,
    // the worker's carrier and that one.
    until("a carrier for the call", || threads(srv.pid()) >= 3);
    for _ in 0..3 {
        let mut other = srv.connect();
        assert_eq!(get(&mut other, &mut Vec::new()).status, 200);
    }
    assert!(!answered(&sleeping), "the GETs waited for the sleeping request");
    let mut sleeping = sleeping;
    let mut pending = Vec::new();
    assert_eq!(
        common::read_response(&mut sleeping, &mut pending)
            .unwrap()
            .unwrap()
            .status,
        200
    );
    let s = srv.stop();
    assert!(s.total("green_handoffs") >= 1, "{}", s.stats);
    assert_eq!(s.total("green_calls_peak"), 1, "{}", s.stats);
    // The worker's carrier, and the one started for the call.
    assert_eq!(s.total("green_threads_peak"), 2, "{}", s.stats);
}

/// The OS threads during a load of blocking calls over 300 connections: at most the workers,
/// plus the calls in flight at once, plus the main thread (read from /proc while it runs and
/// from the stats line's marks). The load: 300 connections each sending requests that sleep.
#[test]
fn os_threads_stay_at_the_workers_plus_the_blocking_calls_in_flight() {
    let srv = Server::start("green", &["--workers", "2", "--work", "sleep:exp(1ms)"]);
    let pid = srv.pid();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let most = std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut most = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                most = most.max(threads(pid));
                std::thread::sleep(Duration::from_millis(1));
            }
            most
        });
        let url = srv.url();
        let (code, doc, stderr) = common::load(&[&url, "-c", "300", "--rate", "2000", "-d", "2s"]);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(doc["error_total"], 0, "{doc}");
        watcher.join().unwrap()
    });
    let s = srv.stop();
    let (threads, calls) = (s.total("green_threads_peak"), s.total("green_calls_peak"));
    assert!(calls >= 1 && s.total("green_handoffs") > 1000, "{}", s.stats);
    // Carriers: the workers', one per call in flight, and at most one spare (started for a
    // call while the others were busy); OS threads: those and the main thread.
    assert!(
        threads <= 2 + calls + 1,
        "{threads} carriers for 2 workers and {calls} calls"
    );
    assert!(
        most <= 2 + calls + 2,
        "{most} OS threads seen for 2 workers and {calls} calls in flight"
    );
    assert!(most >= 3, "the main thread and two carriers at least: {most}");
}

/// The deepest path a green thread's stack takes, HTTP/2 over TLS with `cpu:` work through
/// the hook, uses at most a third of its stack (`green::STACK`, for this build).
#[test]
fn the_deepest_path_leaves_two_thirds_of_the_stack() {
    let srv = Server::start(
        "green",
        &[
            "--workers",
            "2",
            "--proto",
            "h2",
            "--tls",
            "self-signed",
            "--work-from-request",
        ],
    );
    let url = format!("https://{}/?cpu=50us", srv.addr);
    let (code, doc, stderr) = common::load(&[&url, "--h2", "-k", "-c", "8", "--streams", "8", "-n", "2000"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(doc["error_total"], 0, "{doc}");
    let s = srv.stop();
    let peak = s.total("green_stack_peak") as usize;
    let stack = muxlab::server::green::STACK;
    assert!(peak > 4096, "a mark was measured: {}", s.stats);
    assert!(3 * peak <= stack, "{peak} bytes deep of a {stack}-byte stack");
}

/// A green thread costs two mappings (its stack and its guard page), where `thread` costs four:
/// the ceiling `muxlab models` states.
#[test]
fn a_green_thread_costs_two_mappings() {
    let srv = Server::start("green", &["--workers", "2"]);
    let maps = || {
        std::fs::read_to_string(format!("/proc/{}/maps", srv.pid()))
            .unwrap()
            .lines()
            .count()
    };
    // Warm up: the carriers' stacks and the allocator's arenas exist before the count.
    drop((0..4).map(|_| srv.connect()).collect::<Vec<_>>());
    let mut c = srv.connect();
    assert_eq!(get(&mut c, &mut Vec::new()).status, 200);
    let before = maps();
    let n = 400;
    let conns: Vec<TcpStream> = (0..n)
        .map(|_| {
            let mut c = srv.connect();
            assert_eq!(get(&mut c, &mut Vec::new()).status, 200);
            c
        })
        .collect();
    let per = (maps() - before) as f64 / n as f64;
    drop(conns);
    srv.stop();
    assert!((1.9..=2.1).contains(&per), "{per:.2} mappings per connection");
    let out = Command::new(BIN).arg("models").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("green thread per connection"))
        .unwrap_or("");
    assert!(line.contains("vm.max_map_count"), "{text}");
}

/// `--green-slice` is green's: another model refuses it, and a slice of nothing is refused.
#[test]
fn green_slice_is_greens_and_must_be_a_slice() {
    for (model, slice, says) in [
        ("thread", "10ms", "has no --green-slice"),
        ("green", "0s", "is not from 1us to 1s"),
        ("green", "500ns", "is not from 1us to 1s"),
        ("green", "2s", "is not from 1us to 1s"),
    ] {
        let out = Command::new(BIN)
            .args(["serve", "--model", model, "--port", "0", "--green-slice", slice])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{model} {slice}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{model} {slice}: {err}");
    }
}
