//! Test harness shared by the integration suites: start `muxlab serve` as a real process,
//! talk to it with plain blocking sockets, stop it with SIGTERM and check it left nothing behind.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use muxlab::sys;
use serde_json::Value;

pub mod bench_files;
pub mod certs;
pub mod golden;
pub mod lab;
pub mod nginx;
pub mod skip;
pub mod stores;

pub use skip::skip;

/// Whether `tool` runs here; says so (and fails under CI) when it does not.
pub fn have(tool: &str, package: &str) -> bool {
    let ok = std::process::Command::new(tool).arg("--version").output().is_ok();
    if !ok {
        skip(&format!(
            "{tool} is not installed (apt-get install {package}; .ci/run does)"
        ));
    }
    ok
}

pub const BIN: &str = env!("CARGO_BIN_EXE_muxlab");

/// Runs `muxlab load ARGS --json`; returns (exit code, document, stderr).
pub fn load(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(BIN).arg("load").args(args).arg("--json").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON from load {args:?} ({e}): {}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (out.status.code().unwrap_or(-1), doc, stderr)
}

pub const IO_TIMEOUT: Duration = Duration::from_secs(20);

/// A running `muxlab serve`.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub model: String,
    /// Its listening line.
    pub listening: Value,
    stdout: BufReader<ChildStdout>,
    /// Started with `--tls`: [`Server::stream`] speaks TLS.
    pub tls: bool,
}

/// A client connection: plain TCP, or TLS over it (to a server started with `--tls`).
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    /// The TCP socket underneath.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => &t.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

/// What a stopped server reported.
pub struct Stopped {
    pub stats: Value,
    pub stderr: String,
}

impl Stopped {
    pub fn total(&self, name: &str) -> u64 {
        self.stats["totals"][name]
            .as_u64()
            .unwrap_or_else(|| panic!("stats has no totals.{name}: {}", self.stats))
    }
}

impl Server {
    /// `http://ADDR/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Starts `model` with `args` on a free port and waits for its listening line.
    pub fn start(model: &str, args: &[&str]) -> Server {
        Server::start_under(&[], model, args)
    }

    /// The same, run through `prefix` (e.g. `ip netns exec NS`, which execs: the pid is the
    /// server's).
    pub fn start_under(prefix: &[&str], model: &str, args: &[&str]) -> Server {
        Server::launch(BIN, prefix, model, args)
    }

    /// Starts another build of muxlab (`bin`): what a probe measures a change against.
    pub fn start_bin(bin: &str, model: &str, args: &[&str]) -> Server {
        Server::launch(bin, &[], model, args)
    }

