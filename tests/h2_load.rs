//! `muxlab load` over HTTP/2 (`h2c://`, `https://… --h2`) against real servers: nginx's
//! `http2` listener (cleartext and TLS), every muxlab model with `--proto h2` (echoed bodies
//! verified byte for byte), and a scripted server that lowers its limits, refuses streams,
//! says GOAWAY mid-run and corrupts a body, to check that the client honours and counts each.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use common::{for_each_model, Server, BIN};
use muxlab::peer::h2::wire;
use muxlab::proto::h2::frame::{self, Head};
use serde_json::Value;

/// Runs `muxlab load ARGS --json`: (exit code, document, stderr). A run that does not end
/// within 60 s is killed and fails the test (a client that hangs must not hang the suite).
fn load(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new("timeout")
        .args(["60", BIN, "load"])
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let code = out.status.code().unwrap_or(-1);
    assert_ne!(code, 124, "load {args:?} did not end within 60 s: {stderr}");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (code, doc, stderr)
}

/// The document's requests, errors and h2 figures, checked for an exact, clean run of `n`.
fn assert_exact(doc: &Value, n: u64, what: &str) {
    assert_eq!(doc["requests"], n, "{what}: {doc}");
    assert_eq!(doc["error_total"], 0, "{what}: {}", doc["errors"]);
    assert_eq!(doc["status_classes"]["2xx"], n, "{what}");
    assert!(doc["h2"]["streams"].as_u64().unwrap() >= n, "{what}: {}", doc["h2"]);
}

/// nginx with `http2` listeners: cleartext, TLS, and TLS without http2; and one that allows 8
/// concurrent streams.
struct Nginx {
    _nginx: common::nginx::Running,
    h2c: u16,
    h2s: u16,
    h1s: u16,
    h2c_8: u16,
}

