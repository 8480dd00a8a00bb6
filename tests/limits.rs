//! Bad input and limits, for every registered model where the limit applies: idle timeout,
//! resets, `--max-conns`, EMFILE, select's FD_SETSIZE, and command-line errors.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use muxlab::server::Workers;

fn model(name: &str) -> &'static muxlab::server::Model {
    muxlab::models::find(name).unwrap()
}

#[test]
fn half_a_request_then_silence_is_closed_after_the_idle_timeout() {
    for_each_model(|name, args| {
        let srv = Server::start(name, &[args, &["--idle-timeout", "300ms"]].concat());
        let mut s = srv.connect();
        s.write_all(b"GET / HTTP/1.1\r\nHost").unwrap();
        let t = Instant::now();
        assert!(read_to_end_lossy(&mut s).is_empty(), "no response to half a request");
        assert!(
            t.elapsed() < IO_TIMEOUT,
            "closed by the server, not by the client's timeout"
        );
        let st = srv.stop();
        assert_eq!(st.total("requests"), 0);
        assert_eq!(st.total("closed"), 1);
    });
}

#[test]
fn a_client_resetting_mid_request_does_not_take_the_server_down() {
    for_each_model(|name, args| {
        let srv = Server::start(name, args);
        for _ in 0..20 {
            let mut s = srv.connect();
            s.write_all(b"GET / HTTP/1.1\r\nHo").unwrap();
            muxlab::sys::socket::set_linger_reset(&s).unwrap();
            drop(s); // RST
        }
        // Reset while the server is writing a large echo back.
        let srv2 = Server::start(name, &[args, &["--proto", "echo"]].concat());
        let mut s = srv2.connect();
        s.write_all(&vec![7u8; 4 << 20]).unwrap_or(());
        muxlab::sys::socket::set_linger_reset(&s).unwrap();
        drop(s);
        let mut s = srv.connect();
        assert_eq!(get(&mut s, &mut Vec::new()).status, 200);
        drop(s);
        let st = srv.stop();
        // With a listener per worker (SO_REUSEPORT) a connection waits in the queue of the
        // worker the kernel hashed it to: one still queued when the server stops (a starved
        // worker, on a busy machine) is never accepted, and the kernel resets it. Whatever
        // was accepted was closed.
        let per_worker = muxlab::models::ALL.iter().any(|m| m.name == name && m.reuseport);
        let accepted = st.total("accepted");
        match per_worker {
            true => assert!((1..=21).contains(&accepted), "{name}: {accepted}"),
            false => assert_eq!(accepted, 21, "{name}"),
        }
        assert_eq!(st.total("closed"), accepted, "{name}");
        let mut s = srv2.connect();
        s.write_all(b"ping").unwrap();
        let mut b = [0u8; 4];
        std::io::Read::read_exact(&mut s, &mut b).unwrap();
        assert_eq!(&b, b"ping");
        drop(s);
        srv2.stop();
    });
}

/// Opens `n` connections, sends a request on each, and counts how many were answered.
fn answered(srv: &Server, n: usize) -> (usize, Vec<TcpStream>) {
    let mut conns: Vec<TcpStream> = (0..n).map(|_| srv.connect()).collect();
    let sent: Vec<bool> = conns
        .iter_mut()
        .map(|s| s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n").is_ok())
        .collect();
    // One 2 s deadline for all of them: a connection left waiting costs the test 2 s once.
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    let mut ok = 0;
    for (s, sent) in conns.iter_mut().zip(sent) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        s.set_read_timeout(Some(left.max(Duration::from_millis(50)))).unwrap();
        if sent {
            if let Ok(Some(r)) = read_response(s, &mut Vec::new()) {
                ok += usize::from(r.status == 200);
            }
        }
    }
    (ok, conns)
}

#[test]
fn max_conns_refuses_the_excess_and_the_server_stays_up() {
    for_each_model(|name, args| {
        let m = model(name);
        if m.one_conn_per_worker && m.workers == Workers::None {
            // Not applicable, by design: it serves one connection at a time, so --max-conns
            // cannot be exceeded.
            return;
        }
        let workers: &[&str] = if m.workers == Workers::None {
            &[]
        } else {
            &["--workers", "4"]
        };
        let _ = args;
        let srv = Server::start(name, &[workers, &["--max-conns", "3"]].concat());
        let (ok, conns) = answered(&srv, 6);
        assert_eq!(ok, 3, "exactly --max-conns connections are served");
        drop(conns);
        // Once they are gone, new connections are served again.
        std::thread::sleep(Duration::from_millis(300));
        let (ok, conns) = answered(&srv, 2);
        assert_eq!(ok, 2);
        drop(conns);
        let st = srv.stop();
        assert_eq!(st.total("rejected_limit"), 3);
        assert_eq!(st.total("accepted"), 5);
    });
}