    fn launch(bin: &str, prefix: &[&str], model: &str, args: &[&str]) -> Server {
        let mut cmd = match prefix.split_first() {
            Some((p, rest)) => {
                let mut c = Command::new(p);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        let mut child = cmd
            .args(["serve", "--model", model, "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start muxlab serve");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read the listening line");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("{model}: no listening line ({e}): stdout {line:?}, stderr {err:?}")
        });
        assert_eq!(v["event"], "listening", "{model}: {v}");
        assert_eq!(v["model"], model);
        assert!(v["pid"].as_u64().unwrap() > 0 && v["workers"].as_u64().unwrap() >= 1);
        let addr = v["addr"].as_str().unwrap().parse().unwrap();
        Server {
            child,
            addr,
            model: model.to_string(),
            listening: v,
            stdout,
            tls: args.contains(&"--tls"),
        }
    }

    /// A client connection that speaks what the server speaks (TLS after `--tls`; the
    /// handshake is done before this returns).
    pub fn stream(&self) -> Stream {
        let tcp = self.connect();
        if !self.tls {
            return Stream::Plain(tcp);
        }
        let cfg = muxlab::load::tls_client(true, None, false, false).expect("TLS client configuration");
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let conn = rustls::ClientConnection::new(cfg, name).unwrap();
        let mut t = rustls::StreamOwned::new(conn, tcp);
        while t.conn.is_handshaking() {
            t.conn
                .complete_io(&mut t.sock)
                .unwrap_or_else(|e| panic!("{}: TLS handshake: {e}", self.model));
        }
        Stream::Tls(Box::new(t))
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap_or_else(|e| {
            let alive = alive(self.pid());
            let status = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap_or_default();
            panic!(
                "{}: connect to {}: {e} (server process alive: {alive}; {status})",
                self.model, self.addr
            )
        });
        s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        s.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        s.set_nodelay(true).unwrap();
        s
    }

    /// SIGTERM, then checks the contract: exit 0, a stats line, no process of the server's tree
    /// left running, nothing listening on its port.
    pub fn stop(mut self) -> Stopped {
        let tree = sys::procfs::tree(self.pid());
        sys::process::kill(self.pid(), sys::signal::SIGTERM).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            assert!(
                Instant::now() < deadline,
                "{}: did not exit within 20 s of SIGTERM",
                self.model
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        let mut stderr = String::new();
        self.child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        assert!(
            status.success(),
            "{}: exit status {status} after SIGTERM; stderr: {stderr}",
            self.model
        );
        let stats: Value = rest
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["event"] == "stats")
            .unwrap_or_else(|| panic!("{}: no stats line in {rest:?}", self.model));
        assert_eq!(stats["ok"], true, "{}: {stats}", self.model);
        for pid in tree.iter().skip(1) {
            assert!(!alive(*pid), "{}: process {pid} outlived the server", self.model);
        }
        // Nothing of the server listens there any more (another test may have been given the
        // same port since: that is not the server's).
        if TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok() {
            let owner = sys::procfs::listening_pid(self.addr.port());
            assert!(
                owner.is_none_or(|p| !tree.contains(&p)),
                "{}: still listening (pid {owner:?})",
                self.model
            );
        }
        Stopped { stats, stderr }
    }
}

/// A test that fails before `stop` must not leave its server behind.
impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `true` if `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// One parsed HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

/// Reads one response (head + Content-Length body; `head_only` for a reply to HEAD).
/// `None` at a clean EOF before any byte.
pub fn read_response_to(
    r: &mut impl Read,
    pending: &mut Vec<u8>,
    head_only: bool,
) -> std::io::Result<Option<Response>> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = find(pending, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end]).to_string();
            let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            let want = end + 4 + if head_only { 0 } else { len };
            while pending.len() < want {
                let n = r.read(&mut buf)?;
                if n == 0 {
                    return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "EOF in body"));
                }
                pending.extend_from_slice(&buf[..n]);
            }
            let body = pending[end + 4..want].to_vec();
            pending.drain(..want);
            return Ok(Some(Response { status, head, body }));
        }
        let n = r.read(&mut buf)?;
        if n == 0 {
            return if pending.is_empty() {
                Ok(None)
            } else {
                Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "EOF in head"))
            };
        }
        pending.extend_from_slice(&buf[..n]);
    }
}

pub fn read_response(r: &mut impl Read, pending: &mut Vec<u8>) -> std::io::Result<Option<Response>> {
    read_response_to(r, pending, false)
}

pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Sends one request and reads one response on a keep-alive connection.
pub fn get(s: &mut (impl Read + Write), pending: &mut Vec<u8>) -> Response {
    s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    read_response(s, pending).unwrap().expect("a response")
}

/// Reads until EOF; returns what arrived (an error such as a reset ends it too).
pub fn read_to_end_lossy(s: &mut impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}

/// Every registered model with its test arguments (two workers where it has workers).
/// `MUXLAB_TEST_MODELS=uring,epoll` narrows the model tests to those named, for working on one
/// model: an empty list or a name that is no model fails (a misspelt list must not test
/// nothing), and the models left out count as skipped (so CI, which forbids skips, runs them all).
pub fn models() -> Vec<(&'static str, Vec<&'static str>)> {
    let only = std::env::var("MUXLAB_TEST_MODELS").ok();
    let known: Vec<&str> = muxlab::models::ALL.iter().map(|m| m.name).collect();
    if let Some(list) = &only {
        let names: Vec<&str> = list.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
        assert!(
            !names.is_empty(),
            "MUXLAB_TEST_MODELS is set but names no model: unset it, or name some of {}",
            known.join(",")
        );
        let unknown: Vec<&&str> = names.iter().filter(|n| !known.contains(n)).collect();
        assert!(
            unknown.is_empty(),
            "MUXLAB_TEST_MODELS names {unknown:?}, which are not models: the models are {}",
            known.join(",")
        );
        let left_out: Vec<&&str> = known.iter().filter(|k| !names.contains(k)).collect();
        if !left_out.is_empty() {
            skip(&format!("MUXLAB_TEST_MODELS leaves out {left_out:?}"));
        }
    }
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o.split(',').any(|n| n.trim() == name));
    muxlab::models::ALL
        .iter()
        .filter(|m| wanted(m.name))
        .map(|m| {
            (
                m.name,
                if m.workers == muxlab::server::Workers::None {
                    vec![]
                } else {
                    vec!["--workers", "2"]
                },
            )
        })
        .collect()
}

/// Runs `f` for every model, all models in parallel threads, and reports every failure by model.
/// [`for_each_model`], then again with every server behind TLS (`--tls self-signed`): the
/// HTTP cases hold over HTTPS too.
pub fn for_each_model_and_over_tls(f: impl Fn(&str, &[&str]) + Sync) {
    for_each_model(&f);
    for_each_model(|model, args| {
        let mut args = args.to_vec();
        args.extend(["--tls", "self-signed"]);
        f(model, &args)
    });
}

pub fn for_each_model(f: impl Fn(&str, &[&str]) + Sync) {
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = models()
            .into_iter()
            .map(|(name, args)| {
                let f = &f;
                (name, s.spawn(move || f(name, &args)))
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|(name, h)| {
                h.join().err().map(|e| {
                    let msg = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
                    format!("{name}: {}", msg.unwrap_or_default())
                })
            })
            .collect()
    });
    assert!(
        failures.is_empty(),
        "failed for {} model(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Proportional set size (KiB) of a process tree: shared pages (a forked child's copy of its
/// parent) are divided among the processes sharing them, so the sum is what the tree costs.
pub fn tree_pss_kib(pid: i32) -> u64 {
    muxlab::sys::procfs::tree(pid)
        .into_iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/smaps_rollup")).ok())
        .filter_map(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .sum()
}
