//! The load generator against small servers written here (byte flippers, stallers, liars) and
//! against muxlab's own models: integrity, split reads, coordinated omission, error classes,
//! exact request counts, sharding past the descriptor limit, and flag errors.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// A tiny server: a thread per connection running `handle`. Stops when the test ends.
fn spawn_server(handle: impl Fn(TcpStream) + Send + Sync + 'static) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let handle = Arc::new(handle);
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            let h = handle.clone();
            thread::spawn(move || h(s));
        }
    });
    addr
}

/// Echo server that writes back in the given chunk pattern; flips byte `flip` of the first
/// connection that gets that far (once per server).
fn echo_server(flip: Option<usize>, chunks: &'static [usize]) -> String {
    let flipped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    spawn_server(move |mut s| {
        let mut total = 0usize;
        let mut buf = [0u8; 4096];
        let mut pending = Vec::new();
        let mut k = 0;
        loop {
            let n = match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            for &b in &buf[..n] {
                let flip_now = Some(total) == flip && !flipped.swap(true, std::sync::atomic::Ordering::SeqCst);
                let b = if flip_now { b ^ 0x20 } else { b };
                pending.push(b);
                total += 1;
            }
            // Write back in odd-sized pieces, holding some bytes to merge with the next read.
            while pending.len() >= chunks[k % chunks.len()] {
                let c = chunks[k % chunks.len()];
                if s.write_all(&pending[..c]).is_err() {
                    return;
                }
                pending.drain(..c);
                k += 1;
            }
            if !pending.is_empty() && s.write_all(&pending).is_ok() {
                pending.clear();
            }
        }
    })
}

#[test]
fn echo_integrity_check_catches_one_flipped_byte() {
    let addr = echo_server(Some(5000), &[1000]);
    let (code, doc, _) = load(&[&format!("echo://{addr}"), "-c", "4", "-d", "1s", "--size", "128"]);
    assert_eq!(code, 1, "errors make the exit code 1");
    assert_eq!(doc["errors"]["echo_mismatch"], 1, "{}", doc["errors"]);
}

#[test]
fn echo_verifies_every_byte_across_split_and_merged_reads() {
    let addr = echo_server(None, &[1, 7, 300, 64, 2]);
    let (code, doc, err) = load(&[
        &format!("echo://{addr}"),
        "-c",
        "8",
        "-d",
        "1s",
        "--size",
        "100",
        "--pipeline",
        "3",
    ]);
    assert_eq!(code, 0, "{err} {}", doc["errors"]);
    assert!(doc["requests"].as_u64().unwrap() > 100);
    assert!(doc["errors"].as_object().unwrap().is_empty());
}

#[test]
fn a_one_second_stall_shows_in_corrected_latency_but_not_in_uncorrected() {
    let start = Instant::now();
    let addr = spawn_server(move |mut s| {
        let mut pending = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            pending.extend_from_slice(&buf[..n]);
            while let Some(end) = find(&pending, b"\r\n\r\n") {
                pending.drain(..end + 4);
                // Between 1.5 s and 2.5 s after start, every response waits for the stall to end.
                let t = start.elapsed();
                if t > Duration::from_millis(1500) && t < Duration::from_millis(2500) {
                    thread::sleep(Duration::from_millis(2500) - t);
                }
                if s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").is_err() {
                    return;
                }
            }
        }
    });
    let (code, doc, err) = load(&[
        &format!("http://{addr}/"),
        "-c",
        "10",
        "-d",
        "4s",
        "--rate",
        "1000",
        "-t",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    let corrected = doc["latency_us"]["p99"].as_f64().unwrap();
    let uncorrected = doc["uncorrected_latency_us"]["p99"].as_f64().unwrap();
    assert!(
        corrected > 500_000.0,
        "corrected p99 {corrected} us should reflect the 1 s stall"
    );
    assert!(uncorrected < 100_000.0, "uncorrected p99 {uncorrected} us hides it");
    assert!(doc["offered_rps"].as_f64().unwrap() == 1000.0);
    // During the stall every connection is busy: requests falling due wait for a free one,
    // and that wait is counted apart from the client's own lateness.
    assert!(
        doc["waited_for_connection"].as_u64().unwrap() > 100,
        "requests waited for a free connection: {}",
        doc["waited_for_connection"]
    );
}

/// A port nothing listens on, held for as long as the guard lives: a socket bound to it but not
/// listening refuses connections, and no other test's server can be given the port meanwhile
/// (a port freed right away could be, and its connections would then succeed).
fn refusing_port() -> (std::os::fd::OwnedFd, u16) {
    let any: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    let fd = muxlab::sys::socket::tcp_socket(&any, false).unwrap();
    muxlab::sys::socket::bind(&fd, &any).unwrap();
    let port = muxlab::sys::socket::local_addr(&fd).unwrap().port();
    (fd, port)
}

#[test]
fn refused_target_is_counted_and_the_run_ends_on_time() {
    let (_held, port) = refusing_port();
    let t = Instant::now();
    let (code, doc, _) = load(&[&format!("http://127.0.0.1:{port}/"), "-c", "5", "-d", "1s"]);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "finishes within duration plus timeout"
    );
    assert_eq!(code, 1);
    assert!(doc["errors"]["refused"].as_u64().unwrap() >= 5, "{}", doc["errors"]);
    assert_eq!(doc["requests"], 0);
    assert_eq!(doc["connections"]["never_connected"], 5);
}

