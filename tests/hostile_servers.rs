//! `muxlab load` against servers that try to hang or grow it: an endless chunked body, an
//! endless event stream, a flood of interim responses, a close-delimited body that is wrong,
//! an HTTP/2 server that allows no stream, endless CONTINUATION frames, and muxlab's own
//! fastest event stream. The client is bounded by its own flags whatever the server does:
//! each run ends (a liveness bound far above its flags, never a timing assertion), its memory
//! stays small, and its exit code says whether it did what it was asked.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Server, BIN};
use muxlab::proto::h2::frame;

/// A server on a free port answering each connection with `serve`, on a thread of its own.
fn hostile(serve: fn(TcpStream)) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            std::thread::spawn(move || serve(c));
        }
    });
    addr
}

/// Reads a request head (to its empty line), or nothing more once the peer is gone.
fn read_head(c: &mut TcpStream) -> bool {
    let mut got = Vec::new();
    let mut b = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match c.read(&mut b) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&b[..n]),
        }
    }
    true
}

/// What a run of `muxlab load` did: its exit code, stdout, stderr, and the most memory it held.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    peak_kib: u64,
}

/// The most any run here may take: far above every run's flags (a run that hangs is killed
/// here and fails the test).
const LIVENESS: Duration = Duration::from_secs(60);

/// Runs `muxlab load ARGS`, sampling its peak memory (VmHWM), killed past [`LIVENESS`];
/// `signal_after`: SIGTERM then.
fn run(args: &[&str], signal_after: Option<Duration>) -> Ran {
    run_under(&[], args, signal_after)
}