#[test]
fn running_out_of_descriptors_neither_spins_nor_sticks() {
    for_each_model(|name, args| {
        let m = model(name);
        if m.one_conn_per_worker {
            // Not applicable, by design: it holds one connection per worker, so it cannot run
            // out of descriptors.
            return;
        }
        let srv = Server::start(name, &[args, &["--nofile", "48", "--max-conns", "10000"]].concat());
        let (ok, conns) = answered(&srv, 100);
        // Hold them: a server that spins on EMFILE would loop millions of times meanwhile.
        std::thread::sleep(Duration::from_secs(1));
        drop(conns);
        std::thread::sleep(Duration::from_millis(300));
        let (ok_after, conns) = answered(&srv, 5);
        assert_eq!(ok_after, 5, "the server recovers when descriptors free up");
        drop(conns);
        let st = srv.stop();
        let refused = st.total("rejected_emfile") as usize;
        if m.workers == Workers::Processes && st.total("accept_paused") > 0 {
            // Each worker process holds its share of its own descriptor table, then leaves new
            // connections to its siblings; with all of them full (and --max-conns set above what
            // they hold) the rest wait in the backlog: never accepted only to be shed.
            eprintln!("{name}: {ok} served, {refused} refused, the rest waited while every worker held its share");
            assert_eq!(refused, 0, "a worker at its share does not accept only to shed");
        } else if m.reuseport {
            // Each worker has its own accept queue; at the descriptor limit a worker whose spare
            // slot another thread took cannot drain its queue: those connections wait (no spin,
            // checked below) until descriptors free up.
            eprintln!("{name}: {ok} served, {refused} refused, the rest waited in a worker's own accept queue");
        } else {
            assert!(
                ok + refused >= 100,
                "every connection was either served ({ok}) or refused ({refused})"
            );
        }
        // Either the model hit the limit and refused, or every connection found room (a process
        // per worker or per connection has a descriptor table of its own): 100 cannot fit in 48.
        assert!(
            refused > 0 || ok == 100 || st.total("accept_paused") > 0,
            "{ok} served, {refused} refused: 48 descriptors cannot hold 100 connections"
        );
        let loops = st.total("loop_iterations");
        assert!(
            loops < 20_000,
            "{loops} loop iterations in ~2 s: the accept loop spins on EMFILE"
        );
    });
}

#[test]
fn select_refuses_descriptors_past_fd_setsize_and_keeps_serving_the_rest() {
    let srv = Server::start("select", &[]);
    let mut conns: Vec<TcpStream> = (0..1100).map(|_| srv.connect()).collect();
    // Serve every connection; those the server had to refuse read EOF or a reset.
    let mut ok = 0;
    for s in &mut conns {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        if s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n").is_ok() {
            if let Ok(Some(r)) = read_response(s, &mut Vec::new()) {
                ok += usize::from(r.status == 200);
            }
        }
    }
    assert!(ok >= 1000, "the first ~1,000 connections work ({ok} answered)");
    assert!(ok < 1100, "connections past FD_SETSIZE cannot all be served");
    // The accepted ones still work after the refusals.
    let mut pending = Vec::new();
    let still = conns
        .iter_mut()
        .take(50)
        .map(|s| get_opt(s, &mut pending))
        .filter(|ok| *ok)
        .count();
    assert_eq!(still, 50, "the first connections keep working after refusals");
    drop(conns);
    let st = srv.stop();
    assert_eq!(st.total("rejected_fdsetsize") as usize + ok, 1100);
}