#[test]
fn refused_target_with_a_request_count_still_ends() {
    let (_held, port) = refusing_port();
    let (code, doc, _) = load(&[&format!("http://127.0.0.1:{port}/"), "-c", "2", "-n", "20", "--close"]);
    assert_eq!(code, 1);
    assert_eq!(doc["errors"]["refused"], 20, "each of the 20 attempts failed once");
}

#[test]
fn a_server_closing_mid_response_is_an_unexpected_close() {
    let addr = spawn_server(|mut s| {
        let mut buf = [0u8; 1024];
        let _ = s.read(&mut buf);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part");
    });
    let (code, doc, _) = load(&[&format!("http://{addr}/"), "-c", "2", "-d", "500ms"]);
    assert_eq!(code, 1);
    assert!(
        doc["errors"]["unexpected_close"].as_u64().unwrap() > 0,
        "{}",
        doc["errors"]
    );
}

#[test]
fn garbage_is_a_bad_response_and_a_silent_server_a_timeout() {
    let addr = spawn_server(|mut s| {
        let mut buf = [0u8; 1024];
        let _ = s.read(&mut buf);
        let _ = s.write_all(b"SSH-2.0-OpenSSH_9.2\r\n\r\n");
        thread::sleep(Duration::from_millis(200));
    });
    let (_, doc, _) = load(&[&format!("http://{addr}/"), "-c", "2", "-d", "500ms"]);
    assert!(doc["errors"]["bad_response"].as_u64().unwrap() > 0, "{}", doc["errors"]);

    let addr = spawn_server(|s| {
        thread::sleep(Duration::from_secs(5));
        drop(s);
    });
    let t = Instant::now();
    let (code, doc, _) = load(&[
        &format!("http://{addr}/"),
        "-c",
        "3",
        "-d",
        "1500ms",
        "--timeout",
        "300ms",
    ]);
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(code, 1);
    assert!(doc["errors"]["timeout"].as_u64().unwrap() >= 3, "{}", doc["errors"]);
}

