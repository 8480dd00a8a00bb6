//! No allocation per request: with a counting allocator, the HTTP and echo sessions and a whole
//! epoll event loop (server in this process, counted; client not) serve keep-alive requests
//! without allocating once warmed up.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use muxlab::proto::{Proto, Protocol, Session};
use muxlab::sys::alloc::{allocations, count_this_thread, Counting};

#[global_allocator]
static ALLOC: Counting = Counting;

/// The counter is process-wide: one test at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

const REQUEST: &[u8] = b"GET /index.html HTTP/1.1\r\nHost: t\r\nUser-Agent: muxlab\r\nAccept: */*\r\n\r\n";

#[test]
fn sessions_answer_keep_alive_requests_without_allocating() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    std::thread::spawn(|| {
        count_this_thread();
        let mut out = Vec::with_capacity(64 * 1024);
        let mut http = Session::new(Proto::Http);
        let post = b"POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world";
        let mut echo = Session::new(Proto::Echo);
        let mut run = |n: usize| {
            for _ in 0..n {
                out.clear();
                assert_eq!(http.feed(REQUEST, &mut out).requests, 1);
                // Split mid-head, as a network does.
                out.clear();
                http.feed(&REQUEST[..20], &mut out);
                assert_eq!(http.feed(&REQUEST[20..], &mut out).requests, 1);
                out.clear();
                assert_eq!(http.feed(post, &mut out).requests, 1);
                assert!(out.ends_with(b"hello world"));
                out.clear();
                echo.feed(&[7u8; 128], &mut out);
            }
        };
        run(100);
        let before = allocations();
        run(10_000);
        let made = allocations() - before;
        assert_eq!(made, 0, "{made} allocations in 10,000 rounds of 4 requests");
    })
    .join()
    .unwrap();
}

/// HTTP/2: GETs on new streams (their fields added to the dynamic table, so it evicts and
/// compacts), and echoed POSTs, allocate nothing once the session has warmed up.
#[test]
fn the_h2_session_answers_streams_without_allocating() {
    use muxlab::peer::h2::wire::{self, Coding};
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Every round's frames, built before counting starts.
    let mut rounds = Vec::new();
    let mut id = 1u32;
    for k in 0..10_100u32 {
        let mut b = Vec::new();
        let agent = format!("muxlab/{}", k % 97);
        let get = wire::request_block("GET", "/index.html", &[("user-agent", &agent)], Coding::Indexed);
        wire::headers(&mut b, id, &get, true);
        let post = wire::request_block("POST", "/up", &[("content-length", "11")], Coding::Plain);
        wire::headers(&mut b, id + 2, &post, false);
        wire::data(&mut b, id + 2, b"hello ", false);
        wire::data(&mut b, id + 2, b"world", true);
        // The client grants back the 29 bytes of DATA the round's responses take.
        wire::window_update(&mut b, 0, 29);
        rounds.push(b);
        id += 4;
    }
    let mut start = Vec::new();
    wire::preface(&mut start);
    std::thread::spawn(move || {
        count_this_thread();
        let mut out = Vec::with_capacity(64 * 1024);
        let mut s = Session::new(Proto::H2);
        s.feed(&start, &mut out);
        let mut run = |rounds: &[Vec<u8>]| {
            for r in rounds {
                out.clear();
                // Split mid-frame, as a network does.
                s.feed(&r[..30], &mut out);
                assert_eq!(s.feed(&r[30..], &mut out).requests, 2);
                assert!(
                    out.windows(5).any(|w| w == b"world"),
                    "the echo: {:?}",
                    wire::read(&out)
                );
            }
        };
        run(&rounds[..100]);
        let before = allocations();
        run(&rounds[100..]);
        let made = allocations() - before;
        assert_eq!(made, 0, "{made} allocations in 10,000 rounds of 2 h2 requests");
    })
    .join()
    .unwrap();
}