/// [`run`] under `wrapper` (a program that sets something up and execs, as `prlimit`).
fn run_under(wrapper: &[&str], args: &[&str], signal_after: Option<Duration>) -> Ran {
    let mut cmd = match wrapper.split_first() {
        Some((w, rest)) => {
            let mut c = Command::new(w);
            c.args(rest).arg(BIN);
            c
        }
        None => Command::new(BIN),
    };
    let mut child = cmd
        .arg("load")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let t0 = Instant::now();
    let mut peak_kib = 0;
    let mut signalled = false;
    let status = loop {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(kib) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak_kib = peak_kib.max(kib);
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if signal_after.is_some_and(|d| t0.elapsed() >= d) && !signalled {
            muxlab::sys::process::kill(pid, muxlab::sys::signal::SIGTERM).unwrap();
            signalled = true;
        }
        if t0.elapsed() > LIVENESS {
            let _ = child.kill();
            panic!("load {args:?} still ran after {LIVENESS:?}: the server hung it");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    common::golden::check_output(args, status.code(), &stdout);
    Ran {
        code: status.code(),
        stdout,
        stderr,
        peak_kib,
    }
}

/// A client that held little: a load run holds a few MiB of its own (its threads' buffers and
/// histograms); an endless body kept whole grew it by hundreds of MiB a second.
const SMALL_KIB: u64 = 128 * 1024;

fn json(r: &Ran) -> serde_json::Value {
    serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}{}", r.stdout, r.stderr))
}

/// Writes `data` again and again until the peer goes.
fn flood(c: &mut TcpStream, data: &[u8]) {
    while c.write_all(data).is_ok() {}
}

#[test]
fn an_endless_chunked_body_checked_against_body_size_is_a_mismatch_not_a_hang() {
    let addr = hostile(|mut c| {
        if read_head(&mut c) {
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
            flood(
                &mut c,
                &b"4000\r\n"
                    .iter()
                    .chain([b'x'; 0x4000].iter())
                    .chain(b"\r\n")
                    .copied()
                    .collect::<Vec<u8>>(),
            );
        }
    });
    let url = format!("http://{addr}/");
    let r = run(&[&url, "--body-size", "16", "-c", "1", "-d", "1s", "--json"], None);
    assert_eq!(r.code, Some(1), "wrong bodies are errors: {}", r.stderr);
    assert!(json(&r)["errors"]["echo_mismatch"].as_u64() > Some(0), "{}", r.stdout);
    assert!(r.peak_kib < SMALL_KIB, "the client grew to {} KiB", r.peak_kib);
}

#[test]
fn an_endless_event_stream_ends_with_the_window_and_holds_nothing() {
    let addr = hostile(|mut c| {
        if read_head(&mut c) {
            let _ = c
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
            let event = b"data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n\n";
            let mut chunk = format!("{:x}\r\n", event.len() * 200).into_bytes();
            for _ in 0..200 {
                chunk.extend_from_slice(event);
            }
            chunk.extend_from_slice(b"\r\n");
            flood(&mut c, &chunk);
        }
    });
    let url = format!("http://{addr}/");
    let r = run(&[&url, "--sse", "-c", "1", "-d", "1s", "--json"], None);
    assert_eq!(r.code, Some(0), "events were delivered: {}", r.stderr);
    assert!(json(&r)["sse"]["events"].as_u64() > Some(0), "{}", r.stdout);
    assert!(r.peak_kib < SMALL_KIB, "the client grew to {} KiB", r.peak_kib);
}

#[test]
fn a_flood_of_interim_responses_is_a_bad_response_after_five() {
    let addr = hostile(|mut c| {
        if read_head(&mut c) {
            flood(&mut c, &b"HTTP/1.1 100 Continue\r\n\r\n".repeat(1000));
        }
    });
    let url = format!("http://{addr}/");
    let r = run(&[&url, "-c", "1", "-n", "3", "--json"], None);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(json(&r)["errors"]["bad_response"].as_u64(), Some(3), "{}", r.stdout);
    assert!(r.peak_kib < SMALL_KIB, "the client grew to {} KiB", r.peak_kib);
}

#[test]
fn a_close_delimited_body_is_checked_against_body_size_too() {
    let addr = hostile(|mut c| {
        if read_head(&mut c) {
            // No length: the body runs to the close, and it is not what was sent.
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nnot the body at all");
        }
    });
    let url = format!("http://{addr}/");
    let r = run(&[&url, "--body-size", "16", "-c", "2", "-n", "20", "--json"], None);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc = json(&r);
    assert_eq!(doc["errors"]["echo_mismatch"].as_u64(), Some(20), "{doc}");
    assert_eq!(
        doc["requests"].as_u64(),
        Some(0),
        "no wrong body counted as a response: {doc}"
    );
}

/// HTTP/2: a server that answers the first request (sent before its SETTINGS arrive) and then
/// allows no stream at all (SETTINGS_MAX_CONCURRENT_STREAMS 0).
fn no_streams(mut c: TcpStream) {
    let mut out = Vec::new();
    frame::settings(&mut out, &[(frame::SETTINGS_MAX_CONCURRENT_STREAMS, 0)]);
    if c.write_all(&out).is_err() {
        return;
    }
    let mut got = Vec::new();
    let mut b = [0u8; 4096];
    let mut answered = false;
    loop {
        match c.read(&mut b) {
            Ok(0) | Err(_) => return,
            Ok(n) => got.extend_from_slice(&b[..n]),
        }
        // A HEADERS frame (type 1) on stream 1 after the preface: answer it, once.
        if !answered && got.windows(5).any(|w| w[3] == frame::HEADERS && w[4] & 0x4 != 0) {
            answered = true;
            let mut out = Vec::new();
            muxlab::peer::h2::wire::frame(&mut out, frame::SETTINGS, frame::ACK, 0, &[]);
            // :status 200 (static table index 8), ending the stream.
            muxlab::peer::h2::wire::headers(&mut out, 1, &[0x88], true);
            let _ = c.write_all(&out);
        }
    }
}

#[test]
fn an_http2_server_that_allows_no_stream_times_the_run_out_instead_of_hanging_it() {
    let addr = hostile(no_streams);
    let url = format!("h2c://{addr}/");
    let r = run(&[&url, "-c", "1", "-n", "4", "--timeout", "300ms", "--json"], None);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc = json(&r);
    assert!(doc["errors"]["timeout"].as_u64() > Some(0), "{doc}");
}

#[test]
fn endless_continuation_frames_end_the_connection_as_a_bad_response() {
    let addr = hostile(|mut c| {
        let mut out = Vec::new();
        frame::settings(&mut out, &[]);
        // A header block on stream 1 that never ends: HEADERS without END_HEADERS, then
        // empty CONTINUATIONs for ever.
        muxlab::peer::h2::wire::frame(&mut out, frame::HEADERS, 0, 1, &[0x88]);
        let _ = c.write_all(&out);
        let mut cont = Vec::new();
        for _ in 0..1000 {
            muxlab::peer::h2::wire::frame(&mut cont, frame::CONTINUATION, 0, 1, &[]);
        }
        flood(&mut c, &cont);
    });
    let url = format!("h2c://{addr}/");
    let r = run(&[&url, "-c", "1", "-n", "2", "--json"], None);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(json(&r)["errors"]["bad_response"].as_u64() > Some(0), "{}", r.stdout);
    assert!(r.peak_kib < SMALL_KIB, "the client grew to {} KiB", r.peak_kib);
}

/// muxlab's own fastest stream, as good as endless: events as fast as the socket takes them,
/// 64 KiB each. Reads that always fill the buffer once held the loop for ever (past `-d`).
#[test]
fn muxlabs_own_fastest_stream_ends_with_the_window() {
    let srv = Server::start("epoll", &["--max-stream", "events=1000000000,time=1h,size=64KiB"]);
    let url = format!("http://{}/stream?events=1000000000&every=0&size=64KiB", srv.addr);
    let r = run(&[&url, "--sse", "-c", "1", "-d", "1s", "--json"], None);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(json(&r)["sse"]["events"].as_u64() > Some(0), "{}", r.stdout);
    assert!(r.peak_kib < SMALL_KIB, "the client grew to {} KiB", r.peak_kib);
}

/// A run stopped by SIGTERM before it was done did not do what it was asked: it exits 1 and
/// says so, with what it measured.
#[test]
fn a_run_interrupted_before_its_requests_were_done_exits_non_zero() {
    let srv = Server::start("epoll", &["--work", "sleep:20ms"]);
    let r = run(&[&srv.url(), "-c", "1", "-n", "1000"], Some(Duration::from_millis(600)));
    assert_eq!(r.code, Some(1), "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("interrupted before the run was done"), "{}", r.stderr);
    assert!(r.stderr.contains("of 1000 asked"), "{}", r.stderr);
}

/// A server that reads every byte sent to it and never answers.
fn silent() -> SocketAddr {
    hostile(|mut c| {
        let mut b = [0u8; 65536];
        while matches!(c.read(&mut b), Ok(n) if n > 0) {}
    })
}

/// The errors of each class over a run's series (`--timeseries` NDJSON).
fn series_errors(path: &std::path::Path, class: &str) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    let lines = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    lines.map(|v| v["errors"][class].as_u64().unwrap_or(0)).sum()
}

/// A request in flight when the window closes is waited for up to `--timeout`, and one that is
/// never answered is an error of its own, `unanswered`, per request: in `--json`, the series
/// and the gates, for every protocol, closed loop and open. (They were dropped: a server that
/// never answered made a run of "errors none".)
#[test]
fn a_request_a_silent_server_never_answers_is_unanswered_in_every_protocol() {
    let addr = silent();
    let dir = std::env::temp_dir().join(format!("muxlab-unanswered-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ts = dir.join("series.ndjson");
    let ts_arg = ts.to_str().unwrap();
    for scheme in ["http", "echo", "packet", "resp", "memcache", "h2c"] {
        let url = format!("{scheme}://{addr}/");
        let args = [&url, "-c", "2", "-d", "300ms", "--timeout", "600ms", "--json"];
        let r = run(
            &[&args[..], &["--timeseries", ts_arg, "--interval", "100ms"]].concat(),
            None,
        );
        assert_eq!(r.code, Some(1), "{scheme}: {}", r.stderr);
        let doc = json(&r);
        assert_eq!(doc["errors"]["unanswered"], 2, "{scheme}: {}", doc["errors"]);
        assert_eq!(doc["error_total"], 2, "{scheme}: {}", doc["errors"]);
        assert_eq!(series_errors(&ts, "unanswered"), 2, "{scheme}: the series lost them");
    }
    // A gate over errors fails on them.
    let url = format!("http://{addr}/");
    let r = run(
        &[
            &url,
            "-c",
            "2",
            "-d",
            "300ms",
            "--timeout",
            "600ms",
            "--fail-if",
            "errors>1",
        ],
        None,
    );
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    // An open loop: the window's schedule counts every request it called for and did not get
    // answered by the close as not completed (the two sent among them too); the two sent are
    // also unanswered, an error, once --timeout after the close has passed.
    let r = run(
        &[
            &url,
            "-c",
            "2",
            "--rate",
            "50",
            "-d",
            "400ms",
            "--timeout",
            "600ms",
            "--json",
        ],
        None,
    );
    let doc = json(&r);
    assert_eq!(doc["errors"]["unanswered"], 2, "{}", doc["errors"]);
    assert_eq!(doc["not_completed"], doc["scheduled"], "{doc}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// After the window each connection closes once nothing of it is awaited, so a server that
/// serves one connection at a time answers those that waited behind the first, and none is
/// called unanswered.
#[test]
fn a_serial_server_answers_what_waited_behind_its_first_connection_after_the_window() {
    let srv = Server::start("iterative", &[]);
    let r = run(&[&srv.url(), "-c", "3", "-d", "300ms", "--json"], None);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc = json(&r);
    assert_eq!(doc["error_total"], 0, "{}", doc["errors"]);
    assert!(doc["requests"].as_u64() > Some(0), "{doc}");
}

/// A signal in the window ends the run at once, without waiting `--timeout` for what is in
/// flight (a run that waited would pass the liveness bound), and what was in flight is
/// unanswered.
#[test]
fn a_signal_in_the_window_counts_what_was_in_flight_as_unanswered() {
    let url = format!("http://{}/", silent());
    let args = [&url[..], "-c", "3", "-d", "300s", "--timeout", "120s", "--json"];
    let r = run(&args, Some(Duration::from_millis(800)));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(json(&r)["errors"]["unanswered"], 3, "{}", r.stdout);
    assert!(r.stderr.contains("interrupted"), "{}", r.stderr);
}

/// A signal during `--prefill` ends it (it waited for a reply up to `--timeout` first) and
/// says so.
#[test]
fn a_signal_during_prefill_ends_the_run_and_says_so() {
    let url = format!("resp://{}/", silent());
    let r = run(
        &[
            &url,
            "--prefill",
            "--keys",
            "100000",
            "-c",
            "2",
            "-d",
            "5s",
            "--timeout",
            "60s",
        ],
        Some(Duration::from_millis(800)),
    );
    assert_ne!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("stopped by a signal"), "{}", r.stderr);
}

/// A run split over processes (here by a descriptor limit of 200) passes a SIGTERM sent to
/// its parent alone on to every part: the parts stop and report, the parent merges what they
/// measured and says it was interrupted, and no part is left running (parts that went on
/// would run past the liveness bound).
#[test]
fn a_signal_to_a_run_split_over_processes_stops_every_part() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        return common::skip("prlimit (util-linux) is not installed");
    }
    let addr = silent();
    let url = format!("http://{addr}/");
    let r = run_under(
        &["prlimit", "--nofile=200:200"],
        &[&url, "-c", "150", "-d", "300s", "--timeout", "120s", "--json"],
        Some(Duration::from_millis(1500)),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("interrupted"), "{}", r.stderr);
    let doc = json(&r);
    assert_eq!(doc["config"]["shards"], 2, "{}", doc["config"]);
    assert_eq!(doc["errors"]["unanswered"], 150, "{}", doc["errors"]);
    let port = addr.port().to_string();
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("--subshard") && c.contains(&port))
        .collect();
    assert!(left.is_empty(), "parts left running: {left:?}");
}

/// After the window nothing new is sent: a socket's unused `--requests-per-conn` tickets
/// stay unused, so a slow server's answers to what was in flight end the drain (sending on,
/// each connection had a request in flight when `--timeout` ran out: unanswered). The
/// timeout is far above the server's 100 ms, so a busy machine cannot make an answer late.
#[test]
fn nothing_is_sent_after_the_window_whatever_a_socket_has_left_to_send() {
    let srv = Server::start("thread", &["--work", "sleep:100ms"]);
    let url = srv.url();
    let args = [&url[..], "-c", "2", "-d", "300ms", "--timeout", "5s", "--json"];
    let r = run(&[&args[..], &["--requests-per-conn", "1000000"]].concat(), None);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(json(&r)["error_total"], 0, "{}", r.stdout);
}

/// An event stream whose head came and whose first event has not by the close is not awaited
/// after the window, over both versions, without `--sse` (over HTTP/2 it was: it waited
/// `--timeout` and became unanswered); it is counted with the streams instead.
#[test]
fn an_event_stream_whose_first_event_has_not_come_is_not_unanswered() {
    for proto in ["http", "h2"] {
        let srv = Server::start("epoll", &["--proto", proto]);
        let scheme = if proto == "h2" { "h2c" } else { "http" };
        let url = format!("{scheme}://{}/stream?events=5&every=5s", srv.addr);
        let r = run(&[&url, "-c", "2", "-d", "300ms", "--timeout", "600ms", "--json"], None);
        let doc = json(&r);
        assert_eq!(doc["error_total"], 0, "{proto}: {}", doc["errors"]);
        assert!(doc["sse"].is_object(), "{proto}: counted with the streams: {doc}");
    }
}