#[test]
fn connections_that_cannot_be_established_are_reported() {
    // A listener that never accepts, with a backlog of 1: most connects never complete.
    let l = muxlab::sys::socket::listen("127.0.0.1:0".parse().unwrap(), 1, false).unwrap();
    let port = muxlab::sys::socket::local_addr(&l).unwrap().port();
    let out = Command::new(BIN)
        .args([
            "load",
            &format!("http://127.0.0.1:{port}/"),
            "-c",
            "20",
            "-d",
            "1s",
            "--timeout",
            "300ms",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(text.contains("could not connect"), "{text}");
    drop(l);
}

#[test]
fn request_counts_are_exact_in_every_mode_and_match_the_server() {
    for (args, conns_expected) in [
        (vec!["-c", "7", "-n", "1000"], Some(7u64)),
        (vec!["-c", "10", "-n", "2000", "--close"], Some(2000)),
        (vec!["-c", "4", "-n", "4000", "--pipeline", "8"], Some(4)),
        (vec!["-c", "5", "-n", "1000", "--requests-per-conn", "10"], Some(100)),
        (vec!["-c", "5", "-n", "500", "--rate", "2000"], Some(5)),
    ] {
        let srv = Server::start("epoll", &[]);
        let url = format!("http://{}/", srv.addr);
        let mut full = vec![url.as_str()];
        full.extend(args.iter().copied());
        let (code, doc, err) = load(&full);
        assert_eq!(code, 0, "{args:?}: {err} {}", doc["errors"]);
        let n: u64 = args[args.iter().position(|a| *a == "-n").unwrap() + 1].parse().unwrap();
        assert_eq!(doc["requests"], n, "{args:?}");
        assert_eq!(
            doc["connections"]["connects_in_window"],
            conns_expected.unwrap(),
            "{args:?}"
        );
        let c: u64 = args[1].parse().unwrap();
        assert_eq!(
            doc["connections"]["established"], c,
            "{args:?}: every requested connection was open"
        );
        let st = srv.stop();
        assert_eq!(
            st.total("requests"),
            n,
            "{args:?}: the server counted what the client sent"
        );
        assert_eq!(st.total("accepted"), conns_expected.unwrap(), "{args:?}");
    }
}

#[test]
fn json_document_has_the_keys_scripts_rely_on_and_hgrm_is_written() {
    let srv = Server::start("epoll", &[]);
    let dir = std::env::temp_dir().join(format!("muxlab-hgrm-{}", std::process::id()));
    let hgrm = dir.with_extension("hgrm");
    let (code, doc, _) = load(&[
        &format!("http://{}/", srv.addr),
        "-c",
        "4",
        "-d",
        "1s",
        "--warmup",
        "200ms",
        "--hgrm",
        hgrm.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    for key in [
        "requests",
        "errors",
        "duration_s",
        "throughput_rps",
        "client_cpu_s",
        "config",
        "environment",
        "per_second",
        "fairness",
    ] {
        assert!(!doc[key].is_null(), "missing {key}");
    }
    for p in ["p50", "p90", "p99", "p999", "max"] {
        assert!(doc["latency_us"][p].as_f64().unwrap() > 0.0, "latency_us.{p}");
    }
    assert!(doc["errors"].as_object().unwrap().is_empty());
    assert!(
        (doc["duration_s"].as_f64().unwrap() - 1.0).abs() < 0.2,
        "warm-up excluded from the window"
    );
    assert!(doc["fairness"]["jain"].as_f64().unwrap() > 0.5);
    assert_eq!(doc["environment"]["server_pid"].as_i64().unwrap(), srv.pid() as i64);
    let text = std::fs::read_to_string(&hgrm).unwrap();
    assert!(text.contains("Percentile") && text.contains("#[Max"), "{text}");
    let _ = std::fs::remove_file(hgrm);
    srv.stop();
}

#[test]
fn connections_past_the_descriptor_limit_are_sharded_over_processes() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        return skip("prlimit (util-linux) is not installed");
    }
    // Edge-triggered: the server accepts until EAGAIN, so a shard that connects while the others
    // keep it busy is not accepted one connection per turn (level-triggered epoll's way, which
    // under a loaded machine can leave a late shard's connections unaccepted for a second).
    let srv = Server::start("epoll", &["--trigger", "edge"]);
    let out = Command::new("prlimit")
        .args([
            "--nofile=160:160",
            BIN,
            "load",
            &format!("http://{}/", srv.addr),
            "-c",
            "300",
            "-d",
            "1s",
            "--json",
        ])
        .output()
        .unwrap();
    let doc: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{}", doc["errors"]);
    assert!(
        doc["config"]["shards"].as_u64().unwrap() >= 5,
        "160 descriptors hold at most 60 connections each"
    );
    assert_eq!(doc["connections"]["established"], 300);
    assert_eq!(doc["fairness"]["connections"], 300);
    assert_eq!(doc["fairness"]["starved"], 0);
    let st = srv.stop();
    assert_eq!(st.total("accepted"), 300);
}

#[test]
fn source_addresses_can_be_spread_with_bind() {
    let srv = Server::start("epoll", &[]);
    let (code, doc, err) = load(&[
        &format!("http://{}/", srv.addr),
        "-c",
        "6",
        "-n",
        "600",
        "--bind",
        "127.0.0.2-127.0.0.4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["requests"], 600);
    srv.stop();
}

#[test]
fn bad_flag_combinations_are_one_clear_line_and_exit_2() {
    for (args, hint) in [
        (&["http://127.0.0.1:1/", "-n", "10", "-d", "1s"][..], "not both"),
        (
            &["http://127.0.0.1:1/", "--rate", "10", "--think", "1ms"][..],
            "exclude each other",
        ),
        (
            &["http://127.0.0.1:1/", "--close", "--pipeline", "4"][..],
            "drop --close",
        ),
        (&["http://127.0.0.1:1/", "-c", "0"][..], "at least 1"),
        (&["http://127.0.0.1:1/", "--rate=-5"][..], "positive"),
        (&["echo://127.0.0.1:1", "--close"][..], "http://"),
        (&["http://127.0.0.1:1/", "--size", "64"][..], "echo://"),
        (&["127.0.0.1:8080"][..], "not a target URL"),
        (&["http://no-such-host.invalid/"][..], "cannot resolve"),
        (&["http://127.0.0.1:1/", "--bind", "127.0.0.9-127.0.0.1"][..], "range"),
        (&["http://127.0.0.1:1/", "-d", "ten"][..], "duration"),
        (
            &["http://127.0.0.1:1/", "--body", "x", "--body-size", "1"][..],
            "not both",
        ),
        (
            &["http://127.0.0.1:1/", "--body", "@/no/such/file"][..],
            "cannot read --body @/no/such/file",
        ),
        (&["http://127.0.0.1:1/", "--chunked"][..], "give --body or --body-size"),
        (&["echo://127.0.0.1:1", "--body-size", "10"][..], "http://"),
        (&["http://127.0.0.1:1/", "--body-size", "lots"][..], "not a size"),
        (&["http://127.0.0.1:1/", "--insecure"][..], "https://"),
        (
            &["https://127.0.0.1:1/", "--cacert", "/no/such.pem"][..],
            "--cacert /no/such.pem",
        ),
        (&["ftp://127.0.0.1:1/"][..], "unknown scheme"),
        (&["http://127.0.0.1:1/", "-H", "no colon"][..], "is not a header"),
        (&["http://127.0.0.1:1/", "-H", "Bad Name: x"][..], "is not a header"),
    ] {
        let out = Command::new(BIN).arg("load").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(hint), "{args:?}: {err}");
    }
}

/// A rate no client of this machine sends (and a ramp to one) is refused at once with exit 2,
/// under a hard memory limit, before anything is allocated or started (before: 24 GB of
/// queued sends until the kernel killed it). `prlimit` is util-linux's, on every Debian.
#[test]
fn a_rate_no_client_can_send_is_refused_at_once_under_a_memory_limit() {
    for rate in ["1e9", "1e30", "1e9:1/1s", "100,1e8/1s"] {
        let t0 = std::time::Instant::now();
        let out = Command::new("prlimit")
            .args([
                "--as=1073741824",
                "--",
                BIN,
                "load",
                "http://127.0.0.1:9/",
                "-c",
                "1",
                "-d",
                "1s",
                "--rate",
                rate,
            ])
            .output()
            .expect("prlimit (util-linux) runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--rate {rate}: {err}");
        assert!(err.contains("10,000,000 requests a second"), "--rate {rate}: {err}");
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "--rate {rate}: took {:?}",
            t0.elapsed()
        );
    }
}

/// An HTTP server that echoes POST bodies (Content-Length framing only), flipping one byte of the
/// `flip_in`-th body it echoes.
fn body_echo_server(flip_in: usize) -> String {
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    spawn_server(move |mut s| {
        let mut pending = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            let head_end = loop {
                if let Some(i) = find(&pending, b"\r\n\r\n") {
                    break i + 4;
                }
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => pending.extend_from_slice(&buf[..n]),
                }
            };
            let head = String::from_utf8_lossy(&pending[..head_end]).to_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
                .unwrap_or(0);
            while pending.len() < head_end + len {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => pending.extend_from_slice(&buf[..n]),
                }
            }
            let mut body = pending[head_end..head_end + len].to_vec();
            pending.drain(..head_end + len);
            if count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == flip_in && !body.is_empty() {
                body[len / 2] ^= 1;
            }
            let mut resp = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n").into_bytes();
            resp.extend_from_slice(&body);
            if s.write_all(&resp).is_err() {
                return;
            }
        }
    })
}

