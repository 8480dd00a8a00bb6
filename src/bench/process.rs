//! Process control for one cell: start a model (`muxlab serve`, pinned; nginx is in `nginx`)
//! and wait until it accepts; stop it (SIGTERM / SIGQUIT), read its stats line and check that
//! it exited cleanly and left no process behind (what is left is killed: see `own`).

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::error::Error;
use super::own::{descendants, kill_all, snapshot};
use crate::bench::record::scenario::Experiment;
use crate::server::stats::{Listening, StatsLine};
use crate::sys;

/// Where cells run.
#[derive(Clone)]
pub struct Placement {
    pub server_cpus: String,
    /// The CPUs of the targets that serve on several threads (`threaded_cpus`, `"all"` read as
    /// this machine's list); `None`: every target on `server_cpus`.
    pub threaded_cpus: Option<String>,
    pub client_cpus: String,
    pub client_threads: usize,
    /// The address servers listen on and clients connect to.
    pub server_addr: String,
    /// Other hosts the scenario names (none: everything runs here).
    pub hosts: Option<std::sync::Arc<super::hosts::Hosts>>,
    /// The loopback round trip between the server's and the client's CPUs, measured once the
    /// run holds what it holds (idle CPUs polling or not); each cell's card reads it.
    pub round_trip: Option<super::record::costs::RoundTrip>,
}

impl Placement {
    /// Whether the server runs on another host.
    pub fn remote_server(&self) -> bool {
        self.hosts.as_ref().is_some_and(|h| h.server.is_some())
    }

    /// Where `target` of `x` runs: on `threaded_cpus` where it serves on more than one thread
    /// and the scenario sets them, else as every target does.
    pub fn of_target(&self, x: &Experiment, target: &super::runner::Target) -> Placement {
        let wide = self
            .threaded_cpus
            .as_ref()
            .filter(|_| !self.remote_server())
            .filter(|cpus| target_threads(x, target, cpus) > 1);
        match wide {
            Some(cpus) => Placement {
                server_cpus: cpus.clone(),
                ..self.clone()
            },
            None => self.clone(),
        }
    }
}

/// The threads that serve requests in `target` of `x` on `cpus`: a peer's, or a model's
/// workers and the threads it runs beside them (io-threads' executor).
pub(super) fn target_threads(x: &Experiment, target: &super::runner::Target, cpus: &str) -> usize {
    match target {
        super::runner::Target::Peer(p) => {
            let n = crate::units::parse_cpus(cpus).map_or(1, |c| c.len());
            crate::bench::record::peer::Peer::parse(p).map_or(1, |p| p.threads(x.workers, n))
        }
        super::runner::Target::External(_) => 1,
        t => {
            let entry = t.model_entry().expect("a model target");
            let Ok((model, args)) = crate::bench::record::serve_line(entry, x, "127.0.0.1", cpus) else {
                return 1;
            };
            let n = crate::units::parse_cpus(cpus).map_or(1, |c| c.len());
            model.worker_count(args.workers, n) + model.extra_threads
        }
    }
}

/// A started server.
pub(super) struct Server {
    pub(super) child: Option<Child>,
    pub(super) pid: i32,
    pub(super) addr: SocketAddr,
    pub(super) lines: Option<Receiver<String>>,
    /// Temporary directory (nginx's config and pid file).
    pub(super) dir: Option<PathBuf>,
    /// The ssh session of a server on another host.
    pub(super) session: Option<crate::remote::ssh::Session>,
    /// The signal that stops it gracefully (SIGTERM; nginx's is SIGQUIT).
    pub(super) stop_with: i32,
}

pub(super) fn exe() -> Result<PathBuf, Error> {
    std::env::current_exe().map_err(|e| Error::Cell(format!("cannot find the muxlab binary: {e}")))
}

pub(super) use crate::remote::ssh::lines_of as line_reader;

pub(super) fn start_model(
    bin: &std::path::Path,
    entry: &str,
    x: &Experiment,
    place: &Placement,
) -> Result<Server, Error> {
    let args = x.serve_args(entry, &place.server_addr, &place.server_cpus)?;
    if let Some(h) = place.hosts.as_ref().filter(|h| h.server.is_some()) {
        return start_remote(h, &args);
    }
    let mut child = Command::new(bin)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting the server: {e}"))?;
    let lines = line_reader(child.stdout.take().expect("piped"));
    let listening = lines.recv_timeout(Duration::from_secs(15)).ok();
    let Some(line) = listening.as_deref().and_then(Listening::read) else {
        let _ = child.kill();
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let _ = child.wait();
        return Err(Error::Cell(format!("server did not start: {}", err.trim())));
    };
    Ok(Server {
        pid: child.id() as i32,
        child: Some(child),
        addr: line.addr,
        lines: Some(lines),
        dir: None,
        session: None,
        stop_with: sys::signal::SIGTERM,
    })
}

