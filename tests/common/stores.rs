//! The real keyed stores, Debian's redis-server and memcached, started on a free loopback port
//! for a test and killed when it ends.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running redis-server or memcached.
pub struct Store {
    child: Child,
    pub port: u16,
}

impl Store {
    /// redis-server with `extra` arguments (no persistence), if installed (else the test is a
    /// visible skip, a failure under CI).
    pub fn redis(extra: &[&str]) -> Option<Store> {
        if !super::have("redis-server", "redis-server") {
            return None;
        }
        Some(Store::start("redis-server", |port| {
            let mut a: Vec<String> = [
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
                "--bind",
                "127.0.0.1",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        }))
    }

    /// memcached with `extra` arguments, if installed.
    pub fn memcached(extra: &[&str]) -> Option<Store> {
        if !super::have("memcached", "memcached") {
            return None;
        }
        Some(Store::start("memcached", |port| {
            let mut a: Vec<String> = ["-p", &port.to_string(), "-U", "0", "-l", "127.0.0.1", "-u", "root"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        }))
    }

    fn start(bin: &str, args: impl Fn(u16) -> Vec<String>) -> Store {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(bin)
            .args(args(port))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {bin}: {e}"));
        let t0 = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "{bin} did not listen on {port} in 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Store { child, port }
    }

    /// `resp://…` or `memcache://…` of this store.
    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}", self.port)
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
