//! The conformance suite: every registered model (`muxlab::models::ALL`) must pass every test
//! here, unchanged. A model added to the registry is covered without touching this file. The
//! HTTP cases run twice: in plain TCP, and behind TLS (`serve --tls self-signed`).

mod common;

use std::io::{Read, Write};
use std::time::Duration;

use common::*;

const HELLO: &[u8] = b"<html>hello</html>";

#[test]
fn http10_request_gets_hello_and_close() {
    for_each_model_and_over_tls(|model, args| {
        let srv = Server::start(model, args);
        let mut s = srv.stream();
        s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        let all = read_to_end_lossy(&mut s);
        let text = String::from_utf8_lossy(&all);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains("Connection: close"), "{text}");
        assert!(all.ends_with(HELLO), "{text}");
        let st = srv.stop();
        assert_eq!(st.total("requests"), 1);
        assert_eq!(st.total("accepted"), 1);
        assert_eq!(st.total("closed"), 1);
    });
}

#[test]
fn http11_keep_alive_serves_1000_requests_on_one_connection() {
    for_each_model_and_over_tls(|model, args| {
        let srv = Server::start(model, args);
        let mut s = srv.stream();
        let mut pending = Vec::new();
        for i in 0..1000 {
            let r = get(&mut s, &mut pending);
            assert_eq!(r.status, 200, "request {i}");
            assert_eq!(r.body, HELLO);
        }
        s.write_all(b"HEAD / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
        let r = read_response_to(&mut s, &mut pending, true).unwrap().unwrap();
        assert!(r.head.contains("Content-Length: 18") && r.body.is_empty());
        assert!(read_to_end_lossy(&mut s).is_empty(), "nothing after the close response");
        let st = srv.stop();
        assert_eq!(st.total("requests"), 1001);
        assert_eq!(st.total("accepted"), 1);
    });
}

#[test]
fn sixteen_pipelined_requests_in_one_write() {
    for_each_model_and_over_tls(|model, args| {
        let srv = Server::start(model, args);
        let mut s = srv.stream();
        let batch = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n".repeat(16);
        s.write_all(&batch).unwrap();
        let mut pending = Vec::new();
        for i in 0..16 {
            let r = read_response(&mut s, &mut pending)
                .unwrap()
                .unwrap_or_else(|| panic!("response {i}"));
            assert_eq!((r.status, r.body.as_slice()), (200, HELLO));
        }
        drop(s);
        assert_eq!(srv.stop().total("requests"), 16);
    });
}

/// Each request's work runs right before its own response: of two pipelined requests in one
/// write, the first (1 ms of work) is answered while the second's 2 s of work still runs. (It
/// used to wait for the whole batch's work.)
#[test]
fn a_pipelined_requests_response_does_not_wait_for_the_work_of_the_next() {
    for_each_model_and_over_tls(|model, args| {
        let mut args = args.to_vec();
        args.extend(["--work-from-request", "--max-work", "3s"]);
        let srv = Server::start(model, &args);
        let mut s = srv.stream();
        s.write_all(b"GET /?sleep=1ms HTTP/1.1\r\nHost: t\r\n\r\nGET /?sleep=2s HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        s.tcp().set_read_timeout(Some(Duration::from_millis(1500))).unwrap();
        let mut pending = Vec::new();
        let first = read_response(&mut s, &mut pending);
        assert!(
            matches!(&first, Ok(Some(r)) if r.status == 200),
            "{model}: no first response within 1.5 s, while the second's 2 s of work ran: {first:?}"
        );
        s.tcp().set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let second = read_response(&mut s, &mut pending).unwrap().unwrap();
        assert_eq!(second.status, 200);
        drop(s);
        assert_eq!(srv.stop().total("requests"), 2);
    });
}

#[test]
fn request_delivered_one_byte_at_a_time() {
    for_each_model_and_over_tls(|model, args| {
        let srv = Server::start(model, args);
        let mut s = srv.stream();
        for b in b"GET /x HTTP/1.1\r\nHost: t\r\nUser-Agent: slow\r\n\r\n" {
            s.write_all(&[*b]).unwrap();
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut pending = Vec::new();
        let r = read_response(&mut s, &mut pending).unwrap().unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, HELLO));
        drop(s);
        assert_eq!(srv.stop().total("requests"), 1);
    });
}

#[test]
fn malformed_gets_400_oversized_gets_431_then_close() {
    for_each_model_and_over_tls(|model, args| {
        let srv = Server::start(model, args);
        let cases: [(Vec<u8>, &str); 4] = [
            (b"NOT HTTP AT ALL\x00\r\n\r\n".to_vec(), "HTTP/1.1 400"),
            (b"GET / HTTP/1.1\r\nContent-Length: -3\r\n\r\n".to_vec(), "HTTP/1.1 400"),
            (
                format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "b".repeat(10_000)).into_bytes(),
                "HTTP/1.1 431",
            ),
            (
                b"DELETE / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".to_vec(),
                "HTTP/1.1 405",
            ),
        ];
        for (req, want) in cases {
            let mut s = srv.stream();
            s.write_all(&req).unwrap();
            let all = read_to_end_lossy(&mut s);
            let text = String::from_utf8_lossy(&all);
            assert!(
                text.starts_with(want),
                "sent {:?}..., got {text:?}",
                String::from_utf8_lossy(&req[..20])
            );
        }
        // The server is still fine.
        let mut s = srv.stream();
        assert_eq!(get(&mut s, &mut Vec::new()).status, 200);
        drop(s);
        srv.stop();
    });
}

