//! Process control for one cell: start a model (`muxlab serve`, pinned; nginx is in `nginx`)
//! and wait until it accepts; stop it (SIGTERM / SIGQUIT), read its stats line and check that
//! it exited cleanly and left no process behind (what is left is killed: see `own`); one the
//! bench did not stop in order is ended when dropped.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::own::{descendants, kill_all, snapshot};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{CellError, Error};
use crate::bench::setup::{Hosts, Placement};
use crate::server::lines::{Listening, StatsLine};
use crate::sys;

/// A started server.
pub(in crate::bench) struct Server {
    pub(in crate::bench) child: Option<Child>,
    pub(in crate::bench) pid: i32,
    pub(in crate::bench) addr: SocketAddr,
    pub(in crate::bench) lines: Option<Receiver<String>>,
    /// Temporary directory (nginx's config and pid file).
    pub(in crate::bench) dir: Option<PathBuf>,
    /// The ssh session of a server on another host.
    pub(in crate::bench) session: Option<crate::remote::ssh::Session>,
    /// The signal that stops it gracefully (SIGTERM; nginx's is SIGQUIT).
    pub(in crate::bench) stop_with: i32,
}

/// How long a server left behind (an early return, a panic) gets after SIGTERM before every
/// process of its tree is killed.
const GRACE: Duration = Duration::from_secs(2);

/// The bench owns its servers: one not stopped through [`stop`] (an error returned early, a
/// panic, the matrix left half-way) is ended here, its whole tree with it.
impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let tree = snapshot(self.pid);
            let _ = sys::process::kill(self.pid, self.stop_with);
            let deadline = Instant::now() + GRACE;
            while !matches!(child.try_wait(), Ok(Some(_))) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            kill_all(&tree);
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(d) = self.dir.take() {
            let _ = std::fs::remove_dir_all(d);
        }
        // A server on another host: dropping its ssh session ends it (the guard there stops it
        // when its stdin closes).
    }
}

pub(in crate::bench) fn exe() -> Result<PathBuf, Error> {
    std::env::current_exe().map_err(|source| CellError::NoBinary { source }.into())
}

pub(in crate::bench) use crate::remote::ssh::lines_of as line_reader;

pub(in crate::bench) fn start_model(
    bin: &std::path::Path,
    entry: &str,
    x: &Experiment,
    place: &Placement,
    metrics: Option<SocketAddr>,
) -> Result<Server, Error> {
    let mut args = x.serve_args(entry, &place.server_addr, &place.server_cpus)?;
    if let Some(m) = metrics {
        args.extend(["--metrics".into(), m.to_string()]);
    }
    if let Some(h) = place.hosts.as_ref().filter(|h| h.server.is_some()) {
        return start_remote(h, &args);
    }
    let mut child = Command::new(bin)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| CellError::ServerSpawn { source })?;
    let lines = line_reader(child.stdout.take().expect("piped"));
    let listening = lines.recv_timeout(Duration::from_secs(15)).ok();
    let Some(line) = listening.as_deref().and_then(Listening::read) else {
        let _ = child.kill();
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let _ = child.wait();
        return Err(CellError::NotStarted {
            host: None,
            said: err.trim().to_string(),
        }
        .into());
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
fn start_remote(hosts: &Hosts, args: &[String]) -> Result<Server, Error> {
    let mut session = hosts.start_server(args)?;
    let listening = session.lines.recv_timeout(Duration::from_secs(20)).ok();
    let Some(line) = listening.as_deref().and_then(Listening::read) else {
        session.close();
        session.wait(Duration::from_secs(5));
        let err: Vec<String> = session.errors.try_iter().collect();
        return Err(CellError::NotStarted {
            host: Some(session.host.clone()),
            said: err.join(" ").trim().to_string(),
        }
        .into());
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
            Err(CellError::Died {
                host: Some(session.host.clone()),
                status: st,
                killed: Vec::new(),
            }
            .into()),
        );
    }
    let _ = session.send("stop\n");
    let within = Duration::from_secs(25);
    let ended = session.wait(within);
    let stats = session.lines.try_iter().find_map(|l| StatsLine::read(&l));
    let errors: Vec<String> = session.errors.try_iter().collect();
    let host = Some(session.host.clone());
    let verdict = if !ended {
        Err(CellError::DidNotStop { host, within })
    } else if errors.iter().any(|l| l.contains("left behind")) {
        Err(CellError::LeftBehindOn {
            host: session.host.clone(),
            errors,
        })
    } else if stats.is_none() {
        Err(CellError::NoStats { host, errors })
    } else {
        Ok(())
    };
    (stats, verdict.map_err(Error::from))
}

/// Stops a server; returns its stats line (models) and an error if it did not end cleanly.
/// Processes of its tree that outlive it are killed, and fail the cell.
pub(in crate::bench) fn stop(mut s: Server) -> (Option<StatsLine>, Result<(), Error>) {
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
        let killed = kill_all(&descendants(&tree, s.pid));
        let died = CellError::Died {
            host: None,
            status: st,
            killed,
        };
        return (None, Err(died.into()));
    }
    let _ = sys::process::kill(s.pid, s.stop_with);
    let within = Duration::from_secs(20);
    let deadline = Instant::now() + within;
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
        None => Err(CellError::DidNotStop { host: None, within }),
        Some(st) if !st.success() && !is_peer => Err(CellError::Exited { status: st }),
        Some(_) if !leftovers.is_empty() => Err(CellError::LeftBehind { pids: leftovers }),
        Some(_) if !is_peer && stats.is_none() => Err(CellError::NoStats {
            host: None,
            errors: Vec::new(),
        }),
        Some(_) => Ok(()),
    };
    (stats, verdict.map_err(Error::from))
}
