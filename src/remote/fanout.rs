//! `muxlab load URL --hosts A,B,...`: host `i` of `N` runs `muxlab load ... --shard i/N` under
//! [`guard`](super::guard) over ssh, all starting at one wall-clock instant a little ahead.
//! Each host streams progress lines and then its document; the documents merge losslessly.
//! A host that cannot be reached, refuses, dies or goes silent is named with its reason, the
//! others finish, and the run exits 1.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::TryRecvError;
use std::time::{Duration, Instant};

use super::ssh::{prepare, Prepared, Session, Ssh};
use super::{Error, HostFailure, PrepError, PrepFault, RemoteArgs};
use crate::load::merge::{self, Machines};
use crate::load::{unix_ms, Document, HostLine, Line, Outcome, Part, Said, Shard, Show, Spec};
use crate::units::{fmt_us, thousands};

/// How far ahead of the slowest ssh round trip the hosts are told to start.
const START_MARGIN: Duration = Duration::from_millis(1500);

/// What the hosts did.
pub struct Fanned {
    /// The merged document of the hosts that reported, with a line per host.
    pub doc: Document,
    /// Per host: its name and its outcome, or why it has none.
    pub hosts: Vec<(String, Result<Outcome, HostFailure>)>,
    /// The agreed start, in ms since the epoch.
    pub start_at: u64,
}

impl Fanned {
    /// Why the run failed (the program exits 1): a host failed, or a request did.
    pub fn verdict(&self) -> Result<(), Error> {
        let failed: Vec<(String, HostFailure)> = self
            .hosts
            .iter()
            .filter_map(|(h, r)| r.as_ref().err().map(|e| (h.clone(), e.clone())))
            .collect();
        let t = &self.doc.outcome().tally;
        if !failed.is_empty() {
            return Err(Error::HostsFailed {
                failed,
                hosts: self.hosts.len(),
            });
        }
        if t.error_total() > 0 || t.requests == 0 {
            return Err(Error::Requests {
                errors: t.error_total(),
                requests: t.requests,
            });
        }
        Ok(())
    }
}

/// One line per host, after the merged summary.
pub fn host_lines(f: &Fanned) -> String {
    let mut s = String::from("  hosts\n");
    let warmup_ms = f.doc.warmup().as_millis() as u64;
    for (h, r) in &f.hosts {
        match r {
            Ok(o) => {
                let secs = o.elapsed.as_secs_f64().max(1e-9);
                // Its window should open at the agreed instant (plus the warm-up): a host whose
                // ssh or clock was late is said to be.
                let late = o.window_start_ms.saturating_sub(f.start_at + warmup_ms);
                s.push_str(&format!(
                    "    {h:<20} {:>12} requests  {:>10} req/s  p99 {:>8}  client CPU {:.2}s{}{}{}\n",
                    thousands(o.tally.requests),
                    thousands((o.tally.requests as f64 / secs) as u64),
                    fmt_us(o.tally.latency.0.value_at_quantile(0.99) as f64 / 1000.0),
                    o.client_cpu.as_secs_f64(),
                    if o.saturated() { "  SATURATED" } else { "" },
                    if o.tally.error_total() > 0 {
                        format!("  {} errors", thousands(o.tally.error_total()))
                    } else {
                        String::new()
                    },
                    if late > 250 {
                        format!("  started {:.1}s late", late as f64 / 1e3)
                    } else {
                        String::new()
                    }
                ));
            }
            Err(e) => s.push_str(&format!("    {h:<20} FAILED: {e}\n")),
        }
    }
    s
}

/// A host's run in flight: its ssh session (which writes the guard's heartbeat) and what it
/// said so far.
struct Running {
    host: String,
    session: Session,
    heard: Instant,
    progress: (u64, u64),
    doc: Option<Box<Document>>,
    result: Option<Result<Outcome, HostFailure>>,
}

static STOP: AtomicU64 = AtomicU64::new(0);