#[test]
fn uploaded_bodies_are_verified_byte_for_byte() {
    // One flipped byte in the 5th echoed body: exactly one mismatch, and the run says so.
    let addr = body_echo_server(4);
    let (code, doc, _) = load(&[
        &format!("http://{addr}/"),
        "--body-size",
        "10000",
        "-c",
        "1",
        "-n",
        "20",
    ]);
    assert_eq!(code, 1);
    assert_eq!(doc["errors"]["echo_mismatch"], 1, "{}", doc["errors"]);
    assert_eq!(doc["config"]["method"], "POST", "a body makes POST the default method");
    // An honest echo: every body verified, nothing wrong.
    let addr = body_echo_server(usize::MAX);
    let (code, doc, _) = load(&[
        &format!("http://{addr}/"),
        "--body-size",
        "64KiB",
        "-c",
        "2",
        "-n",
        "40",
    ]);
    assert_eq!((code, doc["requests"].as_u64()), (0, Some(40)), "{}", doc["errors"]);
}

#[test]
fn uploads_against_every_framing_are_echoed_by_muxlab() {
    let srv = Server::start("epoll", &[]);
    let url = format!("http://{}/", srv.addr);
    let file = std::env::temp_dir().join(format!("muxlab-body-{}", std::process::id()));
    std::fs::write(&file, b"a body from a file").unwrap();
    for args in [
        &["--body-size", "100000", "-n", "30"][..],
        &["--body-size", "100000", "--chunked", "-n", "30"][..],
        &["--body-size", "0", "-n", "30"][..],
        &["--body", &format!("@{}", file.display()), "-m", "put", "-n", "30"][..],
    ] {
        let (code, doc, err) = load(&[&[url.as_str(), "-c", "3"][..], args].concat());
        assert_eq!(
            (code, doc["requests"].as_u64()),
            (0, Some(30)),
            "{args:?}: {} {err}",
            doc["errors"]
        );
    }
    let _ = std::fs::remove_file(&file);
    let st = srv.stop();
    assert_eq!(st.total("requests"), 120);
    assert!(st.total("bytes_in") > 2 * 30 * 100_000, "the bodies reached the server");
}