fn get_opt(s: &mut TcpStream, pending: &mut Vec<u8>) -> bool {
    s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n").is_ok()
        && matches!(read_response(s, pending), Ok(Some(r)) if r.status == 200)
}

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn a_port_in_use_is_one_clear_line_and_exit_code_2() {
    let srv = Server::start("epoll", &[]);
    let port = srv.addr.port().to_string();
    let (code, err) = run(&["serve", "--model", "epoll", "--port", &port]);
    assert_eq!(code, 2);
    assert!(err.contains("already in use") && err.contains("--port 0"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    srv.stop();
}

#[test]
fn bad_flags_and_unknown_models_exit_2_with_a_hint() {
    for (args, hint) in [
        (&["serve", "--model", "nosuch"][..], "possible values"),
        (&["serve", "--model", "epoll", "--work", "gpu:1s"][..], "cpu:200us"),
        (&["serve", "--model", "epoll", "--idle-timeout", "soon"][..], "duration"),
        (&["serve", "--model", "epoll", "--workers", "4"][..], "has no workers"),
        (&["serve", "--model", "prefork", "--workers", "0"][..], "at least 1"),
        (&["serve", "--model", "epoll", "--max-conns", "0"][..], "at least 1"),
        // A flag the model does not honour is refused, not silently ignored.
        (
            &["serve", "--model", "poll", "--trigger", "edge"][..],
            "has no --trigger",
        ),
        (
            &["serve", "--model", "reactor", "--trigger", "edge"][..],
            "has no --trigger",
        ),
        (
            &["serve", "--model", "epoll", "--accept", "mutex"][..],
            "has no --accept",
        ),
        (
            &["serve", "--model", "threads-accept", "--accept", "all"][..],
            "has no --accept",
        ),
        (
            &["serve", "--model", "epoll", "--batch-wait", "50us"][..],
            "has no --batch-wait",
        ),
        (
            &["serve", "--model", "uring", "--batch-wait", "1s"][..],
            "more than 10ms",
        ),
        (
            &["serve", "--model", "epoll", "--addr", "10.255.255.1", "--port", "0"][..],
            "not an address of this machine",
        ),
        (
            &["serve", "--model", "epoll", "--proto", "packet", "--packet-size", "0"][..],
            "at least 1 byte",
        ),
        (
            &["serve", "--model", "epoll", "--work", "cpu:exp(1x)"][..],
            "'1x' has an unknown unit",
        ),
        (
            &["serve", "--model", "epoll", "--work", "cpu:mix(50%:1ms)"][..],
            "sum to 50%",
        ),
        (
            &["serve", "--model", "epoll", "--proto", "echo", "--work-from-request"][..],
            "needs --proto http",
        ),
        (&["serve", "--model", "epoll", "--tls", "cert.pem"][..], "self-signed"),
        (
            &["serve", "--model", "epoll", "--tls", "/no/cert.pem,/no/key.pem"][..],
            "/no/cert.pem",
        ),
    ] {
        let (code, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(hint), "{args:?}: {err}");
    }
}

#[test]
fn models_lists_every_registered_model() {
    let out = Command::new(BIN).args(["models", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    let registered: Vec<&str> = muxlab::models::ALL.iter().map(|m| m.name).collect();
    assert_eq!(names, registered);
    for m in v.as_array().unwrap() {
        for key in ["family", "mechanism", "product", "seed"] {
            assert!(!m[key].as_str().unwrap().is_empty(), "{m}");
        }
    }
}

#[test]
fn serve_accepts_every_flag_it_documents() {
    let srv = Server::start(
        "epoll",
        &[
            "--addr",
            "127.0.0.1",
            "--backlog",
            "64",
            "--max-conns",
            "100",
            "--idle-timeout",
            "5s",
            "--work",
            "cpu:10us",
            "--trigger",
            "edge",
            "--nofile",
            "1000",
            "--cpus",
            "0",
            "--proto",
            "http",
        ],
    );
    let mut s = srv.connect();
    assert_eq!(get(&mut s, &mut Vec::new()).status, 200);
    drop(s);
    srv.stop();
    let srv = Server::start(
        "prefork",
        &["--workers", "3", "--proto", "packet", "--packet-size", "10"],
    );
    let mut s = srv.connect();
    s.write_all(b"0123456789").unwrap();
    let mut b = [0u8; 10];
    std::io::Read::read_exact(&mut s, &mut b).unwrap();
    drop(s);
    srv.stop();
}

#[test]
fn an_old_model_name_still_serves_and_says_the_new_one() {
    let mut child = Command::new(BIN)
        .args(["serve", "--model", "reactors", "--port", "0", "--workers", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Keep reading stdout to the end: the stats line comes at the stop.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["model"], "multi-reactor", "{line}");
    muxlab::sys::process::kill(child.id() as i32, libc::SIGTERM).unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(rest.contains("\"event\":\"stats\""), "{rest}");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("now called 'multi-reactor'"), "{err}");
}

/// `--work-from-request`: a request names its work in its query; over `--max-work` (or not a
/// work spec) it gets 400 and the connection closes; each class is counted in the stats line.
#[test]
fn work_named_by_requests_is_capped_and_counted_per_class() {
    let srv = Server::start("epoll", &["--work-from-request", "--max-work", "5ms"]);
    let ask = |path: &str| {
        let mut s = srv.stream();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
            .unwrap();
        let mut pending = Vec::new();
        read_response(&mut s, &mut pending).unwrap().unwrap().status
    };
    for _ in 0..3 {
        assert_eq!(ask("/?cpu=100us"), 200);
    }
    assert_eq!(ask("/?cpu=50us&sleep=exp%281ms%29"), 200);
    assert_eq!(ask("/plain"), 200);
    assert_eq!(ask("/?cpu=20ms"), 400, "over --max-work");
    assert_eq!(ask("/?sleep=soon"), 400, "not a work spec");
    let st = srv.stop();
    let classes = &st.stats["classes"];
    assert_eq!(classes["cpu=100us"]["requests"], 3, "{classes}");
    assert!(classes["cpu=100us"]["busy_us"].as_f64().unwrap() >= 300.0, "{classes}");
    assert_eq!(classes["cpu=50us&sleep=exp%281ms%29"]["requests"], 1, "{classes}");
    assert_eq!(classes["none"]["requests"], 1, "{classes}");
    assert!(
        classes.get("cpu=20ms").is_none(),
        "a refused request does no work: {classes}"
    );
}
