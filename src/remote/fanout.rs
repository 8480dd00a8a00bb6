//! `muxlab load URL --hosts A,B,...`: host `i` of `N` runs `muxlab load ... --shard i/N` under
//! [`guard`](super::guard) over ssh, all starting at one wall-clock instant a little ahead.
//! Each host streams progress lines and then its document; the documents merge losslessly.
//! A host that cannot be reached, refuses, dies or goes silent is named with its reason, the
//! others finish, and the run exits 1.

use std::ffi::OsString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::TryRecvError;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::ssh::{prepare, PrepError, Prepared, Session, Ssh};
use super::RemoteArgs;
use crate::load::merge::{self, Machines};
use crate::load::summary::{fmt_us, saturated, thousands, to_json};
use crate::load::{shard::strip_flags, unix_ms, Error, LoadConfig, Outcome, Show};

/// The flags that belong to this machine's muxlab, not to the hosts' runs.
const LOCAL_FLAGS: [(&str, bool); 8] = [
    ("--hosts", true),
    ("--ssh-config", true),
    ("--remote-bin", true),
    ("--push", false),
    ("--json", false),
    ("--hgrm", true),
    ("--progress-json", false),
    ("--start-at", true),
];

/// How far ahead of the slowest ssh round trip the hosts are told to start.
const START_MARGIN: Duration = Duration::from_millis(1500);

/// What the hosts did.
pub struct Fanned {
    /// The merged outcome of the hosts that reported.
    pub merged: Outcome,
    /// The merged document, with `hosts`.
    pub doc: Value,
    /// Per host: its name and its outcome, or why it has none.
    pub hosts: Vec<(String, Result<Outcome, String>)>,
    /// The agreed start, in ms since the epoch.
    pub start_at: u64,
}

impl Fanned {
    /// Why the run failed (the program exits 1): a host failed, or a request did.
    pub fn verdict(&self) -> Result<(), String> {
        let failed: Vec<String> = self
            .hosts
            .iter()
            .filter_map(|(h, r)| r.as_ref().err().map(|e| format!("{h}: {e}")))
            .collect();
        let t = &self.merged.tally;
        if !failed.is_empty() {
            return Err(format!(
                "{} of {} hosts failed: {}",
                failed.len(),
                self.hosts.len(),
                failed.join("; ")
            ));
        }
        if t.error_total() > 0 || t.requests == 0 {
            return Err(format!("{} errors, {} requests completed", t.error_total(), t.requests));
        }
        Ok(())
    }
}