#[test]
fn connections_opened_during_the_warmup_count_as_established() {
    let srv = Server::start("epoll", &[]);
    let url = format!("http://{}/", srv.addr);
    let (code, doc, _) = load(&[&url, "-c", "20", "--warmup", "300ms", "-d", "300ms"]);
    assert_eq!(code, 0);
    let c = &doc["connections"];
    assert_eq!(
        (c["requested"].as_u64(), c["established"].as_u64()),
        (Some(20), Some(20)),
        "{c}"
    );
    assert_eq!(c["connects_in_window"], 0, "all 20 connected during the warm-up: {c}");
    assert_eq!(c["never_connected"], 0);
    // The human summary says the same.
    let out = Command::new(BIN)
        .args(["load", &url, "-c", "20", "--warmup", "300ms", "-d", "300ms"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("20 of 20 established, 0 connects in the window"),
        "{text}"
    );
    srv.stop();
}

#[test]
fn a_connect_ramp_opens_every_connection() {
    let srv = Server::start("epoll", &[]);
    let url = format!("http://{}/", srv.addr);
    // 60 connections at 300 a second over 2 engine threads: every slot gets its turn.
    let (code, doc, err) = load(&[&url, "-c", "60", "-t", "2", "--connect-rate", "300", "-d", "1s"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["connections"]["established"], 60, "{}", doc["connections"]);
    assert_eq!(doc["connections"]["never_connected"], 0);
    assert_eq!(doc["fairness"]["starved"], 0, "{}", doc["fairness"]);
    srv.stop();
}

#[test]
fn connect_first_holds_requests_until_every_connection_is_up() {
    let srv = Server::start("thread", &[]);
    let url = format!("http://{}/", srv.addr);
    let (code, doc, err) = load(&[
        &url,
        "-c",
        "40",
        "--connect-rate",
        "400",
        "--connect-first",
        "-n",
        "400",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["requests"], 400);
    assert_eq!(doc["connections"]["established"], 40);
    assert_eq!(doc["config"]["connect_first"], true);
    // Nothing was sent before all 40 were up, so every one of them carried requests.
    assert_eq!(doc["fairness"]["starved"], 0, "{}", doc["fairness"]);
    srv.stop();
}

/// `-H 'Host: x'` replaces the default Host header (a second Host makes every request a 400),
/// against muxlab's server and, where it is installed, nginx.
#[test]
fn a_host_header_given_with_h_replaces_the_default_one() {
    let srv = Server::start("epoll", &[]);
    let url = format!("http://{}/", srv.addr);
    for host in ["Host: example.test", "host:other"] {
        let (code, doc, err) = load(&[&url, "-c", "2", "-n", "200", "-H", host]);
        assert_eq!(code, 0, "{host}: {err}");
        assert_eq!(doc["requests"], 200, "{host}: {doc}");
        assert_eq!(doc["errors"], serde_json::json!({}), "{host}");
        let classes = &doc["status_classes"];
        assert_eq!(classes["2xx"], 200, "{host}: {classes}");
    }
    assert_eq!(srv.stop().total("requests"), 400);
}

/// Open loop past the server's capacity: what the schedule called for and the window did not
/// complete is counted, not dropped, and its latency (at least the close less its intended send
/// time) is in the corrected histogram. The server can do ~1,000 req/s (1 ms of sleep per
/// request, one thread); the load asks for 2,000.
#[test]
fn an_overloaded_open_loop_counts_what_it_scheduled_and_did_not_complete() {
    let srv = Server::start("epoll", &["--work", "sleep:1ms"]);
    let url = format!("http://{}/", srv.addr);
    let (code, doc, err) = load(&[&url, "--rate", "2000", "-c", "50", "-d", "2s"]);
    assert_eq!(code, 0, "{err}");
    let (requests, not_completed, scheduled) = (
        doc["requests"].as_u64().unwrap(),
        doc["not_completed"].as_u64().unwrap(),
        doc["scheduled"].as_u64().unwrap(),
    );
    assert_eq!(requests + not_completed, scheduled, "{doc}");
    assert!(
        (3920..=4080).contains(&scheduled),
        "rate x duration is 4,000: {scheduled}"
    );
    assert!(not_completed > 0, "an overloaded server completed everything? {doc}");
    let max_us = doc["latency_us"]["max"].as_f64().unwrap();
    assert!(
        max_us >= 1e6,
        "the corrected max {max_us} us is under half the duration"
    );
    // Closed loop has no schedule: not measured, so null (never 0).
    let (_, closed, _) = load(&[&url, "-c", "2", "-d", "200ms"]);
    assert!(closed.get("scheduled").is_none_or(|v| v.is_null()), "{closed}");
    srv.stop();
}

/// Documents written before the load generator's result was one typed document (muxlab at
/// 489a489: `tests/fixtures/v1/`) still read: two shares merge into their run, and a rate run's
/// summary prints.
#[test]
fn documents_written_by_an_earlier_version_still_merge_and_read() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v1");
    let out = Command::new(BIN)
        .args(["merge", &format!("{dir}/p0.json"), &format!("{dir}/p1.json")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"], 1000);
    assert_eq!(doc["config"]["shards"], 2);
    assert_eq!(doc["parts"].as_array().unwrap().len(), 2);
    let out = Command::new(BIN)
        .args(["merge", "--human", &format!("{dir}/load-rate.json")])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("open loop at 2000 req/s"),
        "{text}"
    );
    assert!(text.contains("2,000 requests scheduled in the window"), "{text}");
}

/// `--mix`: requests pick a class by weight; each class's count equals what the server counted
/// for the work it named, and the long class's latency includes its service time.
#[test]
fn a_mix_of_classes_is_counted_per_class_as_the_server_counts_them() {
    let srv = Server::start("epoll", &["--work-from-request"]);
    let (code, doc, err) = load(&[
        &format!("http://{}/", srv.addr),
        "-c",
        "8",
        "-n",
        "4000",
        "--mix",
        "short=90:/?cpu=20us",
        "--mix",
        "long=10:/?cpu=2ms",
    ]);
    assert_eq!(code, 0, "{err}");
    let classes = &doc["classes"];
    let (short, long) = (&classes["short"], &classes["long"]);
    let total = short["requests"].as_u64().unwrap() + long["requests"].as_u64().unwrap();
    assert_eq!(total, 4000, "{classes}");
    let share = long["requests"].as_f64().unwrap() / 4000.0;
    assert!((0.07..0.13).contains(&share), "about 10 % long: {share}");
    assert!(long["latency_us"]["p50"].as_f64().unwrap() >= 2000.0, "{classes}");
    assert_eq!(doc["config"]["classes"][1]["path"], "/?cpu=2ms");
    assert_eq!(long["non_2xx_3xx"], 0);
    // A class the server refuses (over --max-work: 400) is counted as refused, not served, and
    // takes no row of the server's class table.
    let (code, doc, err) = load(&[
        &format!("http://{}/", srv.addr),
        "-c",
        "2",
        "-n",
        "200",
        "--mix",
        "ok=1:/?cpu=20us",
        "--mix",
        "huge=1:/?cpu=50ms",
    ]);
    assert_eq!(code, 0, "{err}");
    let huge = &doc["classes"]["huge"];
    assert!(huge["requests"].as_u64().unwrap() > 0, "{doc}");
    assert_eq!(huge["non_2xx_3xx"], huge["requests"], "every one refused: {huge}");
    assert_eq!(doc["classes"]["ok"]["non_2xx_3xx"], 0);
    let served = srv.stop();
    assert_eq!(
        served.stats["classes"]["cpu=20us"]["requests"].as_u64().unwrap(),
        short["requests"].as_u64().unwrap() + doc["classes"]["ok"]["requests"].as_u64().unwrap()
    );
    assert_eq!(served.stats["classes"]["cpu=2ms"]["requests"], long["requests"]);
    assert!(
        served.stats["classes"].get("cpu=50ms").is_none(),
        "{}",
        served.stats["classes"]
    );
}

/// `--mix-file`: a class per line with its method and body; a bad line is one line naming it.
/// Two shares of a mixed run merge with their classes. Poisson arrivals keep the schedule's
/// accounting.
#[test]
fn mix_files_shares_and_poisson_arrivals_keep_their_classes() {
    let srv = Server::start("epoll", &[]);
    let dir = std::env::temp_dir().join(format!("muxlab-mix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("body.json"), "{\"a\":1}").unwrap();
    let file = dir.join("mix.txt");
    std::fs::write(
        &file,
        format!(
            "# name weight method path [@body]\nread 3 GET /a\nwrite 1 POST /b @{}\n",
            dir.join("body.json").display()
        ),
    )
    .unwrap();
    let url = format!("http://{}/", srv.addr);
    let mut parts = Vec::new();
    for share in ["0/2", "1/2"] {
        let (code, doc, err) = load(&[
            &url,
            "-c",
            "4",
            "-n",
            "400",
            "--mix-file",
            file.to_str().unwrap(),
            "--shard",
            share,
        ]);
        assert_eq!(code, 0, "{err}");
        let p = dir.join(format!("part{}.json", &share[..1]));
        std::fs::write(&p, doc.to_string()).unwrap();
        parts.push(p);
    }
    let out = Command::new(BIN).arg("merge").args(&parts).output().unwrap();
    let merged: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &merged["classes"];
    assert_eq!(
        c["read"]["requests"].as_u64().unwrap() + c["write"]["requests"].as_u64().unwrap(),
        400,
        "{c}"
    );
    assert_eq!(merged["config"]["classes"][1]["method"], "POST");
    std::fs::write(&file, "read 3 GET a\n").unwrap();
    let out = Command::new(BIN)
        .args(["load", &url, "-n", "10", "--mix-file", file.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("line 1") && err.contains("must start with /"), "{err}");
    let (code, doc, err) = load(&[
        &url,
        "-c",
        "20",
        "--rate",
        "2000",
        "-d",
        "1s",
        "--arrivals",
        "poisson",
        "--mix",
        "a=1:/x",
        "--mix",
        "b=1:/y",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["config"]["arrivals"], "poisson");
    let (req, nc, sch) = (
        doc["requests"].as_u64().unwrap(),
        doc["not_completed"].as_u64().unwrap(),
        doc["scheduled"].as_u64().unwrap(),
    );
    assert_eq!(req + nc, sch);
    assert!((1700..2300).contains(&sch), "about 2,000 scheduled in 1 s: {sch}");
    let classes = doc["classes"].as_object().unwrap();
    let sum: u64 = classes.values().map(|c| c["requests"].as_u64().unwrap()).sum();
    assert_eq!(sum, req);
    // Classes add up by name: documents of different mixes do not merge.
    let other = dir.join("other.json");
    std::fs::write(&other, doc.to_string()).unwrap();
    let out = Command::new(BIN)
        .arg("merge")
        .args([&parts[0], &other])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("request classes [a, b]") && err.contains("do not add up"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--slo` against a server whose capacity is set by its design, not this machine's speed:
/// `queue-pool` with 4 workers sleeping 1 ms each serves at most 4,000 req/s, with little CPU.
/// The search must answer, with a bracket in order whose ends were both re-checked over longer
/// windows, and every probe in the JSON with its sample count, window, client CPU and errors.
/// Where in its band the answer falls is a measurement (quoted in the note), not
/// asserted: only the structure is.
#[test]
fn an_slo_search_against_a_known_capacity_answers_with_a_rechecked_bracket() {
    let srv = Server::start("queue-pool", &["--workers", "4", "--work", "sleep:1ms", "--cpus", "0"]);
    let (code, doc, err) = load(&[
        &format!("http://{}/", srv.addr),
        "-c",
        "64",
        "--cpus",
        "1",
        "--slo",
        "p99<=20ms",
        "--arrivals",
        "poisson",
        "-d",
        "1s",
        "--warmup",
        "200ms",
        "--slo-time",
        "120s",
    ]);
    let c = &doc["capacity"];
    assert_eq!(code, 0, "{err}\n{c}");
    assert_eq!(c["slo"], "p99<=20ms", "{c}");
    assert!(c["inconclusive"].is_null(), "{c}");
    let (rps, low, high) = (c["rps"].as_f64(), c["low"].as_f64(), c["high"].as_f64());
    let (Some(rps), Some(low), Some(high)) = (rps, low, high) else {
        panic!("an answer and both ends: {c}")
    };
    assert!(rps == low && low < high && (high - low) / low <= 0.02 + 1e-9, "{c}");
    // No design of 4 workers sleeping 1 ms serves more than 4,000 a second: a capacity above
    // that is a bug in the search, not a fast machine.
    assert!(rps <= 4000.0, "{c}");
    let probes = c["probes"].as_array().unwrap();
    for end in [low, high] {
        assert!(
            probes
                .iter()
                .any(|p| p["recheck"] == true && p["offered_rps"].as_f64() == Some(end)),
            "both ends re-checked: {c}"
        );
    }
    for p in probes {
        for field in ["samples", "window_s", "client_cpu", "errors", "sent_rps"] {
            assert!(p[field].is_number(), "{field} in {p}");
        }
        if p["holds"] == true {
            assert!(
                p["samples"].as_u64().unwrap() >= 1000,
                "a p99 judged on 1,000 samples: {p}"
            );
        }
    }
    // The document is the latest probe at the answer.
    assert_eq!(doc["config"]["rate"].as_f64(), Some(rps));
}

/// A search against an address where nothing listens stops at its first probe, saying so
/// (before: it descended through ever longer probes, blaming the server's latency); with
/// --hosts, --slo is refused in one line. (Whether the client or the server was the limit of a
/// probe is judged in `load::slo`'s unit tests, on documents whose figures are known.)
#[test]
fn an_slo_search_where_nothing_listens_stops_at_once() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", free.local_addr().unwrap());
    drop(free);
    let (code, doc, err) = load(&[&url, "-c", "4", "--slo", "p99<=5ms", "-d", "500ms", "--slo-time", "60s"]);
    let c = &doc["capacity"];
    assert_eq!(code, 1, "{err}");
    assert!(c["rps"].is_null(), "{c}");
    assert_eq!(c["probes"].as_array().map(Vec::len), Some(0), "no probe judged: {c}");
    assert!(
        c["inconclusive"]
            .as_str()
            .unwrap()
            .starts_with("no connection could be made ("),
        "{c}"
    );
    let out = Command::new(BIN)
        .args(["load", &url, "--slo", "p99<=5ms", "--hosts", "h1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--slo with --hosts") && err.trim().lines().count() == 1,
        "{err}"
    );
}

/// A run asking for fewer requests than it has engine threads ends: a thread whose share is
/// nothing still says its connecting is over (the others waited for it for ever). Killed by
/// `timeout` past a liveness bound far above the run.
#[test]
fn a_run_of_fewer_requests_than_threads_ends_with_each_request() {
    let srv = Server::start("epoll", &[]);
    let url = format!("http://{}/", srv.addr);
    for n in ["1", "3"] {
        let out = Command::new("timeout")
            .args(["60", BIN, "load", &url, "-n", n, "-c", "10", "-t", "4", "--json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "-n {n}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["requests"].to_string(), n, "{doc}");
    }
}

/// A reader that stops reading (`load … --json | head -c 10`) ends the run without a panic's
/// message and backtrace on stderr (it printed "failed printing to stdout: Broken pipe").
#[test]
fn a_reader_that_stops_reading_gets_no_panic_message() {
    let srv = Server::start("epoll", &[]);
    let url = format!("http://{}/", srv.addr);
    let mut child = Command::new(BIN)
        .args(["load", &url, "-n", "100", "-c", "2", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
}