/// RFC 9112's message framing rules: each refusal ends the connection with its status, and the
/// server goes on serving others.
#[test]
fn framing_rules_of_rfc_9112_are_kept() {
    let big_ext = format!(
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n1;x={}\r\na\r\n0\r\n\r\n",
        "e".repeat(5000)
    );
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"GET / HTTP/1.1\r\n\r\n".to_vec(), "HTTP/1.1 400"),
        (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".to_vec(), "HTTP/1.1 400"),
        (b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n".to_vec(), "HTTP/1.1 400"),
        (
            b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n".to_vec(),
            "HTTP/1.1 400",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n".to_vec(),
            "HTTP/1.1 501",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1, 2\r\n\r\nab".to_vec(),
            "HTTP/1.1 400",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n".to_vec(),
            "HTTP/1.1 400",
        ),
        (big_ext.into_bytes(), "HTTP/1.1 400"),
        (
            b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY".to_vec(),
            "HTTP/1.1 400",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: t\r\nExpect: magic\r\nContent-Length: 1\r\n\r\nx".to_vec(),
            "HTTP/1.1 417",
        ),
        (
            b"PUT / HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n".to_vec(),
            "HTTP/1.1 413",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n7d1\r\n".to_vec(),
            "HTTP/1.1 413",
        ),
    ];
    for_each_model_and_over_tls(|model, args| {
        let srv = Server::start(model, &[args, &["--max-body", "1KiB"]].concat());
        for (req, want) in &cases {
            let mut s = srv.stream();
            s.write_all(req).unwrap();
            let text = String::from_utf8_lossy(&read_to_end_lossy(&mut s)).to_string();
            assert!(
                text.starts_with(want) && text.contains("Connection: close"),
                "sent {:?}, got {text:?}",
                String::from_utf8_lossy(&req[..req.len().min(90)])
            );
        }
        let mut s = srv.stream();
        assert_eq!(get(&mut s, &mut Vec::new()).status, 200);
        drop(s);
        srv.stop();
    });
}