/// Runs `spec` from the hosts of `remote`, each its share.
pub fn run(spec: &Spec, remote: &RemoteArgs, show: Show) -> Result<Fanned, Error> {
    let hosts = &remote.hosts;
    if let Some(h) = hosts.iter().find(|h| h.is_empty() || h.starts_with('-')) {
        return Err(Error::NotAHost {
            flag: "--hosts",
            given: h.clone(),
        });
    }
    if spec.shard().is_some() {
        return Err(Error::HostsWithShard);
    }
    if hosts.len() > spec.connections() {
        return Err(Error::HostsOverConnections {
            connections: spec.connections(),
            hosts: hosts.len(),
        });
    }
    let ssh = Ssh {
        config: remote.ssh_config.clone(),
        connect_timeout: spec.timeout(),
    };
    if let Some(f) = &ssh.config {
        if !f.is_file() {
            return Err(Error::NoSshConfig { path: f.clone() });
        }
    }
    let _ = crate::sys::signal::install_stop_handler(&STOP);
    let t_prep = Instant::now();
    let prepared = prepare_all(&ssh, remote)?;
    // Every host starts at one instant: far enough ahead for the slowest ssh to be running.
    let start_at = unix_ms() + (t_prep.elapsed() + START_MARGIN).as_millis() as u64;
    let n = prepared.len();
    let mut running = Vec::new();
    for (i, p) in prepared.iter().enumerate() {
        match start(&ssh, p, spec, Shard(i, n), start_at) {
            Ok(r) => running.push(r),
            Err(e) => {
                for r in &mut running {
                    abandon(r, HostFailure::Abandoned);
                }
                for p in &prepared {
                    remove_push(&ssh, p);
                }
                return Err(Error::Start {
                    host: p.host.clone(),
                    source: Box::new(e),
                });
            }
        }
    }
    follow(&mut running, spec.timeout(), start_at, show);
    let hosts: Vec<(String, Result<Outcome, HostFailure>)> = running
        .into_iter()
        .map(|r| (r.host, r.result.unwrap_or(Err(HostFailure::NoResult))))
        .collect();
    Ok(Fanned {
        doc: merged(spec, remote, &hosts, start_at),
        hosts,
        start_at,
    })
}

/// Makes every host ready (in parallel): the hosts, or one error naming each that is not.
fn prepare_all(ssh: &Ssh, remote: &RemoteArgs) -> Result<Vec<Prepared>, Error> {
    let prepared: Vec<Result<Prepared, PrepError>> = std::thread::scope(|s| {
        let handles: Vec<_> = remote
            .hosts
            .iter()
            .map(|h| s.spawn(move || prepare(ssh, h, &remote.remote_bin, remote.push)))
            .collect();
        handles
            .into_iter()
            .zip(&remote.hosts)
            .map(|(h, host)| {
                h.join().unwrap_or(Err(PrepError {
                    host: host.clone(),
                    fault: PrepFault::Panicked,
                }))
            })
            .collect()
    });
    let (ready, failed): (Vec<_>, Vec<_>) = prepared.into_iter().partition(Result::is_ok);
    let ready: Vec<Prepared> = ready.into_iter().flatten().collect();
    if failed.is_empty() {
        return Ok(ready);
    }
    for p in &ready {
        remove_push(ssh, p);
    }
    Err(Error::Unprepared {
        failed: failed.into_iter().filter_map(Result::err).collect(),
    })
}

/// Removes what `--push` put on a host.
fn remove_push(ssh: &Ssh, p: &Prepared) {
    if let Some(d) = &p.pushed_dir {
        super::ssh::remove(ssh, &p.host, d);
    }
}

/// The merged document of the hosts that reported, with a line per host.
fn merged(
    spec: &Spec,
    remote: &RemoteArgs,
    hosts: &[(String, Result<Outcome, HostFailure>)],
    start_at: u64,
) -> Document {
    let outcomes: Vec<Outcome> = hosts.iter().filter_map(|(_, r)| r.as_ref().ok().cloned()).collect();
    let merged = merge::outcomes(&outcomes, Machines::Separate)
        .unwrap_or_else(|| Outcome::empty(spec.connections(), STOP.load(Ordering::Relaxed) != 0));
    let mut doc = Document::new(spec, &merged);
    doc.config.hosts = Some(remote.hosts.clone());
    doc.config.start_at_ms = Some(start_at);
    doc.hosts = hosts
        .iter()
        .map(|(h, r)| match r {
            Ok(o) => HostLine::Measured(Box::new(Part::of(h, o, None))),
            Err(e) => HostLine::Failed {
                host: h.clone(),
                failed: e.to_string(),
            },
        })
        .collect();
    doc.results.client_saturated |= outcomes.iter().any(Outcome::saturated);
    doc
}