/// One line per host, after the merged summary.
pub fn host_lines(f: &Fanned) -> String {
    let mut s = String::from("  hosts\n");
    for (h, r) in &f.hosts {
        match r {
            Ok(o) => {
                let secs = o.elapsed.as_secs_f64().max(1e-9);
                // Its window should open at the agreed instant (plus the warm-up): a host whose
                // ssh or clock was late is said to be.
                let late = o.window_start_ms.saturating_sub(f.start_at + warmup_ms(&f.doc));
                s.push_str(&format!(
                    "    {h:<20} {:>12} requests  {:>10} req/s  p99 {:>8}  client CPU {:.2}s{}{}{}\n",
                    thousands(o.tally.requests),
                    thousands((o.tally.requests as f64 / secs) as u64),
                    fmt_us(o.tally.latency.0.value_at_quantile(0.99) as f64 / 1000.0),
                    o.client_cpu.as_secs_f64(),
                    if saturated(o) { "  SATURATED" } else { "" },
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

/// The run's warm-up in ms, from its document.
fn warmup_ms(doc: &Value) -> u64 {
    (doc["config"]["warmup_s"].as_f64().unwrap_or(0.0) * 1e3) as u64
}

/// A host's run in flight: its ssh session (which writes the guard's heartbeat) and what it
/// said so far.
struct Running {
    host: String,
    session: Session,
    heard: Instant,
    progress: (u64, u64),
    doc: Option<Value>,
    result: Option<Result<Outcome, String>>,
}

static STOP: AtomicU64 = AtomicU64::new(0);

/// Runs `cfg` from the hosts of `remote`; `argv` is this program's command line (less its name).
pub fn run(cfg: &LoadConfig, remote: &RemoteArgs, argv: &[OsString], show: Show) -> Result<Fanned, Error> {
    let hosts = &remote.hosts;
    if let Some(h) = hosts.iter().find(|h| h.is_empty() || h.starts_with('-')) {
        return Err(Error::Usage(format!("--hosts: '{h}' is not a host name")));
    }
    if cfg.shard.is_some() {
        return Err("--hosts splits the run itself: drop --shard".into());
    }
    if hosts.len() > cfg.connections {
        return Err(Error::Usage(format!(
            "-c {} cannot be split over {} hosts: every host needs a connection",
            cfg.connections,
            hosts.len()
        )));
    }
    let ssh = Ssh {
        config: remote.ssh_config.clone(),
        connect_timeout: cfg.timeout,
    };
    if let Some(f) = &ssh.config {
        if !f.is_file() {
            return Err(Error::Usage(format!("--ssh-config {}: no such file", f.display())));
        }
    }
    let _ = crate::sys::signal::install_stop_handler(&STOP);
    let t_prep = Instant::now();
    let prepared: Vec<Result<Prepared, PrepError>> = std::thread::scope(|s| {
        let handles: Vec<_> = hosts
            .iter()
            .map(|h| {
                let ssh = &ssh;
                s.spawn(move || prepare(ssh, h, &remote.remote_bin, remote.push))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(PrepError::Unreachable("panicked".into()))))
            .collect()
    });
    let cleanup = |prepared: &[Result<Prepared, PrepError>]| {
        for p in prepared.iter().flatten() {
            if let Some(d) = &p.pushed_dir {
                super::ssh::remove(&ssh, &p.host, d);
            }
        }
    };
    let mut usage = Vec::new();
    let mut down = Vec::new();
    for (h, p) in hosts.iter().zip(&prepared) {
        match p {
            Err(PrepError::Version(e)) => usage.push(format!("host {h}: {e}")),
            Err(PrepError::Unreachable(e)) => down.push(format!("host {h}: cannot run muxlab there: {e}")),
            Ok(_) => {}
        }
    }
    if !usage.is_empty() || !down.is_empty() {
        cleanup(&prepared);
        let all = [usage.clone(), down].concat().join("; ");
        return Err(if usage.is_empty() {
            Error::Failed(all)
        } else {
            Error::Usage(all)
        });
    }
    let prepared: Vec<Prepared> = prepared.into_iter().flatten().collect();
    // Every host starts at one instant: far enough ahead for the slowest ssh to be running.
    let start_at = unix_ms() + (t_prep.elapsed() + START_MARGIN).as_millis() as u64;
    let base = strip_flags(argv, &LOCAL_FLAGS);
    let n = prepared.len();
    let mut running = Vec::new();
    for (i, p) in prepared.iter().enumerate() {
        match start(&ssh, p, &base, i, n, start_at) {
            Ok(r) => running.push(r),
            Err(e) => {
                for r in &mut running {
                    abandon(r, "stopped: another host could not start".into());
                }
                cleanup(&prepared.iter().cloned().map(Ok).collect::<Vec<_>>());
                return Err(Error::Failed(format!("host {}: {e}", p.host)));
            }
        }
    }
    follow(&mut running, cfg, start_at, show);
    let hosts: Vec<(String, Result<Outcome, String>)> = running
        .into_iter()
        .map(|r| (r.host, r.result.unwrap_or_else(|| Err("no result".into()))))
        .collect();
    let outcomes: Vec<Outcome> = hosts.iter().filter_map(|(_, r)| r.as_ref().ok().cloned()).collect();
    let merged = merge::outcomes(&outcomes, Machines::Separate).unwrap_or_else(|| empty(cfg));
    let mut doc = to_json(cfg, &merged);
    doc["config"]["hosts"] = json!(remote.hosts);
    doc["config"]["start_at_ms"] = json!(start_at);
    doc["hosts"] = Value::Array(
        hosts
            .iter()
            .map(|(h, r)| match r {
                Ok(o) => merge::part_summary(h, o, &Value::Null),
                Err(e) => json!({"host": h, "failed": e}),
            })
            .collect(),
    );
    if outcomes.iter().any(saturated) {
        doc["client_saturated"] = json!(true);
    }
    Ok(Fanned {
        merged,
        doc,
        hosts,
        start_at,
    })
}

/// An outcome with nothing in it (no host reported).
fn empty(cfg: &LoadConfig) -> Outcome {
    Outcome {
        tally: Default::default(),
        connections: cfg.connections,
        offered_rps: None,
        window_start_ms: unix_ms(),
        elapsed: Duration::ZERO,
        connecting: Duration::ZERO,
        client_cpu: Duration::ZERO,
        cpu_slots: 0,
        threads: 0,
        shards: 0,
        interrupted: STOP.load(Ordering::Relaxed) != 0,
    }
}

/// Starts host `i`'s share under the guard.
fn start(ssh: &Ssh, p: &Prepared, base: &[OsString], i: usize, n: usize, start_at: u64) -> Result<Running, String> {
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
    words.extend(["--".into(), p.bin.clone()]);
    words.extend(base.iter().map(|a| a.to_string_lossy().into_owned()));
    words.extend([
        "--shard".into(),
        format!("{i}/{n}"),
        "--start-at".into(),
        start_at.to_string(),
        "--json".into(),
        "--progress-json".into(),
    ]);
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
fn finished(r: &mut Running) -> Result<Outcome, String> {
    r.session.close();
    let status = r.session.child.wait().ok();
    if let Some(doc) = r.doc.take() {
        return merge::read_document(&r.host, &doc).map_err(|e| e.to_string());
    }
    let mut said = Vec::new();
    while let Ok(l) = r.session.errors.recv_timeout(Duration::from_millis(200)) {
        said.push(l);
    }
    Err(match status.and_then(|s| s.code()) {
        Some(0) => "ended without a result".into(),
        code => format!("ended before reporting: {}", super::ssh::reason(&said.join("\n"), code)),
    })
}

/// Gives up on a host: kills its ssh (the guard there stops the run when the session closes
/// or goes silent) and records why.
fn abandon(r: &mut Running, why: String) {
    r.session.close();
    let _ = r.session.child.kill();
    let _ = r.session.child.wait();
    if r.result.is_none() {
        r.result = Some(Err(why));
    }
}

/// Follows the hosts until each has reported or failed: heartbeats out, progress in, a merged
/// progress line each second, Ctrl-C passed on as `stop`.
fn follow(running: &mut [Running], cfg: &LoadConfig, start_at: u64, show: Show) {
    let mut started = false;
    // A host that says nothing for this long is lost (it prints a line each second).
    let lost_after = cfg.timeout.max(Duration::from_secs(3)) + Duration::from_secs(1);
    let mut last_line = Instant::now();
    let mut stopping = false;
    let terminal = show == Show::Terminal && std::io::IsTerminal::is_terminal(&std::io::stderr());
    while running.iter().any(|r| r.result.is_none()) {
        std::thread::sleep(Duration::from_millis(20));
        if !started && unix_ms() >= start_at {
            started = true;
            if show == Show::JsonLines {
                println!("{{\"event\":\"started\"}}");
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
                        let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
                            continue;
                        };
                        if v["event"] == "progress" {
                            r.progress = (v["requests"].as_u64().unwrap_or(0), v["errors"].as_u64().unwrap_or(0));
                        } else if v["event"] != "started" {
                            r.doc = Some(v);
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
                let why = format!(
                    "lost: nothing heard from it for {:.0}s (network down or host gone?)",
                    r.heard.elapsed().as_secs_f64()
                );
                abandon(r, why);
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