/// POST and PUT echo their body, framed by Content-Length or chunked coding with trailers, and
/// `Expect: 100-continue` gets `100 Continue` before the body is sent.
#[test]
fn request_bodies_are_echoed_and_the_connection_goes_on() {
    for_each_model_and_over_tls(|model, args| {
        let srv = Server::start(model, args);
        let mut s = srv.stream();
        let body = random_bytes(3000, 7);
        let mut req = format!("POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
        req.extend_from_slice(&body);
        req.extend_from_slice(b"PUT / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n");
        s.write_all(&req).unwrap();
        let mut pending = Vec::new();
        let r = read_response(&mut s, &mut pending)
            .unwrap()
            .expect("a response to the POST");
        assert_eq!(
            (r.status, &r.body[..]),
            (200, &body[..]),
            "{model}: POST echoes its body"
        );
        let r = read_response(&mut s, &mut pending)
            .unwrap()
            .expect("a response to the PUT");
        assert_eq!(
            (r.status, &r.body[..]),
            (200, &b"hello world"[..]),
            "{model}: chunked PUT echoed"
        );
        // 100-continue: the interim response comes before the body is sent.
        s.write_all(b"POST / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            .unwrap();
        let mut interim = vec![0u8; b"HTTP/1.1 100 Continue\r\n\r\n".len()];
        s.read_exact(&mut interim).unwrap();
        assert_eq!(&interim[..], b"HTTP/1.1 100 Continue\r\n\r\n");
        s.write_all(b"ping").unwrap();
        let r = read_response(&mut s, &mut pending)
            .unwrap()
            .expect("a response after the body");
        assert_eq!((r.status, &r.body[..]), (200, &b"ping"[..]));
        assert_eq!(get(&mut s, &mut pending).status, 200, "{model}: the connection goes on");
        drop(s);
        let st = srv.stop();
        assert_eq!(st.total("requests"), 4, "{model}");
    });
}

/// A deterministic pseudo-random byte stream (xorshift).
fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn echo_returns_16_mib_of_random_bytes_exactly() {
    for_each_model(|model, args| {
        let srv = Server::start(model, &[args, &["--proto", "echo"]].concat());
        let data = random_bytes(16 << 20, 0x5eed);
        let mut s = srv.connect();
        let mut w = s.try_clone().unwrap();
        let got = std::thread::scope(|sc| {
            let writer = sc.spawn(|| {
                // Uneven write sizes, so the server sees arbitrary boundaries.
                let mut off = 0;
                let mut step = 1;
                while off < data.len() {
                    let end = (off + step).min(data.len());
                    w.write_all(&data[off..end]).unwrap();
                    off = end;
                    step = step * 7 % 100_003 + 1;
                }
            });
            let mut got = vec![0u8; data.len()];
            s.read_exact(&mut got).unwrap();
            writer.join().unwrap();
            got
        });
        assert!(got == data, "echoed bytes differ from the sent ones");
        drop(s);
        let st = srv.stop();
        assert_eq!(st.total("bytes_in"), 16 << 20);
        assert_eq!(st.total("bytes_out"), 16 << 20);
    });
}

#[test]
fn packet_frames_split_and_merged_are_answered_only_when_whole() {
    for_each_model(|model, args| {
        let srv = Server::start(model, &[args, &["--proto", "packet", "--packet-size", "100"]].concat());
        let data = random_bytes(400, 7);
        let mut s = srv.connect();
        s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        // One and a half frames: exactly one frame comes back.
        s.write_all(&data[..150]).unwrap();
        let mut got = vec![0u8; 100];
        s.read_exact(&mut got).unwrap();
        assert_eq!(got, data[..100]);
        let mut extra = [0u8; 1];
        assert!(s.read(&mut extra).is_err(), "half a frame must not be answered");
        // The second half plus two whole frames in one write: three frames come back.
        s.write_all(&data[150..400]).unwrap();
        s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        let mut got = vec![0u8; 300];
        s.read_exact(&mut got).unwrap();
        assert_eq!(got, data[100..400]);
        drop(s);
        assert_eq!(srv.stop().total("requests"), 4);
    });
}

#[test]
fn two_hundred_connections_each_doing_fifty_requests_are_all_counted() {
    for_each_model(|model, args| {
        let srv = Server::start(model, args);
        std::thread::scope(|sc| {
            for _ in 0..200 {
                sc.spawn(|| {
                    let mut s = srv.connect();
                    let mut pending = Vec::new();
                    for _ in 0..50 {
                        let r = get(&mut s, &mut pending);
                        assert_eq!((r.status, r.body.as_slice()), (200, HELLO));
                    }
                });
            }
        });
        let st = srv.stop();
        assert_eq!(st.total("requests"), 200 * 50, "requests counted = requests sent");
        assert_eq!(st.total("accepted"), 200);
        assert_eq!(st.total("closed"), 200);
        assert_eq!(
            st.total("rejected_limit") + st.total("rejected_emfile") + st.total("rejected_fdsetsize"),
            0
        );
        assert_eq!(st.total("bytes_out"), 200 * 50 * 122);
        assert!(st.total("useful_events") <= st.total("events"));
        // Readiness models make at least a read and a write per request; completion models
        // (io_uring, tokio) batch or do their I/O outside `sys`.
        let m = muxlab::models::find(model).unwrap();
        if !m.counts_syscalls {
            // Not counted: null, never a 0 a verdict could quote.
            assert!(
                st.stats["totals"]["syscalls"].is_null(),
                "{model}: {}",
                st.stats["totals"]
            );
        } else if m.family != muxlab::server::Family::Completion {
            assert!(
                st.total("syscalls") >= 200 * 50 * 2,
                "at least a read and a write per request"
            );
        }
        let per_worker = st.stats["per_worker"].as_array().unwrap();
        let sum: u64 = per_worker.iter().map(|w| w["requests"].as_u64().unwrap()).sum();
        assert_eq!(sum, 200 * 50, "per-worker blocks add up to the totals");
    });
}

#[test]
fn sigterm_with_open_idle_connections_closes_them_and_exits_cleanly() {
    for_each_model(|model, args| {
        let srv = Server::start(model, args);
        let mut s = srv.connect();
        assert_eq!(get(&mut s, &mut Vec::new()).status, 200);
        // Keep the connection open: shutdown must close it, not wait for it.
        let st = srv.stop();
        assert_eq!(st.total("accepted"), st.total("closed"));
        assert!(read_to_end_lossy(&mut s).is_empty());
    });
}

/// Clients that send and never read cost the server a bounded amount of memory (it stops
/// reading them), and everybody else is still served — by a blocking model once the stalled
/// writes have timed out (`--idle-timeout`).
#[test]
fn clients_that_never_read_cost_bounded_memory_and_others_are_served() {
    for_each_model(|model, args| {
        let srv = Server::start(model, &[args, &["--idle-timeout", "2s"]].concat());
        // Warm up the allocator with one ordinary request.
        let mut s = srv.connect();
        assert_eq!(get(&mut s, &mut Vec::new()).status, 200);
        drop(s);
        let before = tree_pss_kib(srv.pid());
        let stalled: Vec<_> = (0..4)
            .map(|_| {
                let mut c = srv.connect();
                c.set_write_timeout(Some(Duration::from_secs(3))).unwrap();
                std::thread::spawn(move || {
                    let burst = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n".repeat(4096);
                    for _ in 0..64 {
                        if c.write_all(&burst).is_err() {
                            break;
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
            "{model}: the server grew by {grown} KiB for 4 clients that never read"
        );
        // Someone else is served: at once by a multiplexing model; by a blocking one once the
        // stalled writes have timed out, one after another with a single worker (4 x 2 s + ticks).
        let t0 = std::time::Instant::now();
        let served = loop {
            let mut s = srv.connect();
            s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
            let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
            if matches!(read_response(&mut s, &mut Vec::new()), Ok(Some(r)) if r.status == 200) {
                break true;
            }
            if t0.elapsed() > Duration::from_secs(20) {
                break false;
            }
        };
        assert!(served, "{model}: nobody else was served while 4 clients never read");
        let clients: Vec<_> = stalled.into_iter().map(|h| h.join().unwrap()).collect();
        drop(clients);
        let st = srv.stop();
        assert!(
            st.total("output_paused") + st.total("closed_send_timeout") > 0,
            "{model}: back-pressure was counted"
        );
    });
}

/// A client that reads slowly, but reads, gets every reply, complete and in order.
#[test]
fn slow_readers_receive_every_reply_in_order() {
    const N: usize = 20_000;
    for_each_model(|model, args| {
        let srv = Server::start(model, args);
        let s = srv.connect();
        let mut w = s.try_clone().unwrap();
        let writer = std::thread::spawn(move || w.write_all(&mixed_requests(N)).unwrap());
        let r = s;
        r.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut reader = SlowReader { inner: r, reads: 0 };
        read_mixed_replies(model, &mut reader, N);
        writer.join().unwrap();
        drop(reader);
        srv.stop();
    });
}

/// With `--max-output 1KiB` every read of pipelined requests answers past the bound: each
/// session stops mid-buffer, holds the rest, and goes on once its replies are written. Every
/// reply comes, whole and in order, in every model and over TLS, and the stops are counted.
#[test]
fn pipelined_requests_held_at_a_small_output_bound_are_all_answered_in_order() {
    // The requests (90 KB) fit the socket buffers while the client is not reading yet.
    const N: usize = 2_000;
    for_each_model_and_over_tls(|model, args| {
        let srv = Server::start(model, &[args, &["--max-output", "1KiB"]].concat());
        let mut s = srv.stream();
        // All of it in one write (the replies fit the socket buffers, so nothing blocks).
        s.write_all(&mixed_requests(N)).unwrap();
        read_mixed_replies(model, &mut s, N);
        drop(s);
        let st = srv.stop();
        assert!(
            st.total("output_paused") > 0,
            "{model}: no session ever stopped at the bound"
        );
        assert_eq!(st.total("requests"), N as u64, "{model}");
    });
}

/// `n` pipelined requests alternating GET and a small POST, so the replies differ and their
/// order shows.
fn mixed_requests(n: usize) -> Vec<u8> {
    let mut reqs = Vec::new();
    for i in 0..n {
        if i % 2 == 0 {
            reqs.extend_from_slice(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        } else {
            let body = format!("{:06}", i % 1_000_000);
            reqs.extend_from_slice(format!("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\n\r\n{body}").as_bytes());
        }
    }
    reqs
}

/// Reads the `n` replies to [`mixed_requests`]: each whole, 200, in order.
fn read_mixed_replies(model: &str, r: &mut impl Read, n: usize) {
    let mut pending = Vec::new();
    for i in 0..n {
        let resp = read_response(r, &mut pending).unwrap().expect("a reply");
        let want: Vec<u8> = match i % 2 {
            0 => HELLO.to_vec(),
            _ => format!("{:06}", i % 1_000_000).into_bytes(),
        };
        assert_eq!(
            (resp.status, resp.body),
            (200, want),
            "{model}: reply {i} out of order or damaged"
        );
    }
}

/// Reads at most 4 KiB at a time, pausing a millisecond every 8 reads: a slow client.
struct SlowReader {
    inner: std::net::TcpStream,
    reads: u64,
}

impl Read for SlowReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reads += 1;
        if self.reads.is_multiple_of(8) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let n = buf.len().min(4096);
        self.inner.read(&mut buf[..n])
    }
}

/// A client that dribbles a request head one byte every 200 ms is answered 408 and closed once
/// `--header-timeout` has passed since its first byte, however often bytes arrive.
#[test]
fn a_dribbled_request_head_gets_408_after_the_header_timeout() {
    for_each_model(|model, args| {
        let srv = Server::start(
            model,
            &[args, &["--header-timeout", "1s", "--idle-timeout", "30s"]].concat(),
        );
        let mut s = srv.connect();
        let mut r = s.try_clone().unwrap();
        let t0 = std::time::Instant::now();
        let dribble = std::thread::spawn(move || {
            for b in b"GET / HTTP/1.1\r\nHost: t\r\nX-Slow: "
                .iter()
                .chain(std::iter::repeat(&b'a'))
            {
                if s.write_all(&[*b]).is_err() || t0.elapsed() > Duration::from_secs(8) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        r.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
        let text = String::from_utf8_lossy(&read_to_end_lossy(&mut r)).to_string();
        let took = t0.elapsed();
        assert!(text.starts_with("HTTP/1.1 408"), "{model}: got {text:?} after {took:?}");
        assert!(took < Duration::from_secs(4), "{model}: 408 came after {took:?}");
        dribble.join().unwrap();
        // Others were served meanwhile, and the server is fine.
        let mut s = srv.connect();
        assert_eq!(get(&mut s, &mut Vec::new()).status, 200);
        drop(s);
        let st = srv.stop();
        assert_eq!(st.total("closed_header_timeout"), 1, "{model}");
    });
}

/// A connection silent past `--idle-timeout` is closed by its own timer, on every model:
/// one that never sent a byte, and one whose request moved its deadline later; never before
/// its deadline, and never left open (no sweep comes for it: its timer must).
#[test]
fn silent_connections_are_closed_at_their_own_idle_deadline() {
    for_each_model(|model, args| {
        let srv = Server::start(model, &[args, &["--idle-timeout", "1s"]].concat());
        // Each time taken before what starts the server's clock: the accept, the request read.
        let t0 = std::time::Instant::now();
        let mut quiet = srv.connect();
        let mut s = srv.connect();
        std::thread::sleep(Duration::from_millis(600));
        let asked = std::time::Instant::now();
        assert_eq!(get(&mut s, &mut Vec::new()).status, 200, "{model}");
        for (c, from, what) in [(&mut quiet, t0, "never sent"), (&mut s, asked, "asked once")] {
            c.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
            let rest = read_to_end_lossy(c);
            let took = from.elapsed();
            assert!(rest.is_empty(), "{model}: {what}: {rest:?}");
            assert!(took >= Duration::from_secs(1), "{model}: {what}: closed after {took:?}");
            assert!(
                took < Duration::from_secs(8),
                "{model}: {what}: still open after {took:?}"
            );
        }
        let st = srv.stop();
        assert_eq!(st.total("closed_idle"), 2, "{model}");
    });
}

/// The head timer runs from the first byte of each request head, not of the first request: a
/// pipelining client that answers a request every 300 ms, each write ending one request and
/// starting the next, is never answered 408, though its connection has always had a head
/// pending for far longer than `--header-timeout 1s`.
#[test]
fn a_pipelining_client_that_always_has_the_next_head_pending_is_never_answered_408() {
    for_each_model(|model, args| {
        let srv = Server::start(
            model,
            &[args, &["--header-timeout", "1s", "--idle-timeout", "30s"]].concat(),
        );
        let mut s = srv.connect();
        let mut pending = Vec::new();
        s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\nGET / HT").unwrap();
        for i in 0..9 {
            let r = read_response(&mut s, &mut pending).unwrap().expect("a response");
            assert_eq!(r.status, 200, "{model}: response {i}: {}", r.head);
            std::thread::sleep(Duration::from_millis(300));
            let next: &[u8] = if i < 8 {
                b"TP/1.1\r\nHost: t\r\n\r\nGET / HT"
            } else {
                b"TP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
            };
            s.write_all(next).unwrap_or_else(|e| panic!("{model}: write {i}: {e}"));
        }
        let last = read_response(&mut s, &mut pending).unwrap().expect("the last response");
        assert_eq!(last.status, 200, "{model}: {}", last.head);
        let st = srv.stop();
        assert_eq!(st.total("closed_header_timeout"), 0, "{model}");
        assert_eq!(st.total("requests"), 10, "{model}");
    });
}
