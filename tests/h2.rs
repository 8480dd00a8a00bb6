//! HTTP/2 (`serve --proto h2`) in every model, against real peers (Debian's nghttp2-client:
//! h2load and nghttp; curl) and frame by frame over a socket: the rules a conformance suite
//! checks, the limits, and GOAWAY on SIGTERM.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{for_each_model, have, tree_pss_kib, Server};
use muxlab::peer::h2::wire::{self, Coding, Got};
use muxlab::proto::h2::frame::{self, Code};

fn h2(model: &str, args: &[&str], more: &[&str]) -> Server {
    Server::start(model, &[args, &["--proto", "h2"], more].concat())
}

/// Reads from `s` until `done` holds for what came back, the server closes, or 10 s pass.
fn read_until(s: &mut TcpStream, done: impl Fn(&Got) -> bool) -> (Got, bool) {
    s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut all = Vec::new();
    let mut buf = [0u8; 65536];
    let t0 = Instant::now();
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (wire::read(&all), true),
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return (wire::read(&all), true),
            Err(_) => {}
        }
        let got = wire::read(&all);
        if done(&got) || t0.elapsed() > Duration::from_secs(10) {
            return (got, false);
        }
    }
}

fn preface() -> Vec<u8> {
    let mut b = Vec::new();
    wire::preface(&mut b);
    b
}

fn get(b: &mut Vec<u8>, id: u32) {
    wire::headers(b, id, &wire::request_block("GET", "/", &[], Coding::Plain), true);
}

fn post_open(b: &mut Vec<u8>, id: u32) {
    wire::headers(b, id, &wire::request_block("POST", "/", &[], Coding::Plain), false);
}

fn served(got: &Got, id: u32) -> bool {
    got.streams.get(&id).is_some_and(|s| s.ended)
}

#[test]
fn h2load_completes_every_request_against_every_model() {
    if !have("h2load", "nghttp2-client") {
        return;
    }
    for_each_model(|model, args| {
        let srv = h2(model, args, &[]);
        let out = Command::new("h2load")
            .args(["-n", "20000", "-c", "10", "-m", "10", &format!("http://{}/", srv.addr)])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("20000 total, 20000 started, 20000 done, 20000 succeeded, 0 failed"),
            "{model}: {text}"
        );
        let st = srv.stop();
        assert_eq!(st.total("requests"), 20000, "{model}");
        assert_eq!(st.total("streams_opened"), 20000, "{model}");
        assert_eq!(st.total("streams_refused") + st.total("streams_reset"), 0, "{model}");
    });
}

#[test]
fn nghttp_uploads_are_echoed_byte_for_byte_and_curl_gets_hello() {
    if !have("nghttp", "nghttp2-client") || !have("curl", "curl") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("muxlab-h2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 1 MiB, past the windows (256 KiB at the default --max-output): the upload and its echo
    // both wait for WINDOW_UPDATEs.
    let body: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let file = dir.join("up.bin");
    std::fs::write(&file, &body).unwrap();
    for_each_model(|model, args| {
        let srv = h2(model, args, &[]);
        let url = format!("http://{}/", srv.addr);
        let out = Command::new("nghttp")
            .args(["-d", file.to_str().unwrap(), &url])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{model}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout == body,
            "{model}: the echo differs ({} bytes back)",
            out.stdout.len()
        );
        // The server grants its window back half a window at a time: at most one
        // WINDOW_UPDATE for two DATA frames (the one that opens the connection's window at
        // the greeting included, and at least one more: 1 MiB is past the window), not one
        // per frame on the connection and one on the stream.
        let out = Command::new("nghttp")
            .args(["-v", "-n", "-d", file.to_str().unwrap(), &url])
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stdout);
        let (data, updates) = (
            log.matches("send DATA frame").count(),
            log.matches("recv WINDOW_UPDATE frame").count(),
        );
        assert!(
            data >= 64 && updates > 1 && 2 * updates <= data,
            "{model}: {updates} WINDOW_UPDATEs for {data} DATA frames"
        );
        let out = curl(&["--http2-prior-knowledge", &url]);
        assert_eq!(out, "<html>hello</html> 200 2", "{model}");
        // The same port answers HTTP/1.1.
        let out = curl(&["--http1.1", &url]);
        assert_eq!(out, "<html>hello</html> 200 1.1", "{model}");
        srv.stop();
    });
    let _ = std::fs::remove_dir_all(dir);
}

