//! Runs past the descriptor limit: the connections are split over child processes (this same
//! program with `--subshard i/k --json`), each printing its document; the parent merges them
//! losslessly (see `merge`).

use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;

use super::progress::{Line, Said};
use super::stop::STOP;
use super::{io_err, live, merge, Error, Outcome, Shard, Show, Spec};
use crate::sys;

/// Descriptors kept free in each process for epoll, stdio and the like.
const MARGIN: u64 = 100;

/// Connections one process may hold: its hard descriptor limit less a margin.
pub fn per_process() -> usize {
    let hard = sys::rlimit::nofile().map(|(_, h)| h).unwrap_or(1024);
    hard.saturating_sub(MARGIN).max(16) as usize
}

/// Processes needed for `connections`.
pub fn needed(connections: usize) -> usize {
    connections.div_ceil(per_process()).max(1)
}

/// Runs `k` processes, each a part of `spec`'s share (its arguments with `--subshard i/k`),
/// and merges their documents. With `show` [`Show::JsonLines`] (what bench and
/// `--hosts` read) the parts report their start, and this process says it started once every
/// part has: the window a caller samples the server over is the parts' window.
pub fn run(spec: &Spec, k: usize, show: Show) -> Result<Outcome, Error> {
    let exe = std::env::current_exe().map_err(io_err("cannot find this program to start shards"))?;
    let _ = sys::signal::install_stop_handler(&STOP);
    let lines = show == Show::JsonLines;
    let mut children = Vec::new();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    // Each part says when it has connected (or ends): once all have, the gate opens every
    // part's window at once.
    let (connected_tx, connected) = std::sync::mpsc::channel::<usize>();
    let mut gates = Vec::new();
    let mut readers = Vec::new();
    // --metrics: the parts say their figures, which this process's scrapes sum.
    let board = live::Board::new(k);
    let endpoint = match spec.args().metrics {
        Some(addr) => {
            let read = board.clone();
            Some(live::serve(addr, live::Meta::of(spec), move || read.sum())?)
        }
        None => None,
    };
    for i in 0..k {
        let mut part = spec.args().clone();
        part.subshard = Some(Shard(i, k));
        part.start_gate = true;
        part.metrics_lines = endpoint.is_some();
        (part.metrics, part.metrics_linger) = (None, None);
        let mut child = Command::new(&exe)
            .arg("load")
            .args(part.to_args())
            .arg("--json")
            .args(lines.then_some("--progress-json"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(io_err(format!("starting shard {i}")))?;
        gates.push(child.stdin.take().expect("piped"));
        let out = child.stdout.take().expect("piped");
        let (tx, connected_tx, board) = (tx.clone(), connected_tx.clone(), board.clone());
        readers.push(std::thread::spawn(move || {
            use std::io::BufRead;
            let mut doc = None;
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                match Line::read(&line) {
                    Said::Event(Line::Started) => {
                        let _ = tx.send(());
                    }
                    Said::Event(Line::Connected) => {
                        let _ = connected_tx.send(i);
                    }
                    Said::Event(Line::Metrics(s)) => board.set(i, s),
                    Said::Event(_) | Said::Other(_) => {}
                    Said::Document(d) => doc = Some(d),
                }
            }
            let _ = connected_tx.send(i);
            doc
        }));
        children.push(child);
    }
    drop((tx, connected_tx));
    std::thread::spawn(move || open_together(gates, connected));
    let forward = Forward::start(&children);
    if lines {
        // Every part up (or gone: its reader ends), then the window is theirs.
        let started = rx.iter().take(k).count();
        if started == k {
            Line::Started.print();
        }
    }
    let mut parts = Vec::new();
    let mut silent = Vec::new();
    for (i, (mut child, reader)) in children.into_iter().zip(readers).enumerate() {
        let doc = reader.join().unwrap_or_default();
        let status = child.wait().map_err(io_err("waiting for a shard"));
        forward.reaped(child.id() as i32);
        let status = status?;
        match doc {
            Some(d) => parts.push(d.outcome().clone()),
            None => silent.push((i, status)),
        }
    }
    forward.end();
    live::linger(endpoint, spec, show == Show::Terminal);
    if !silent.is_empty() {
        return Err(Error::ShardsSilent { silent });
    }
    merge::outcomes(&parts, merge::Machines::Same).ok_or(Error::NoShardRan)
}

/// Opens the parts' windows together: once every part has said it connected (or ended), a
/// line to each one's stdin starts its warm-up.
fn open_together(gates: Vec<std::process::ChildStdin>, connected: std::sync::mpsc::Receiver<usize>) {
    use std::io::Write;
    let mut seen = vec![false; gates.len()];
    while seen.iter().any(|s| !s) {
        match connected.recv() {
            Ok(i) => seen[i] = true,
            Err(_) => break,
        }
    }
    for mut g in gates {
        let _ = g.write_all(b"go\n");
    }
}

/// A signal to this process is the parts' too (a SIGTERM sent to this pid alone must not leave
/// them running): from their start, a thread passes the stop on to every part not yet reaped;
/// they stop, report what they measured, and the merge says so.
struct Forward {
    live: std::sync::Arc<std::sync::Mutex<Vec<i32>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Forward {
    fn start(children: &[std::process::Child]) -> Forward {
        let live = std::sync::Arc::new(std::sync::Mutex::new(
            children.iter().map(|c| c.id() as i32).collect::<Vec<i32>>(),
        ));
        let watched = live.clone();
        let thread = std::thread::spawn(move || loop {
            let pids = crate::sync::lock(&watched);
            if pids.is_empty() {
                return;
            }
            if STOP.load(Ordering::Relaxed) != 0 {
                for &pid in pids.iter() {
                    let _ = sys::process::kill(pid, sys::signal::SIGTERM);
                }
                return;
            }
            drop(pids);
            std::thread::sleep(std::time::Duration::from_millis(20));
        });
        Forward { live, thread }
    }

    /// Part `pid` was reaped: its number may be another process's from now on.
    fn reaped(&self, pid: i32) {
        crate::sync::lock(&self.live).retain(|&p| p != pid);
    }

    fn end(self) {
        crate::sync::lock(&self.live).clear();
        let _ = self.thread.join();
    }
}