#[test]
fn an_epoll_loop_serves_keep_alive_without_allocating_per_request() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The server runs on a thread of this process, its allocations counted.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let server = std::thread::spawn(move || {
        count_this_thread();
        struct Lines(std::sync::mpsc::Sender<String>, Vec<u8>);
        impl Write for Lines {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.1.extend_from_slice(b);
                while let Some(i) = self.1.iter().position(|&c| c == b'\n') {
                    let line: Vec<u8> = self.1.drain(..=i).collect();
                    let _ = self.0.send(String::from_utf8_lossy(&line).into_owned());
                }
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let model = muxlab::models::find("epoll").unwrap();
        let cfg = <muxlab::server::ServeArgs as clap::FromArgMatches>::from_arg_matches(
            &<muxlab::server::ServeArgs as clap::Args>::augment_args(clap::Command::new("t"))
                .get_matches_from(["t", "--port", "0"]),
        )
        .unwrap();
        muxlab::server::serve(model, cfg, &mut Lines(tx, Vec::new())).unwrap();
    });
    let listening: serde_json::Value = serde_json::from_str(&rx.recv().unwrap()).unwrap();
    let addr = listening["addr"].as_str().unwrap().to_string();
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 4096];
    let mut round = |s: &mut TcpStream| {
        s.write_all(REQUEST).unwrap();
        let mut got = 0;
        // The response is 122 bytes: head + "<html>hello</html>".
        while got < 122 {
            got += s.read(&mut buf[got..]).unwrap();
        }
    };
    for _ in 0..200 {
        round(&mut s);
    }
    let before = allocations();
    for _ in 0..10_000 {
        round(&mut s);
    }
    let made = allocations() - before;
    drop(s);
    // Stop the server (its stop flag is set by SIGTERM, as from the outside).
    muxlab::sys::process::kill(muxlab::sys::process::pid(), muxlab::sys::signal::SIGTERM).unwrap();
    server.join().unwrap();
    assert_eq!(
        made, 0,
        "the epoll loop allocated {made} times in 10,000 keep-alive requests"
    );
}

/// Keyed commands (RESP and memcache) against an owned store: reads, writes of a value the
/// size of the one they replace, increments, many-key reads and their replies allocate
/// nothing once warm (numbers are written without a String, command names compared without
/// an upper-case copy).
#[test]
fn keyed_sessions_answer_commands_without_allocating() {
    use muxlab::proto::keyed::{Op, Outcome, Replies};
    use muxlab::proto::{Answer, Each, Request};
    use muxlab::store::{Bounds, Kind, Store};
    struct Over(Store);
    impl Each for Over {
        fn request(&mut self, _: Request<'_>, _: &mut Vec<u8>) -> Answer {
            Answer::Serve
        }
        fn command(&mut self, op: Op<'_>, r: &mut dyn Replies) -> Outcome {
            self.0.run(op, r)
        }
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    std::thread::spawn(|| {
        count_this_thread();
        let mut each = Over(Store::new(Kind::Owned, 1, Bounds::default()));
        let mut out = Vec::with_capacity(64 * 1024);
        let mut resp = Session::new(Proto::Resp);
        let mut mc = Session::new(Proto::Memcache);
        let commands: &[u8] = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n*2\r\n$3\r\nget\r\n$3\r\nkey\r\n\
INCR n\r\nINCRBY n -7\r\nMGET key n nope\r\nPING\r\nEXISTS key n\r\nDBSIZE\r\n";
        let mc_commands: &[u8] = b"set m 5 0 5\r\nvalue\r\nget m key\r\ngets m\r\nincr c 3\r\ntouch m 0\r\n";
        let mut run = |n: usize| {
            for _ in 0..n {
                out.clear();
                assert_eq!(resp.feed_each(commands, &mut out, &mut each).requests, 8);
                out.clear();
                assert_eq!(mc.feed_each(mc_commands, &mut out, &mut each).requests, 5);
            }
        };
        run(100);
        let before = allocations();
        run(10_000);
        let made = allocations() - before;
        assert_eq!(made, 0, "{made} allocations in 10,000 rounds of 13 commands");
    })
    .join()
    .unwrap();
}
