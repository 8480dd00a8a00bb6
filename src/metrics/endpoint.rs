//! The scrape endpoint: a thread of its own answering `GET /metrics` on its own socket, one
//! scrape at a time, so a scraper (or a client that connects and sends nothing) never touches
//! the threads that serve or send load: they only count, in memory the render reads.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::exposition::Format;

/// How long a scrape's request may take to arrive (all of it: a client trickling its head
/// holds the endpoint this long at most), and its response to leave.
const PATIENCE: Duration = Duration::from_secs(2);

/// The most a request's head may hold.
const HEAD: usize = 8 * 1024;

/// A running endpoint: where it answers, and how many scrapes it has answered.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub addr: SocketAddr,
    scrapes: Arc<Scrapes>,
}

/// Scrapes of `/metrics` begun (their request read) and answered: one at a time, so the
/// scrape that began `n`-th is answered once `answered` reaches `n`.
#[derive(Debug, Default)]
struct Scrapes {
    begun: AtomicU64,
    answered: AtomicU64,
}

impl Endpoint {
    /// Scrapes answered so far.
    pub fn scrapes(&self) -> u64 {
        self.scrapes.answered.load(Ordering::Acquire)
    }

    /// After a run: waits until a scrape begun from now has been answered (the scraper has
    /// read the final figures), for at most `most`. Returns whether one was.
    pub fn linger(&self, most: Duration) -> bool {
        let begun = self.scrapes.begun.load(Ordering::Acquire);
        let until = std::time::Instant::now() + most;
        while std::time::Instant::now() < until {
            if self.scrapes() > begun {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

/// Binds `addr` and answers scrapes there from a thread of its own until the process ends:
/// `render` writes the body in the format asked for.
pub fn start<R>(addr: SocketAddr, render: R) -> std::io::Result<Endpoint>
where
    R: Fn(Format) -> String + Send + 'static,
{
    let listener = bind(addr)?;
    let bound = listener.local_addr()?;
    let scrapes = Arc::new(Scrapes::default());
    let counted = scrapes.clone();
    std::thread::Builder::new().name("metrics".into()).spawn(move || {
        for conn in listener.incoming() {
            match conn {
                Ok(c) => {
                    if answer(c, &render, &counted.begun) {
                        counted.answered.fetch_add(1, Ordering::Release);
                    }
                }
                // Out of descriptors, say: the next scrape tries again.
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    })?;
    Ok(Endpoint { addr: bound, scrapes })
}

/// The endpoint's socket, bound (an error here is the caller's to report: the address taken).
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr)
}

/// Answers scrapes on `listener` from this thread, looking at `stop` at least every tenth of a
/// second, until it says so: a process of its own (a server's, which keeps its own process
/// to its loops' threads) serves this way.
pub fn serve_until(listener: TcpListener, render: impl Fn(Format) -> String, stop: impl Fn() -> bool) {
    use std::os::fd::AsFd;
    // accept() honours SO_RCVTIMEO: it returns EAGAIN when it passes.
    let _ = crate::sys::socket::set_read_timeout(listener.as_fd(), Duration::from_millis(100));
    let begun = AtomicU64::new(0);
    while !stop() {
        if let Ok((c, _)) = listener.accept() {
            answer(c, &render, &begun);
        }
    }
}

/// Reads one request and answers it (`true`: with the metrics); the connection closes after.
fn answer(mut c: TcpStream, render: &impl Fn(Format) -> String, begun: &AtomicU64) -> bool {
    let _ = c.set_write_timeout(Some(PATIENCE));
    let Some(head) = read_head(&mut c) else {
        respond(
            &mut c,
            "400 Bad Request",
            "text/plain",
            "a request head did not arrive whole\n",
            false,
        );
        return false;
    };
    match route(&head) {
        Route::Metrics {
            format,
            head_only: false,
        } => {
            begun.fetch_add(1, Ordering::AcqRel);
            let body = render(format);
            respond(&mut c, "200 OK", format.content_type(), &body, false);
            true
        }
        Route::Metrics {
            format,
            head_only: true,
        } => {
            let body = render(format);
            respond(&mut c, "200 OK", format.content_type(), &body, true);
            false
        }
        Route::Refused(status, why) => {
            respond(&mut c, status, "text/plain", why, false);
            false
        }
    }
}

/// What a request asks for.
#[derive(Debug, PartialEq)]
enum Route {
    Metrics { format: Format, head_only: bool },
    Refused(&'static str, &'static str),
}

fn route(head: &str) -> Route {
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    if path != "/metrics" {
        return Route::Refused("404 Not Found", "metrics are at /metrics\n");
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Route::Refused("405 Method Not Allowed", "GET /metrics\n"),
    };
    let accept = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("accept"))
        .map(|(_, v)| v.trim());
    Route::Metrics {
        format: Format::from_accept(accept),
        head_only,
    }
}

/// The request's head, up to its blank line: `None` when it does not come whole within
/// [`PATIENCE`] of the connection's start.
fn read_head(c: &mut TcpStream) -> Option<String> {
    let until = std::time::Instant::now() + PATIENCE;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let left = until.checked_duration_since(std::time::Instant::now())?;
        if buf.len() >= HEAD || left.is_zero() || c.set_read_timeout(Some(left)).is_err() {
            return None;
        }
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    String::from_utf8(buf).ok()
}

fn respond(c: &mut TcpStream, status: &str, kind: &str, body: &str, head_only: bool) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = c.write_all(head.as_bytes());
    if !head_only {
        let _ = c.write_all(body.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(request.as_bytes()).unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn a_scrape_gets_the_render_in_the_format_its_accept_names_and_other_paths_are_refused() {
        let e = start("127.0.0.1:0".parse().unwrap(), |f| format!("{f:?}\n")).unwrap();
        let addr = e.addr;
        let text = get(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains("Content-Type: text/plain; version=0.0.4"), "{text}");
        assert!(text.ends_with("\r\n\r\nText\n"), "{text}");
        let om = get(
            addr,
            "GET /metrics?x=1 HTTP/1.1\r\naccept: application/openmetrics-text; version=1.0.0\r\n\r\n",
        );
        assert!(om.ends_with("\r\n\r\nOpenMetrics\n"), "{om}");
        assert!(get(addr, "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(addr, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        let head = get(addr, "HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
        assert_eq!(e.scrapes(), 2, "the two GETs of /metrics are the scrapes counted");
    }

    #[test]
    fn a_client_that_sends_nothing_holds_the_endpoint_only_until_its_patience_ends() {
        let addr = start("127.0.0.1:0".parse().unwrap(), |_| "ok\n".into()).unwrap().addr;
        let _silent = TcpStream::connect(addr).unwrap();
        let next = get(addr, "GET /metrics HTTP/1.1\r\n\r\n");
        assert!(next.ends_with("\r\n\r\nok\n"), "{next}");
        // A head past the bound is refused (the rest of it unread: the refusal may come as a reset).
        let mut c = TcpStream::connect(addr).unwrap();
        let _ = c.write_all(format!("GET /metrics HTTP/1.1\r\nX: {}", "a".repeat(HEAD)).as_bytes());
        let mut s = String::new();
        let _ = c.read_to_string(&mut s);
        assert!(s.is_empty() || s.starts_with("HTTP/1.1 400"), "{s}");
    }

    #[test]
    fn lingering_ends_once_a_scrape_begun_after_the_end_is_answered_or_the_time_is_up() {
        let e = start("127.0.0.1:0".parse().unwrap(), |_| "ok\n".into()).unwrap();
        assert!(!e.linger(Duration::from_millis(50)), "no scrape came: the time is up");
        // A scraper that goes on scraping: one of its scrapes begins after the call.
        let (addr, stop) = (e.addr, std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)));
        let going = stop.clone();
        let scraper = std::thread::spawn(move || {
            while !going.load(Ordering::Relaxed) {
                assert!(get(addr, "GET /metrics HTTP/1.1\r\n\r\n").ends_with("ok\n"));
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let before = e.scrapes();
        assert!(e.linger(Duration::from_secs(60)), "the scrape after the end was seen");
        assert!(e.scrapes() > before);
        stop.store(true, Ordering::Relaxed);
        scraper.join().unwrap();
    }

    #[test]
    fn a_client_trickling_its_head_holds_the_endpoint_only_until_its_patience_ends() {
        let addr = start("127.0.0.1:0".parse().unwrap(), |_| "ok\n".into()).unwrap().addr;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let going = stop.clone();
        let trickler = std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            // A byte every 300 ms: each read is well within the patience, the head never ends.
            while !going.load(Ordering::Relaxed) && c.write_all(b"G").is_ok() {
                std::thread::sleep(Duration::from_millis(300));
            }
        });
        std::thread::sleep(Duration::from_millis(100));
        // Before the endpoint gave each request a deadline of its own, this scrape waited
        // behind the trickle for an hour (8 KiB at 300 ms a byte): the read times out here.
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        let mut s = String::new();
        let read = c.read_to_string(&mut s);
        stop.store(true, Ordering::Relaxed);
        trickler.join().unwrap();
        assert!(read.is_ok() && s.ends_with("ok\n"), "{read:?} {s}");
    }

    #[test]
    fn an_address_in_use_is_an_error_at_start() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(start(taken.local_addr().unwrap(), |_| String::new()).is_err());
    }
}