/// Starts a host's share under the guard.
fn start(ssh: &Ssh, p: &Prepared, spec: &Spec, share: Shard, start_at: u64) -> Result<Running, Error> {
    let silence = Duration::from_secs(3);
    let mut words = vec![
        p.bin.clone(),
        "guard".into(),
        "--group".into(),
        "--silence".into(),
        format!("{}ms", silence.as_millis()),
    ];
    if let Some(d) = &p.pushed_dir {
        words.extend(["--remove".into(), d.clone()]);
    }
    let mut args = spec.args().clone();
    args.shard = Some(share);
    args.start_at = Some(start_at);
    words.extend(["--".into(), p.bin.clone(), "load".into()]);
    words.extend(args.to_args());
    words.extend(["--json".into(), "--progress-json".into()]);
    Ok(Running {
        host: p.host.clone(),
        session: Session::start(ssh, &p.host, &words, true)?,
        heard: Instant::now(),
        progress: (0, 0),
        doc: None,
        result: None,
    })
}

/// A host whose session ended: its document, or why there is none (its last words).
fn finished(r: &mut Running) -> Result<Outcome, HostFailure> {
    r.session.close();
    let status = r.session.child.wait().ok();
    if let Some(doc) = r.doc.take() {
        return Ok(doc.outcome().clone());
    }
    let mut said = Vec::new();
    while let Ok(l) = r.session.errors.recv_timeout(Duration::from_millis(200)) {
        said.push(l);
    }
    Err(match status.and_then(|s| s.code()) {
        Some(0) => HostFailure::NoDocument,
        code => HostFailure::Ended {
            code,
            stderr: said.join("\n"),
        },
    })
}

/// Gives up on a host: kills its ssh (the guard there stops the run when the session closes
/// or goes silent) and records why.
fn abandon(r: &mut Running, why: HostFailure) {
    r.session.close();
    let _ = r.session.child.kill();
    let _ = r.session.child.wait();
    if r.result.is_none() {
        r.result = Some(Err(why));
    }
}

/// Follows the hosts until each has reported or failed: heartbeats out, progress in, a merged
/// progress line each second, Ctrl-C passed on as `stop`.
fn follow(running: &mut [Running], timeout: Duration, start_at: u64, show: Show) {
    let mut started = false;
    // A host that says nothing for this long is lost (it prints a line each second).
    let lost_after = timeout.max(Duration::from_secs(3)) + Duration::from_secs(1);
    let mut last_line = Instant::now();
    let mut stopping = false;
    let terminal = show == Show::Terminal && std::io::IsTerminal::is_terminal(&std::io::stderr());
    while running.iter().any(|r| r.result.is_none()) {
        std::thread::sleep(Duration::from_millis(20));
        if !started && unix_ms() >= start_at {
            started = true;
            if show == Show::JsonLines {
                Line::Started.print();
            }
        }
        let stop_now = STOP.load(Ordering::Relaxed) != 0 && !stopping;
        stopping |= stop_now;
        for r in running.iter_mut().filter(|r| r.result.is_none()) {
            if stop_now {
                let _ = r.session.send("stop\n");
            }
            loop {
                match r.session.lines.try_recv() {
                    Ok(line) => {
                        r.heard = Instant::now();
                        match Line::read(&line) {
                            Said::Event(Line::Progress(t)) => r.progress = (t.requests, t.errors),
                            Said::Document(d) => r.doc = Some(d),
                            Said::Event(Line::Started | Line::Connected | Line::Metrics(_)) | Said::Other(_) => {}
                        }
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        // Its stdout closed: the run there ended.
                        r.result = Some(finished(r));
                        break;
                    }
                }
            }
            if r.result.is_none() && r.heard.elapsed() > lost_after {
                let silent = r.heard.elapsed();
                abandon(r, HostFailure::Lost { silent });
            }
        }
        if terminal && last_line.elapsed() >= Duration::from_secs(1) {
            last_line = Instant::now();
            let done: u64 = running.iter().map(|r| r.progress.0).sum();
            let errors: u64 = running.iter().map(|r| r.progress.1).sum();
            let live = running.iter().filter(|r| r.result.is_none()).count();
            eprint!(
                "\r\x1b[2K{} hosts running, total {} requests, errors {}{}",
                live,
                thousands(done),
                errors,
                if stopping { " (stopping)" } else { "" }
            );
        }
    }
    if terminal {
        eprint!("\r\x1b[2K");
    }
}