fn nginx() -> Option<Nginx> {
    use muxlab::bench::nginx::{free_port, launch_nginx, nginx_binary};
    let Some(bin) = nginx_binary() else {
        common::skip("nginx is not installed (apt-get install nginx-light; .ci/run does)");
        return None;
    };
    let dir = std::env::temp_dir().join(format!(
        "muxlab-h2-load-{}-{}",
        std::process::id(),
        free_port().unwrap()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (_, leaf, key) = common::certs::certificates(&dir);
    let d = dir.display();
    let (leaf, key) = (leaf.display(), key.display());
    let conf = |p: &[u16]| {
        format!(
            "worker_processes 1; daemon off; master_process on; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             events {{ worker_connections 1024; }}\n\
             http {{ access_log off; keepalive_requests 1000000; http2_max_requests 1000000;\n\
               server {{ listen 127.0.0.1:{} http2; location / {{ return 200 \"<html>hello</html>\"; }} }}\n\
               server {{ listen 127.0.0.1:{} ssl http2; ssl_certificate {leaf}; ssl_certificate_key {key};\n\
                        location / {{ return 200 \"<html>hello</html>\"; }} }}\n\
               server {{ listen 127.0.0.1:{} ssl; ssl_certificate {leaf}; ssl_certificate_key {key};\n\
                        location / {{ return 200 \"<html>hello</html>\"; }} }}\n\
               server {{ listen 127.0.0.1:{} http2; http2_max_concurrent_streams 8;\n\
                        location / {{ return 200 \"<html>hello</html>\"; }} }} }}\n",
            p[0], p[1], p[2], p[3]
        )
    };
    let (child, ports) = launch_nginx(bin, None, &dir, "127.0.0.1", 4, &conf).unwrap_or_else(|e| panic!("{e}"));
    Some(Nginx {
        _nginx: common::nginx::Running { child, dir },
        h2c: ports[0],
        h2s: ports[1],
        h1s: ports[2],
        h2c_8: ports[3],
    })
}

#[test]
fn against_nginx_http2_cleartext_and_tls_every_request_is_counted_exactly() {
    let Some(n) = nginx() else { return };
    let h2c = format!("h2c://127.0.0.1:{}/", n.h2c);
    let (code, doc, err) = load(&[&h2c, "-c", "4", "--streams", "10", "-n", "20000"]);
    assert_eq!(code, 0, "{err}");
    assert_exact(&doc, 20_000, "h2c");
    let h = &doc["h2"];
    assert_eq!((h["refused"].as_u64(), h["reset"].as_u64()), (Some(0), Some(0)), "{h}");
    assert!(h["in_flight_max"].as_u64().unwrap() <= 10, "{h}");
    // A warm GET's header block is a few indices (4 B: method, scheme, path, authority),
    // against its 38 B head in HTTP/1.1.
    assert!(h["request_header_bytes"].as_f64().unwrap() < 5.0, "{h}");
    assert!(h["request_hpack_saved"].as_f64().unwrap() > 0.85, "{h}");
    // HEADERS and DATA per response; a HEADERS frame per request.
    assert!(h["frames_in_per_request"].as_f64().unwrap() >= 2.0, "{h}");
    assert!(h["frames_out_per_request"].as_f64().unwrap() >= 1.0, "{h}");
    // nginx is the bottleneck: the streams are in flight nearly all the time, served alike.
    let mean = h["in_flight_mean"].as_f64().unwrap();
    assert!(mean > 5.0 && mean <= 10.0 + 1e-9, "{h}");
    assert!(h["lanes_jain"].as_f64().unwrap() > 0.9, "{h}");
    assert_eq!(h["lanes"], 40);

    let https = format!("https://127.0.0.1:{}/", n.h2s);
    let (code, doc, err) = load(&[&https, "--h2", "-k", "-c", "2", "--streams", "5", "-n", "3000"]);
    assert_eq!(code, 0, "{err}");
    assert_exact(&doc, 3_000, "h2 over TLS");
    assert_eq!(doc["config"]["h2"], true);

    // The same with an open loop: what was scheduled was done.
    let (code, doc, err) = load(&[&h2c, "-c", "2", "--streams", "10", "--rate", "2000", "-d", "1s"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["scheduled"], 2000, "{doc}");
    let done = doc["requests"].as_u64().unwrap() + doc["not_completed"].as_u64().unwrap();
    assert_eq!(done, 2000);
    // Nothing was sent beyond the schedule (an h2 connection reads its server's SETTINGS
    // before the window starts: that must not schedule sends).
    assert!(doc["sent"].as_u64().unwrap() <= 2000, "{doc}");
    // Each request took the next lane in turn.
    assert!(doc["h2"]["lanes_jain"].as_f64().unwrap() > 0.9, "{}", doc["h2"]);
    assert_eq!(doc["error_total"], 0);
}

#[test]
fn nginx_s_limit_of_8_streams_is_honoured_when_20_are_asked_for() {
    let Some(n) = nginx() else { return };
    let url = format!("h2c://127.0.0.1:{}/", n.h2c_8);
    let (code, doc, err) = load(&[&url, "-c", "2", "--streams", "20", "-n", "5000"]);
    assert_eq!(code, 0, "{err}");
    assert_exact(&doc, 5_000, "max 8 streams");
    let h = &doc["h2"];
    // Every stream opened within the server's limit: none refused.
    assert_eq!(h["refused"], 0, "{h}");
    assert!(h["in_flight_max"].as_u64().unwrap() <= 8, "{h}");
}

#[test]
fn a_tls_server_that_picks_http_1_1_ends_the_run_in_one_line_with_exit_2() {
    let Some(n) = nginx() else { return };
    let url = format!("https://127.0.0.1:{}/", n.h1s);
    let (code, _, err) = load(&[&url, "--h2", "-k", "-n", "10"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("picked http/1.1") && err.contains("drop --h2"), "{err}");
    // Prior knowledge against an HTTP/1.1-only port: the run says why every connection failed.
    let plain = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = plain.local_addr().unwrap().port();
    thread::spawn(move || {
        for mut s in plain.incoming().flatten() {
            let mut b = [0u8; 1024];
            let _ = s.read(&mut b);
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    let (_, doc, err) = load(&[&format!("h2c://127.0.0.1:{port}/"), "-c", "1", "-d", "300ms"]);
    assert!(doc["errors"]["bad_response"].as_u64().unwrap() > 0, "{doc}");
    assert!(err.contains("does not speak HTTP/2"), "{err}");
}

#[test]
fn every_model_serves_h2_load_and_echoes_each_body_byte_for_byte() {
    for_each_model(|model, args| {
        let s = Server::start(model, &[args, &["--proto", "h2"]].concat());
        let url = format!("h2c://{}/", s.addr);
        // A model that serves one connection per worker at a time gets as many connections
        // as it has workers (the others would wait in its backlog for the whole run).
        let serial = muxlab::models::ALL
            .iter()
            .any(|m| m.name == model && m.one_conn_per_worker);
        let conns = match (serial, args.contains(&"--workers")) {
            (true, true) => "2",
            (true, false) => "1",
            (false, _) => "3",
        };
        let (code, doc, err) = load(&[
            &url,
            "-c",
            conns,
            "--streams",
            "8",
            "-n",
            "1500",
            "--body-size",
            "20000",
        ]);
        assert_eq!(code, 0, "{model}: {err}");
        assert_exact(&doc, 1_500, model);
        // Each body went up and came back whole.
        assert!(doc["bytes_out"].as_u64().unwrap() >= 1_500 * 20_000, "{model}");
        assert!(doc["bytes_in"].as_u64().unwrap() >= 1_500 * 20_000, "{model}");
        let stopped = s.stop();
        assert_eq!(stopped.total("requests"), 1_500, "{model}: the server counted");
    });
}

#[test]
fn every_model_serves_h2_load_over_tls_after_alpn_picks_h2() {
    for_each_model(|model, args| {
        let s = Server::start(model, &[args, &["--proto", "h2", "--tls", "self-signed"]].concat());
        let url = format!("https://{}/", s.addr);
        let serial = muxlab::models::ALL
            .iter()
            .any(|m| m.name == model && m.one_conn_per_worker);
        let conns = if serial { "1" } else { "2" };
        let (code, doc, err) = load(&[&url, "--h2", "-k", "-c", conns, "--streams", "4", "-n", "400"]);
        assert_eq!(code, 0, "{model}: {err}");
        assert_exact(&doc, 400, model);
        assert!(doc["tls_handshake_us"]["count"].as_u64().unwrap() >= 1, "{model}");
        assert_eq!(s.stop().total("requests"), 400, "{model}: the server counted");
    });
}

/// What the scripted server does to each connection.
#[derive(Clone, Copy, Default)]
struct Script {
    /// After this many responses, SETTINGS lowering max streams to 2 and the window to 1000.
    lower_after: Option<u64>,
    /// After this many responses, GOAWAY naming the stream just answered; then close.
    goaway_after: Option<u64>,
    /// Flip a byte of this response's echoed body (counting over all connections).
    flip: Option<u64>,
    /// Reset every Nth request (counting over all connections) with INTERNAL_ERROR instead of
    /// answering it.
    reset_every: Option<u64>,
    /// Refuse every stream (REFUSED_STREAM).
    refuse_all: bool,
    /// With `goaway_after`: once two streams are open above the one just answered, name the
    /// lower of them last, and close at once.
    goaway_close: bool,
    /// Answer in batches of 10 whole requests (or when the client has been quiet for 20 ms).
    hold: bool,
    /// Allow no stream at all (SETTINGS_MAX_CONCURRENT_STREAMS 0), refusing any sent.
    no_streams: bool,
}

/// What the scripted server saw, over all connections.
#[derive(Default)]
struct Seen {
    /// Requests whose stream ended, and those answered, and reset.
    requests: AtomicU64,
    answered: AtomicU64,
    reset: AtomicU64,
    refused: AtomicU64,
    /// Streams opened past the lowered limit once it was acknowledged, and bytes past a
    /// stream's window.
    over_limit: AtomicU64,
    over_window: AtomicU64,
    connections: AtomicU64,
}

/// A blocking HTTP/2 server written frame by frame: answers each request with its body echoed
/// (or "hello"), granting window as it reads, and follows `script`.
fn scripted(script: Script) -> (String, Arc<Seen>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let seen = Arc::new(Seen::default());
    let s2 = seen.clone();
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            let seen = s2.clone();
            seen.connections.fetch_add(1, Ordering::Relaxed);
            thread::spawn(move || serve_script(s, script, &seen));
        }
    });
    (addr, seen)
}

struct Open {
    body: Vec<u8>,
    /// Window this stream may still send into.
    window: i64,
}

fn serve_script(mut s: TcpStream, script: Script, seen: &Seen) {
    let mut pre = [0u8; 24];
    if s.read_exact(&mut pre).is_err() || &pre != frame::PREFACE {
        return;
    }
    let mut out = Vec::new();
    let limit = if script.no_streams { 0 } else { 10 };
    wire::settings(&mut out, &[(frame::SETTINGS_MAX_CONCURRENT_STREAMS, limit)]);
    let _ = s.write_all(&out);
    if script.hold {
        s.set_read_timeout(Some(std::time::Duration::from_millis(20))).unwrap();
    }
    let (mut max_streams, mut initial) = (limit as usize, 65_535i64);
    // Settings we sent and the client has not acknowledged: (max streams, window).
    let mut pending: Option<(usize, i64)> = None;
    let mut open: BTreeMap<u32, Open> = BTreeMap::new();
    // Streams whose request is whole, to be answered in order.
    let mut ready: Vec<u32> = Vec::new();
    let (mut answered, mut last_good) = (0u64, None::<u32>);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        let quiet = match s.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                false
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => true,
            Err(_) => return,
        };
        let mut out = Vec::new();
        while buf.len() >= frame::HEADER_LEN {
            let h = Head::parse(&buf);
            if buf.len() < frame::HEADER_LEN + h.len {
                break;
            }
            let p: Vec<u8> = buf[frame::HEADER_LEN..frame::HEADER_LEN + h.len].to_vec();
            buf.drain(..frame::HEADER_LEN + h.len);
            match h.kind {
                frame::SETTINGS if h.flags & frame::ACK != 0 => {
                    if let Some((m, w)) = pending.take() {
                        (max_streams, initial) = (m, w);
                    }
                }
                frame::SETTINGS => wire::frame(&mut out, frame::SETTINGS, frame::ACK, 0, &[]),
                frame::HEADERS => {
                    if last_good.is_some_and(|l| h.stream > l) {
                        continue;
                    }
                    if open.len() >= max_streams || script.refuse_all {
                        if pending.is_none() && !script.refuse_all && !script.no_streams {
                            seen.over_limit.fetch_add(1, Ordering::Relaxed);
                        }
                        seen.refused.fetch_add(1, Ordering::Relaxed);
                        frame::rst_stream(&mut out, h.stream, frame::Code::RefusedStream);
                        continue;
                    }
                    open.insert(
                        h.stream,
                        Open {
                            body: Vec::new(),
                            window: initial,
                        },
                    );
                    if h.flags & frame::END_STREAM != 0 {
                        ready.push(h.stream);
                    }
                }
                frame::DATA => {
                    let Some(o) = open.get_mut(&h.stream) else { continue };
                    o.body.extend_from_slice(&p);
                    o.window -= p.len() as i64;
                    if o.window < 0 && pending.is_none() {
                        seen.over_window.fetch_add(1, Ordering::Relaxed);
                    }
                    // The connection's window back at once; the stream's when it is used up.
                    if !p.is_empty() {
                        wire::window_update(&mut out, 0, p.len() as u32);
                    }
                    if o.window <= 0 && h.flags & frame::END_STREAM == 0 {
                        let grant = initial.max(1000);
                        o.window += grant;
                        wire::window_update(&mut out, h.stream, grant as u32);
                    }
                    if h.flags & frame::END_STREAM != 0 {
                        ready.push(h.stream);
                    }
                }
                _ => {}
            }
        }
        // Answered at once, or with `hold` in batches of 10 (or when the client is quiet).
        let now = !script.hold || ready.len() >= 10 || quiet;
        let batch = if now { std::mem::take(&mut ready) } else { Vec::new() };
        for id in batch {
            let Some(mut o) = open.remove(&id) else { continue };
            let n = seen.requests.fetch_add(1, Ordering::Relaxed) + 1;
            if script.reset_every.is_some_and(|k| n.is_multiple_of(k)) {
                frame::rst_stream(&mut out, id, frame::Code::Protocol);
                seen.reset.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            answered += 1;
            let overall = seen.answered.fetch_add(1, Ordering::Relaxed) + 1;
            if o.body.is_empty() {
                o.body = b"hello".to_vec();
            }
            if script.flip == Some(overall) {
                o.body[0] ^= 1;
            }
            let mut block = Vec::new();
            block.push(0x88); // :status 200
            wire::field(
                &mut block,
                b"content-length",
                o.body.len().to_string().as_bytes(),
                wire::Coding::Plain,
            );
            wire::headers(&mut out, id, &block, false);
            let pieces: Vec<&[u8]> = o.body.chunks(frame::MAX_FRAME).collect();
            for (k, piece) in pieces.iter().enumerate() {
                wire::data(&mut out, id, piece, k + 1 == pieces.len());
            }
            if script.lower_after == Some(answered) {
                wire::settings(
                    &mut out,
                    &[
                        (frame::SETTINGS_MAX_CONCURRENT_STREAMS, 2),
                        (frame::SETTINGS_INITIAL_WINDOW_SIZE, 1000),
                    ],
                );
                pending = Some((2, 1000));
                // Refused from now on (what REFUSED_STREAM is for); a violation only once the
                // client has acknowledged.
                max_streams = 2;
                // Streams already open keep what the client may send: the change moves their
                // windows by the same amount on both sides.
                for o in open.values_mut() {
                    o.window += 1000 - initial;
                }
            }
            // With `goaway_close`, GOAWAY waits for two streams open above the one answered
            // (however slowly the client opens them): the lower is named last and is lost
            // with the close, the higher is sent again.
            let above: Vec<u32> = open.keys().copied().filter(|&k| k > id).collect();
            let due = script.goaway_after.is_some_and(|n| answered >= n) && (!script.goaway_close || above.len() >= 2);
            if due && last_good.is_none() {
                let last = if script.goaway_close { above[0] } else { id };
                last_good = Some(last);
                frame::goaway(&mut out, last, frame::Code::NoError);
                open.retain(|&k, _| k <= last);
                if script.goaway_close {
                    let _ = s.write_all(&out);
                    return;
                }
            }
        }
        if s.write_all(&out).is_err() {
            return;
        }
        if last_good.is_some() && open.is_empty() {
            return;
        }
    }
}

#[test]
fn a_server_that_lowers_its_streams_and_window_mid_run_is_honoured() {
    let (addr, seen) = scripted(Script {
        lower_after: Some(100),
        ..Script::default()
    });
    let url = format!("h2c://{addr}/");
    let (code, doc, err) = load(&[&url, "-c", "1", "--streams", "10", "-n", "600", "--body-size", "5000"]);
    assert_eq!(code, 0, "{err}");
    assert_exact(&doc, 600, "lowered");
    assert_eq!(
        seen.over_limit.load(Ordering::Relaxed),
        0,
        "streams past the acknowledged limit"
    );
    assert_eq!(seen.over_window.load(Ordering::Relaxed), 0, "bytes past a window");
    // Streams sent before the client read the new limit were refused and sent again.
    let refused = seen.refused.load(Ordering::Relaxed);
    assert_eq!(doc["h2"]["refused"], refused, "{}", doc["h2"]);
    assert_eq!(doc["h2"]["retried"], refused);
    assert_eq!(seen.answered.load(Ordering::Relaxed), 600);
}

#[test]
fn goaway_mid_run_sends_the_unprocessed_requests_again_on_a_new_connection() {
    let (addr, seen) = scripted(Script {
        goaway_after: Some(45),
        ..Script::default()
    });
    let url = format!("h2c://{addr}/");
    let (code, doc, err) = load(&[&url, "-c", "1", "--streams", "10", "-n", "400"]);
    assert_eq!(code, 0, "{err}");
    assert_exact(&doc, 400, "goaway");
    let h = &doc["h2"];
    // Each connection says GOAWAY after 45 answers (the 45th in the middle of the 10 in
    // flight): 400 requests need 9 connections.
    assert!(h["goaway"].as_u64().unwrap() >= 8, "{h}");
    assert!(h["retried"].as_u64().unwrap() > 0, "{h}");
    assert_eq!(seen.answered.load(Ordering::Relaxed), 400);
    assert!(seen.connections.load(Ordering::Relaxed) >= 9);
    assert_eq!(doc["h2"]["streams"], 400 + h["retried"].as_u64().unwrap());
}

#[test]
fn a_corrupted_echo_is_an_echo_mismatch() {
    let (addr, _) = scripted(Script {
        flip: Some(20),
        ..Script::default()
    });
    let url = format!("h2c://{addr}/");
    let (_, doc, _) = load(&[&url, "-c", "1", "--streams", "4", "-n", "100", "--body-size", "300"]);
    assert_eq!(doc["errors"]["echo_mismatch"], 1, "{doc}");
}

#[test]
fn bad_h2_flag_combinations_are_one_clear_line_and_exit_2() {
    for (args, says) in [
        (&["http://127.0.0.1:1/", "--streams", "4"][..], "--streams is HTTP/2's"),
        (
            &["h2c://127.0.0.1:1/", "--pipeline", "4"][..],
            "--pipeline is HTTP/1.1's",
        ),
        (&["h2c://127.0.0.1:1/", "--streams", "0"][..], "at least 1"),
        (&["h2c://127.0.0.1:1/", "--streams", "5000"][..], "at most"),
        (
            &["h2c://127.0.0.1:1/", "--body", "x", "--chunked"][..],
            "--chunked is HTTP/1.1's",
        ),
        (&["echo://127.0.0.1:1", "--h2"][..], "--h2 applies"),
    ] {
        let (code, _, err) = load(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn shards_of_an_h2_run_merge_into_its_h2_figures() {
    let s = Server::start("epoll", &["--proto", "h2"]);
    let url = format!("h2c://{}/", s.addr);
    let dir = std::env::temp_dir().join(format!("muxlab-h2-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for i in 0..2 {
        let shard = format!("{i}/2");
        let (code, doc, err) = load(&[&url, "-c", "4", "--streams", "5", "-n", "2000", "--shard", &shard]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(doc["requests"], 1000);
        let f = dir.join(format!("part{i}.json"));
        std::fs::write(&f, doc.to_string()).unwrap();
        files.push(f);
    }
    let out = Command::new(BIN).arg("merge").args(&files).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(m["requests"], 2000);
    let h = &m["h2"];
    assert_eq!(h["streams"], 2000, "{h}");
    assert_eq!(h["lanes"], 20, "4 connections × 5 streams: {h}");
    assert!(
        h["lanes_jain"].as_f64().is_some() && h["in_flight_max"].as_u64().unwrap() <= 5,
        "{h}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stream_the_server_resets_is_an_error_and_the_rest_are_counted_exactly() {
    let (addr, seen) = scripted(Script {
        reset_every: Some(10),
        ..Script::default()
    });
    let url = format!("h2c://{addr}/");
    let (code, doc, err) = load(&[&url, "-c", "2", "--streams", "5", "-n", "300"]);
    assert_eq!(code, 1, "errors make the exit code 1: {err}");
    let resets = seen.reset.load(Ordering::Relaxed);
    assert_eq!(resets, 30);
    assert_eq!(doc["errors"]["stream_reset"], resets, "{}", doc["errors"]);
    assert_eq!(doc["h2"]["reset"], resets);
    // A reset stream is not retried: the others complete, each once.
    assert_eq!(doc["requests"].as_u64().unwrap() + resets, 300, "{doc}");
    assert_eq!(seen.connections.load(Ordering::Relaxed), 2, "the connections went on");
}

#[test]
fn a_server_that_refuses_every_stream_ends_the_run_with_errors_not_a_loop() {
    let (addr, seen) = scripted(Script {
        refuse_all: true,
        ..Script::default()
    });
    let url = format!("h2c://{addr}/");
    let (code, doc, _) = load(&[&url, "-c", "1", "--streams", "4", "-n", "20"]);
    assert_eq!(code, 1);
    assert_eq!(doc["requests"], 0);
    // Each request: sent, refused, sent again 3 times, then a stream error.
    assert_eq!(doc["errors"]["stream_reset"], 20, "{doc}");
    assert_eq!(doc["h2"]["refused"], 80, "{}", doc["h2"]);
    assert_eq!(doc["h2"]["retried"], 60);
    assert_eq!(seen.refused.load(Ordering::Relaxed), 80);
}

#[test]
fn goaway_in_an_open_loop_and_with_requests_per_conn_still_ends_with_every_request() {
    let (addr, seen) = scripted(Script {
        goaway_after: Some(45),
        hold: true,
        ..Script::default()
    });
    let url = format!("h2c://{addr}/");
    // The server answers 10 at a time: all 50 are sent by the time GOAWAY comes after the
    // 45th, so the 5 above its last stream are sent again with nothing left to schedule.
    let (code, doc, err) = load(&[&url, "-c", "1", "--streams", "10", "--rate", "50000", "-n", "50"]);
    assert_eq!(
        code, 0,
        "{err} {} {} connects {}",
        doc["errors"], doc["h2"], doc["connections"]
    );
    assert_exact(&doc, 50, "open loop");
    assert_eq!(doc["h2"]["retried"], 5, "{}", doc["h2"]);
    assert_eq!(doc["h2"]["goaway"], 1, "{}", doc["h2"]);
    let (code, doc, err) = load(&[
        &url,
        "-c",
        "2",
        "--streams",
        "10",
        "--requests-per-conn",
        "30",
        "-n",
        "300",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_exact(&doc, 300, "requests-per-conn");
    assert_eq!(seen.answered.load(Ordering::Relaxed), 350);
    // A socket the server ends (GOAWAY after 45) before it used all that it reserved (150):
    // the slot connects again for the rest, though the quota is all reserved.
    let (code, doc, err) = load(&[&url, "-c", "2", "--requests-per-conn", "150", "-n", "300"]);
    assert_eq!(code, 0, "{err}");
    assert_exact(&doc, 300, "a socket ended early");
}

#[test]
fn a_server_that_allows_no_stream_times_out_its_refused_requests_and_the_run_ends() {
    let (addr, _) = scripted(Script {
        no_streams: true,
        ..Script::default()
    });
    let url = format!("h2c://{addr}/");
    // The first stream goes before the server's SETTINGS say 0, and is refused; then there is
    // no room to send it again: the connection times out, and after 3 tries it is an error.
    let (code, doc, _) = load(&[&url, "-c", "1", "-n", "2", "--timeout", "200ms"]);
    assert_eq!(code, 1);
    assert_eq!(doc["requests"], 0);
    assert!(doc["errors"]["timeout"].as_u64().unwrap() >= 1, "{doc}");
    assert!(doc["errors"]["stream_reset"].as_u64().unwrap() >= 1, "{doc}");
}

#[test]
fn goaway_then_an_abrupt_close_keeps_the_unprocessed_requests_for_the_next_connection() {
    let (addr, _) = scripted(Script {
        goaway_after: Some(45),
        goaway_close: true,
        ..Script::default()
    });
    let url = format!("h2c://{addr}/");
    let (_, doc, err) = load(&[&url, "-c", "1", "--streams", "10", "-n", "300"]);
    let h = &doc["h2"];
    // The streams up to GOAWAY's last were lost with the close (an error: an end of stream,
    // or a reset where the server closed with the client's later frames unread); those above
    // it were sent again on the next connection and completed.
    let e = &doc["errors"];
    let lost = e["unexpected_close"].as_u64().unwrap_or(0) + e["reset"].as_u64().unwrap_or(0);
    assert!(lost >= 1, "{doc}\n{err}");
    assert!(h["retried"].as_u64().unwrap() > 0, "{h}");
    assert!(h["goaway"].as_u64().unwrap() >= 2, "{h}");
    assert!(doc["requests"].as_u64().unwrap() > 200, "{doc}");
}

#[test]
fn classes_and_head_requests_over_h2_are_counted_exactly() {
    let s = Server::start("epoll", &["--proto", "h2"]);
    let url = format!("h2c://{}/", s.addr);
    let (code, doc, err) = load(&[
        &url,
        "-c",
        "2",
        "--streams",
        "4",
        "-n",
        "800",
        "--mix",
        "a=1:/a",
        "--mix",
        "b=3:/b?x=1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_exact(&doc, 800, "mix");
    let (a, b) = (
        doc["classes"]["a"]["requests"].as_u64().unwrap(),
        doc["classes"]["b"]["requests"].as_u64().unwrap(),
    );
    assert_eq!(a + b, 800);
    assert!(a > 100 && b > 450, "about 1:3: {a} {b}");
    let (code, doc, err) = load(&[&url, "-c", "2", "--streams", "4", "-n", "300", "-m", "HEAD"]);
    assert_eq!(code, 0, "{err}");
    assert_exact(&doc, 300, "HEAD");
    // Headers too large for one HEADERS frame are refused before the run.
    let big = format!("X-Big: {}", "a".repeat(17_000));
    let (code, _, err) = load(&[&url, "-n", "1", "-H", &big]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("more than one HTTP/2 frame"), "{err}");
    assert_eq!(s.stop().total("requests"), 1100);
}

/// A server that floods PINGs and never reads: the client queues at most 512 KiB of their
/// acknowledgements, then ends that connection as a bad response (said once, in one line),
/// connects again under the usual rules, and the run ends on its own.
#[test]
fn a_server_that_floods_pings_and_never_reads_cannot_grow_the_client() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let floods = Arc::new(AtomicU64::new(0));
    let f2 = floods.clone();
    thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            f2.fetch_add(1, Ordering::Relaxed);
            thread::spawn(move || {
                let mut pre = [0u8; 24];
                if s.read_exact(&mut pre).is_err() {
                    return;
                }
                let mut burst = Vec::new();
                wire::settings(&mut burst, &[]);
                for k in 0..4096u32 {
                    wire::frame(&mut burst, frame::PING, 0, 0, &u64::from(k).to_be_bytes());
                }
                // Never reads again: every acknowledgement stays with the client.
                while s.write_all(&burst).is_ok() {}
            });
        }
    });
    let url = format!("h2c://{addr}/");
    let t0 = std::time::Instant::now();
    let (code, doc, err) = load(&[&url, "-c", "1", "-n", "3", "--timeout", "3s"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(60),
        "the run did not end on its own"
    );
    assert!(
        err.contains("faster than it reads their acknowledgements"),
        "the reason is said: {err}"
    );
    assert!(
        doc["errors"]["bad_response"].as_u64().unwrap() >= 1,
        "{}",
        doc["errors"]
    );
    assert!(floods.load(Ordering::Relaxed) >= 2, "the client connected again");
}
