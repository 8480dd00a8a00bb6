//! The proto layer's cost per request, without sockets: an HTTP GET, a POST whose body is
//! echoed, 16 pipelined GETs in one read, and a 128-byte echo, each fed to a session as a
//! network would deliver it. `cargo bench --bench proto` prints nanoseconds per request (noisy
//! on a shared machine: compare runs of one sitting); `scripts/callgrind_proto.sh` runs the same
//! under valgrind and prints instructions per request, which do not move with the noise.
//! `MUXLAB_BENCH_REQUESTS` sets the requests per case (default 2,000,000), `MUXLAB_BENCH_CASE`
//! runs one case only (0..3).

use std::hint::black_box;
use std::time::Instant;

use muxlab::proto::{Proto, Session};

fn main() {
    let requests: u64 = std::env::var("MUXLAB_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let get = b"GET /index.html HTTP/1.1\r\nHost: example.test\r\nUser-Agent: muxlab\r\nAccept: */*\r\n\r\n".to_vec();
    let post = b"POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 64\r\n\r\n"
        .iter()
        .chain([b'x'; 64].iter())
        .copied()
        .collect::<Vec<u8>>();
    let pipelined = get.repeat(16);
    let cases: [(&str, &[u8], Proto, u64); 4] = [
        ("http GET", &get, Proto::Http, 1),
        ("http POST 64 B echoed", &post, Proto::Http, 1),
        ("http 16 pipelined GETs", &pipelined, Proto::Http, 16),
        ("echo 128 B", &[7u8; 128], Proto::Echo, 1),
    ];
    let only: Option<usize> = std::env::var("MUXLAB_BENCH_CASE").ok().and_then(|v| v.parse().ok());
    println!("{:<26} {:>12} {:>14}", "case", "requests", "ns/request");
    for (i, (name, input, proto, per_feed)) in cases.into_iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let mut s = Session::new(proto);
        let mut out = Vec::with_capacity(1 << 16);
        for _ in 0..1000 {
            out.clear();
            s.feed(input, &mut out);
        }
        let feeds = (requests / per_feed).max(1);
        let t0 = Instant::now();
        let mut answered = 0;
        for _ in 0..feeds {
            out.clear();
            answered += s.feed(black_box(input), &mut out).requests;
        }
        let ns = t0.elapsed().as_nanos() as f64 / answered.max(1) as f64;
        assert_eq!(answered, feeds * per_feed, "{name}: every request answered");
        println!("{name:<26} {answered:>12} {ns:>14.1}");
    }
}