/// Starts a model on the server host; its listening line comes back through ssh.
fn start_remote(hosts: &super::hosts::Hosts, args: &[String]) -> Result<Server, Error> {
    let mut session = hosts.start_server(args)?;
    let listening = session.lines.recv_timeout(Duration::from_secs(20)).ok();
    let Some(line) = listening.as_deref().and_then(Listening::read) else {
        session.close();
        session.wait(Duration::from_secs(5));
        let err: Vec<String> = session.errors.try_iter().collect();
        return Err(Error::Cell(format!(
            "server did not start on {}: {}",
            session.host,
            err.join(" ").trim()
        )));
    };
    Ok(Server {
        child: None,
        pid: line.pid,
        addr: line.addr,
        lines: None,
        dir: None,
        session: Some(session),
        stop_with: sys::signal::SIGTERM,
    })
}

/// Stops a server on another host: `stop` to its guard, which sends SIGTERM; the stats line
/// comes back through ssh, and the guard names anything the server left behind.
fn stop_remote(mut session: crate::remote::ssh::Session) -> (Option<StatsLine>, Result<(), Error>) {
    if let Ok(Some(st)) = session.child.try_wait() {
        return (
            None,
            Err(Error::Cell(format!(
                "the server on {} died during the cell ({st})",
                session.host
            ))),
        );
    }
    let _ = session.send("stop\n");
    let ended = session.wait(Duration::from_secs(25));
    let stats = session.lines.try_iter().find_map(|l| StatsLine::read(&l));
    let errors: Vec<String> = session.errors.try_iter().collect();
    let verdict = if !ended {
        Err(Error::Cell(format!(
            "the server on {} did not stop within 25 s",
            session.host
        )))
    } else if let Some(l) = errors.iter().find(|l| l.contains("left behind")) {
        Err(Error::Cell(format!("on {}: {l}", session.host)))
    } else if stats.is_none() {
        Err(Error::Cell(format!(
            "no stats line from the server on {}: {}",
            session.host,
            errors.join(" ")
        )))
    } else {
        Ok(())
    };
    (stats, verdict)
}

/// Stops a server; returns its stats line (models) and an error if it did not end cleanly.
/// Processes of its tree that outlive it are killed, and fail the cell.
pub(super) fn stop(mut s: Server) -> (Option<StatsLine>, Result<(), Error>) {
    if let Some(session) = s.session.take() {
        return stop_remote(session);
    }
    let tree = snapshot(s.pid);
    let Some(mut child) = s.child.take() else {
        return (None, Ok(()));
    };
    let is_peer = s.dir.is_some();
    // Already gone? Then it crashed during the cell.
    if let Ok(Some(st)) = child.try_wait() {
        let left = kill_all(&descendants(&tree, s.pid));
        let left = if left.is_empty() {
            String::new()
        } else {
            format!("; its processes {left:?} were killed")
        };
        return (
            None,
            Err(Error::Cell(format!("the server died during the cell ({st}){left}"))),
        );
    }
    let _ = sys::process::kill(s.pid, s.stop_with);
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
    let mut stats = None;
    if let Some(lines) = s.lines.take() {
        while let Ok(l) = lines.recv_timeout(Duration::from_millis(500)) {
            if let Some(line) = StatsLine::read(&l) {
                stats = Some(line);
            }
        }
    }
    if let Some(d) = s.dir.take() {
        let _ = std::fs::remove_dir_all(d);
    }
    let leftovers = kill_all(&descendants(&tree, s.pid));
    let verdict = match status {
        None => Err(Error::Cell(
            "the server did not stop within 20 s of SIGTERM (killed)".into(),
        )),
        Some(st) if !st.success() && !is_peer => Err(Error::Cell(format!("the server exited with {st}"))),
        Some(_) if !leftovers.is_empty() => Err(Error::Cell(format!("processes left behind (killed): {leftovers:?}"))),
        Some(_) if !is_peer && stats.is_none() => Err(Error::Cell("no stats line".into())),
        Some(_) => Ok(()),
    };
    (stats, verdict)
}