fn curl(args: &[&str]) -> String {
    let out = Command::new("curl")
        .args(["-sk", "--max-time", "10", "-w", " %{http_code} %{http_version}"])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn over_tls_alpn_picks_http2_or_http1_for_every_model() {
    if !have("curl", "curl") {
        return;
    }
    for_each_model(|model, args| {
        let srv = h2(model, args, &["--tls", "self-signed"]);
        let url = format!("https://localhost:{}/", srv.addr.port());
        let resolve = format!("localhost:{}:127.0.0.1", srv.addr.port());
        assert_eq!(
            curl(&["--resolve", &resolve, "--http2", &url]),
            "<html>hello</html> 200 2",
            "{model}"
        );
        assert_eq!(
            curl(&["--resolve", &resolve, "--http1.1", &url]),
            "<html>hello</html> 200 1.1",
            "{model}"
        );
        let st = srv.stop();
        assert_eq!(
            st.total("streams_opened"),
            1,
            "{model}: the h2 stream counted behind TLS"
        );
        assert_eq!(st.total("requests"), 2, "{model}");
    });
}

/// The conformance cases over a real socket, every model: each case is what a client sends
/// and what it must see.
#[test]
fn the_rfc_rules_hold_over_a_socket_in_every_model() {
    for_each_model(|model, args| {
        let srv = h2(model, args, &["--max-streams", "2"]);
        let talk = |input: &[u8], done: &dyn Fn(&Got) -> bool| {
            let mut s = srv.connect();
            s.write_all(input).unwrap();
            read_until(&mut s, done)
        };
        let goaway = |code: Code| move |g: &Got| g.goaway.is_some_and(|(_, c)| c == code as u32);

        // A bad preface: GOAWAY(PROTOCOL_ERROR) and the connection closes.
        let (got, closed) = talk(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n", &|_| false);
        assert!(closed && goaway(Code::Protocol)(&got), "{model}: bad preface: {got:?}");
        let mut s = srv.connect();
        s.write_all(b"INVALID CONNECTION PREFACE\r\n\r\n").unwrap();
        let mut back = Vec::new();
        let _ = s.read_to_end(&mut back);
        let got = wire::read(&back);
        assert!(
            goaway(Code::Protocol)(&got) && got.trailing == 0,
            "{model}: h2spec's bad preface: {back:?}"
        );
        drop(s);

        // The client's GOAWAY with nothing open: the server says its own and closes.
        let mut b = preface();
        wire::frame(&mut b, frame::GOAWAY, 0, 0, &[0, 0, 0, 0, 0, 0, 0, 0]);
        let (got, closed) = talk(&b, &|_| false);
        assert!(closed && goaway(Code::NoError)(&got), "{model}: client GOAWAY: {got:?}");

        // A header block split over CONTINUATIONs, one byte per write on the wire.
        let mut b = preface();
        let block = wire::request_block("GET", "/split", &[("x-a", "1")], Coding::Indexed);
        wire::frame(&mut b, frame::HEADERS, frame::END_STREAM, 1, &block[..4]);
        wire::frame(&mut b, frame::CONTINUATION, 0, 1, &block[4..9]);
        wire::frame(&mut b, frame::CONTINUATION, frame::END_HEADERS, 1, &block[9..]);
        let mut s = srv.connect();
        for byte in &b {
            s.write_all(std::slice::from_ref(byte)).unwrap();
        }
        let (got, _) = read_until(&mut s, |g| served(g, 1));
        assert_eq!(got.streams[&1].body, b"<html>hello</html>", "{model}: CONTINUATION");
        drop(s);

        // Stream identifiers going backwards, and even ones from the client.
        let mut b = preface();
        get(&mut b, 5);
        get(&mut b, 3);
        let (got, closed) = talk(&b, &|_| false);
        assert!(closed && goaway(Code::Protocol)(&got), "{model}: backwards: {got:?}");
        let mut b = preface();
        get(&mut b, 2);
        let (got, _) = talk(&b, &goaway(Code::Protocol));
        assert!(goaway(Code::Protocol)(&got), "{model}: even id: {got:?}");

        // A frame over SETTINGS_MAX_FRAME_SIZE.
        let mut b = preface();
        post_open(&mut b, 1);
        wire::data(&mut b, 1, &vec![1u8; frame::MAX_FRAME + 1], true);
        let (got, _) = talk(&b, &goaway(Code::FrameSize));
        assert!(goaway(Code::FrameSize)(&got), "{model}: frame size: {got:?}");

        // The connection window pushed past 2^31-1.
        let mut b = preface();
        wire::window_update(&mut b, 0, (1 << 31) - 1);
        let (got, _) = talk(&b, &goaway(Code::FlowControl));
        assert!(goaway(Code::FlowControl)(&got), "{model}: window: {got:?}");

        // Too many concurrent streams: the third of --max-streams 2 is refused, the two served.
        let mut b = preface();
        for id in [1, 3, 5] {
            post_open(&mut b, id);
        }
        wire::data(&mut b, 1, b"one", true);
        wire::data(&mut b, 3, b"three", true);
        let (got, closed) = talk(&b, &|g| served(g, 1) && served(g, 3) && g.streams.contains_key(&5));
        assert!(!closed, "{model}");
        assert_eq!(
            got.streams[&5].reset,
            Some(Code::RefusedStream as u32),
            "{model}: {got:?}"
        );
        assert_eq!(
            (&got.streams[&1].body[..], &got.streams[&3].body[..]),
            (&b"one"[..], &b"three"[..])
        );

        // PING and SETTINGS are acknowledged; unknown frames ignored; one stream's reset
        // leaves the other served.
        let mut b = preface();
        wire::frame(&mut b, frame::PING, 0, 0, b"muxlab!!");
        wire::frame(&mut b, 0xee, 0, 0, b"unknown");
        post_open(&mut b, 1);
        post_open(&mut b, 3);
        wire::frame(&mut b, frame::RST_STREAM, 0, 1, &(Code::Cancel as u32).to_be_bytes());
        wire::data(&mut b, 3, b"kept", true);
        let (got, closed) = talk(&b, &|g| served(g, 3) && !g.pongs.is_empty());
        assert!(!closed && got.goaway.is_none(), "{model}: {got:?}");
        assert_eq!(got.pongs, vec![*b"muxlab!!"], "{model}");
        assert!(got.settings_acks >= 1, "{model}: SETTINGS not acknowledged");
        assert_eq!(got.streams[&3].body, b"kept", "{model}");
        assert!(
            !got.streams.get(&1).is_some_and(|s| s.ended),
            "{model}: the reset stream answered"
        );

        let st = srv.stop();
        assert!(st.total("streams_refused") >= 1, "{model}");
        assert!(st.total("streams_reset") >= 1, "{model}");
    });
}

#[test]
fn sigterm_sends_goaway_naming_the_last_stream_before_closing() {
    for_each_model(|model, args| {
        let srv = h2(model, args, &[]);
        let mut s = srv.connect();
        let mut b = preface();
        get(&mut b, 1);
        get(&mut b, 3);
        s.write_all(&b).unwrap();
        let (got, _) = read_until(&mut s, |g| served(g, 1) && served(g, 3));
        assert!(served(&got, 3), "{model}: {got:?}");
        // Everything before the stop was read: what follows is the goodbye.
        srv.stop();
        let mut rest = Vec::new();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.read_to_end(&mut rest);
        let got = wire::read(&rest);
        assert_eq!(got.goaway, Some((3, Code::NoError as u32)), "{model}: {rest:?}");
    });
}

/// Clients that never read, and clients that never grant window, cost bounded memory, and
/// everybody else is still served (by a blocking model once the stalled ones timed out).
#[test]
fn clients_that_never_read_or_never_grant_window_cost_bounded_memory() {
    for_each_model(|model, args| {
        let srv = h2(model, args, &["--idle-timeout", "2s", "--max-output", "64KiB"]);
        let mut s = srv.connect();
        let mut b = preface();
        get(&mut b, 1);
        s.write_all(&b).unwrap();
        assert!(served(&read_until(&mut s, |g| served(g, 1)).0, 1), "{model}");
        drop(s);
        let before = tree_pss_kib(srv.pid());
        let stalled: Vec<_> = (0..4)
            .map(|k| {
                let mut c = srv.connect();
                c.set_write_timeout(Some(Duration::from_secs(3))).unwrap();
                std::thread::spawn(move || {
                    let mut b = preface();
                    if k % 2 == 1 {
                        // Never grants window: every response waits in the server.
                        wire::settings(&mut b, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 0)]);
                    }
                    let _ = c.write_all(&b);
                    let mut id = 1;
                    'out: for _ in 0..200 {
                        let mut b = Vec::new();
                        for _ in 0..50 {
                            post_open(&mut b, id);
                            wire::data(&mut b, id, &[9u8; 1000], true);
                            id += 2;
                        }
                        if c.write_all(&b).is_err() {
                            break 'out;
                        }
                    }
                    c
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs(3));
        let grown = tree_pss_kib(srv.pid()).saturating_sub(before);
        assert!(
            grown <= 16 * 1024,
            "{model}: the server grew by {grown} KiB for 4 stalled h2 clients"
        );
        let t0 = Instant::now();
        let ok = loop {
            let mut s = srv.connect();
            let mut b = preface();
            get(&mut b, 1);
            let _ = s.write_all(&b);
            if served(&read_until(&mut s, |g| served(g, 1)).0, 1) {
                break true;
            }
            if t0.elapsed() > Duration::from_secs(20) {
                break false;
            }
        };
        assert!(ok, "{model}: nobody else was served");
        let clients: Vec<_> = stalled.into_iter().map(|h| h.join().unwrap()).collect();
        drop(clients);
        srv.stop();
    });
}

/// Writes `b` to `s` and reads until GOAWAY or the close (a server that ends the connection
/// mid-flood stops reading: the rest of the write fails, which is the point).
fn flood(s: &mut TcpStream, b: &[u8]) -> (Got, bool) {
    let mut w = s.try_clone().unwrap();
    let b = b.to_vec();
    let writer = std::thread::spawn(move || {
        for chunk in b.chunks(64 * 1024) {
            if w.write_all(chunk).is_err() {
                break;
            }
        }
    });
    let got = read_until(s, |g| g.goaway.is_some());
    let _ = s.shutdown(std::net::Shutdown::Both);
    writer.join().unwrap();
    got
}

/// Rapid Reset (HEADERS then RST_STREAM, 20,000 times on one connection) is cut off with GOAWAY
/// ENHANCE_YOUR_CALM long before its 20,000th stream, while another connection is still
/// answered; floods of empty DATA and of empty CONTINUATIONs end theirs too. Counted by cause
/// in the stats line.
#[test]
fn floods_end_their_connection_with_enhance_your_calm_and_others_are_still_served() {
    for_each_model(|model, args| {
        let srv = h2(model, args, &[]);
        let calm = |g: &Got| {
            g.goaway
                .map(|(last, code)| (last, code == Code::EnhanceYourCalm as u32))
        };
        let mut b = preface();
        for k in 0..20_000u32 {
            get(&mut b, 1 + 2 * k);
            wire::frame(
                &mut b,
                frame::RST_STREAM,
                0,
                1 + 2 * k,
                &(Code::Cancel as u32).to_be_bytes(),
            );
        }
        let (got, _) = flood(&mut srv.connect(), &b);
        let (last, calmed) = calm(&got).unwrap_or_else(|| panic!("{model}: no GOAWAY: {:?}", got.goaway));
        assert!(
            calmed && last < 2 * 1000,
            "{model}: Rapid Reset: GOAWAY at stream {last}"
        );
        // Another connection is served.
        let mut s = srv.connect();
        let mut one = preface();
        get(&mut one, 1);
        s.write_all(&one).unwrap();
        let (got, _) = read_until(&mut s, |g| served(g, 1));
        assert!(served(&got, 1), "{model}: the other connection: {got:?}");
        drop(s);
        // Empty DATA on an open stream, and an endless header block of empty CONTINUATIONs.
        let mut data = preface();
        post_open(&mut data, 1);
        for _ in 0..100_000 {
            wire::data(&mut data, 1, b"", false);
        }
        let mut cont = preface();
        wire::frame(
            &mut cont,
            frame::HEADERS,
            frame::END_STREAM,
            1,
            &wire::request_block("GET", "/", &[], Coding::Plain),
        );
        for _ in 0..100_000 {
            wire::frame(&mut cont, frame::CONTINUATION, 0, 1, b"");
        }
        for (what, b) in [("empty DATA", data), ("empty CONTINUATION", cont)] {
            let (got, _) = flood(&mut srv.connect(), &b);
            assert_eq!(calm(&got).map(|c| c.1), Some(true), "{model}: {what}: {:?}", got.goaway);
        }
        let stopped = srv.stop();
        assert_eq!(stopped.total("h2_calm_client_resets"), 1, "{model}");
        assert_eq!(stopped.total("h2_calm_quiet_frames"), 1, "{model}: the empty DATA");
    });
}

/// Frames that ask nothing of the server (PING) do not keep a connection from being idle.
#[test]
fn pings_alone_do_not_keep_a_connection_from_its_idle_timeout() {
    for_each_model(|model, args| {
        let srv = h2(model, args, &["--idle-timeout", "1s"]);
        let mut s = srv.connect();
        s.write_all(&preface()).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        let t0 = Instant::now();
        let mut buf = [0u8; 4096];
        let closed = loop {
            let mut ping = Vec::new();
            wire::frame(&mut ping, frame::PING, 0, 0, &[7; 8]);
            if s.write_all(&ping).is_err() {
                break true;
            }
            match s.read(&mut buf) {
                Ok(0) => break true,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
                _ => {}
            }
            if t0.elapsed() > Duration::from_secs(15) {
                break false;
            }
            // A keep-alive, not a flood: five a second.
            std::thread::sleep(Duration::from_millis(200));
        };
        assert!(closed, "{model}: a client sending only PINGs kept its connection");
        // Closed by its deadline (uring may find the last ACK's send still in flight, and
        // count the close as the send timeout's).
        let stopped = srv.stop();
        let by_deadline = stopped.total("closed_idle") + stopped.total("closed_send_timeout");
        assert_eq!(by_deadline, 1, "{model}");
    });
}

/// h2load at 100 streams per connection spends no budget.
#[test]
fn h2load_with_a_hundred_streams_per_connection_trips_no_budget() {
    if !have("h2load", "nghttp2-client") {
        return;
    }
    let srv = h2("epoll", &[], &[]);
    let out = Command::new("h2load")
        .args([
            "-n",
            "100000",
            "-c",
            "10",
            "-m",
            "100",
            &format!("http://{}/", srv.addr),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("100000 succeeded"), "{text}");
    let stopped = srv.stop();
    for cause in ["h2_calm_client_resets", "h2_calm_server_resets", "h2_calm_quiet_frames"] {
        assert_eq!(stopped.total(cause), 0, "{cause}");
    }
}
