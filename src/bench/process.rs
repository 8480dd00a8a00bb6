//! Process control for one cell: start a model (`muxlab serve`, pinned) or nginx (one worker,
//! generated config) and wait until it accepts; stop it (SIGTERM / SIGQUIT), read its stats line
//! and check that it exited cleanly and left no process behind.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::Error;
use super::scenario::{model_name, Experiment};
use crate::sys;

/// Where cells run.
pub struct Placement {
    pub server_cpus: String,
    pub client_cpus: String,
    pub client_threads: usize,
}

/// A started server.
pub(super) struct Server {
    pub(super) child: Option<Child>,
    pub(super) pid: i32,
    pub(super) addr: SocketAddr,
    pub(super) lines: Option<Receiver<String>>,
    /// Temporary directory (nginx's config and pid file).
    pub(super) dir: Option<PathBuf>,
}

pub(super) fn exe() -> Result<PathBuf, Error> {
    std::env::current_exe().map_err(|e| Error::Cell(format!("cannot find the muxlab binary: {e}")))
}

/// Reads `out` line by line on a thread, so the caller can wait with a timeout.
pub(super) fn line_reader(out: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

pub(super) fn start_model(entry: &str, x: &Experiment, place: &Placement) -> Result<Server, Error> {
    let mut args: Vec<String> = vec!["serve".into(), "--model".into(), model_name(entry).into()];
    args.extend(entry.split_whitespace().skip(1).map(String::from));
    args.extend([
        "--proto".into(),
        x.proto.clone(),
        "--port".into(),
        "0".into(),
        "--cpus".into(),
        place.server_cpus.clone(),
    ]);
    let model = crate::models::find(model_name(entry)).ok_or_else(|| format!("unknown model in '{entry}'"))?;
    if let Some(w) = x.workers {
        if model.workers != crate::server::Workers::None && !entry.contains("--workers") {
            args.extend(["--workers".into(), w.to_string()]);
        }
    }
    if let Some(w) = &x.work {
        args.extend(["--work".into(), w.clone()]);
    }
    if x.proto == "packet" {
        args.extend(["--packet-size".into(), x.size.unwrap_or(100).to_string()]);
    }
    let mut child = Command::new(exe()?)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting the server: {e}"))?;
    let lines = line_reader(child.stdout.take().expect("piped"));
    let listening = lines.recv_timeout(Duration::from_secs(15)).ok();
    let v: Value = listening
        .as_deref()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    if v["event"] != "listening" {
        let _ = child.kill();
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let _ = child.wait();
        return Err(Error::Cell(format!("server did not start: {}", err.trim())));
    }
    let addr = v["addr"]
        .as_str()
        .and_then(|a| a.parse().ok())
        .ok_or("bad listening line")?;
    Ok(Server {
        pid: child.id() as i32,
        child: Some(child),
        addr,
        lines: Some(lines),
        dir: None,
    })
}

pub(super) fn free_port() -> Result<u16, Error> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// nginx with one worker, pinned like the models, answering the same body.
pub(super) fn start_nginx(x: &Experiment, place: &Placement) -> Result<Server, Error> {
    if x.proto != "http" {
        return Err(Error::Cell(format!(
            "skipped: the nginx peer speaks http, not {}",
            x.proto
        )));
    }
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(nginx) = nginx else {
        return Err("skipped: nginx is not installed (apt-get install nginx-light)".into());
    };
    let port = free_port()?;
    let dir = std::env::temp_dir().join(format!("muxlab-nginx-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let conf = format!(
        "worker_processes 1; daemon off; master_process on; pid {d}/nginx.pid; error_log {d}/error.log;\n\
         worker_rlimit_nofile 20000;\n\
         events {{ worker_connections 19000; }}\n\
         http {{ access_log off; keepalive_requests 100000000; keepalive_timeout 60s;\n\
           server {{ listen 127.0.0.1:{port} backlog=1024 reuseport; location / {{ default_type text/html; return 200 \"<html>hello</html>\"; }} }} }}\n",
        d = dir.display()
    );
    std::fs::write(dir.join("nginx.conf"), conf).map_err(|e| e.to_string())?;
    let child = Command::new("taskset")
        .args(["-c", &place.server_cpus, nginx, "-c"])
        .arg(dir.join("nginx.conf"))
        .arg("-p")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting nginx: {e}"))?;
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("valid");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(addr).is_err() {
        if Instant::now() > deadline {
            return Err(Error::Cell(format!(
                "nginx did not start; see {}/error.log",
                dir.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Server {
        pid: child.id() as i32,
        child: Some(child),
        addr,
        lines: None,
        dir: Some(dir),
    })
}

/// Stops a server; returns its stats line (models) and an error if it did not end cleanly.
pub(super) fn stop(mut s: Server) -> (Value, Result<(), Error>) {
    let tree = sys::procfs::tree(s.pid);
    let Some(mut child) = s.child.take() else {
        return (Value::Null, Ok(()));
    };
    let is_peer = s.dir.is_some();
    // Already gone? Then it crashed during the cell.
    if let Ok(Some(st)) = child.try_wait() {
        return (
            Value::Null,
            Err(Error::Cell(format!("the server died during the cell ({st})"))),
        );
    }
    let _ = sys::process::kill(s.pid, if is_peer { libc::SIGQUIT } else { sys::signal::SIGTERM });
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stats = Value::Null;
    if let Some(lines) = s.lines.take() {
        while let Ok(l) = lines.recv_timeout(Duration::from_millis(500)) {
            if let Ok(v) = serde_json::from_str::<Value>(&l) {
                if v["event"] == "stats" {
                    stats = v;
                }
            }
        }
    }
    if let Some(d) = s.dir.take() {
        let _ = std::fs::remove_dir_all(d);
    }
    let leftovers: Vec<i32> = tree
        .into_iter()
        .skip(1)
        .filter(|p| sys::procfs::sample(*p).is_ok_and(|_| is_running(*p)))
        .collect();
    let verdict = match status {
        None => Err(Error::Cell(
            "the server did not stop within 20 s of SIGTERM (killed)".into(),
        )),
        Some(st) if !st.success() && !is_peer => Err(Error::Cell(format!("the server exited with {st}"))),
        Some(_) if !leftovers.is_empty() => Err(Error::Cell(format!("processes left behind: {leftovers:?}"))),
        Some(_) if !is_peer && stats.is_null() => Err("no stats line".into()),
        Some(_) => Ok(()),
    };
    (stats, verdict)
}

pub(super) fn is_running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')))
}
