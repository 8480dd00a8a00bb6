//! `muxlab sample`: bench runs it over ssh on a server's host and asks, one line at a time:
//! `machine` (kernel, CPU model, cores, CPUs this process may use), `tree PID` (the process
//! tree's CPU time, memory, threads, and the host's kernel TCP memory), `all PID` (the same
//! with every thread's context switches), `leftovers PID` (processes of that tree, ever seen,
//! still running). Each answer is one JSON line. It ends when stdin closes or stays silent for
//! a minute (a lost controller).

use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

use serde_json::{json, Value};

use super::stdin::{Heard, Listener};
use crate::sys::{self, procfs::ProcSample};

/// How long the sampler waits for its next question before it gives up on the controller.
const SILENCE: Duration = Duration::from_secs(60);

/// A sample as it travels.
pub fn sample_json(s: &ProcSample) -> Value {
    json!({"cpu_ns": s.cpu.as_nanos() as u64, "threads": s.threads,
        "rss": s.rss, "pss": s.pss, "voluntary_switches": s.voluntary_switches,
        "involuntary_switches": s.involuntary_switches, "reaped_children_ns": s.reaped_children.as_nanos() as u64,
        "thread_set": s.thread_set, "tcp_pages": sys::procfs::tcp_mem_pages()})
}

/// Reads [`sample_json`]'s form; `None` for an answer without the CPU time (an error, or a
/// sampler of another version).
pub fn sample_from(v: &Value) -> Option<ProcSample> {
    let u = |k: &str| v[k].as_u64().unwrap_or(0);
    let cpu = v["cpu_ns"].as_u64()?;
    Some(ProcSample {
        cpu: Duration::from_nanos(cpu),
        threads: u("threads"),
        rss: u("rss"),
        pss: v["pss"].as_u64(),
        voluntary_switches: u("voluntary_switches"),
        involuntary_switches: u("involuntary_switches"),
        reaped_children: Duration::from_nanos(u("reaped_children_ns")),
        thread_set: v["thread_set"].as_u64(),
    })
}

/// This machine, as bench's environment records each host.
pub fn machine() -> Value {
    let (kernel, cpu) = sys::procfs::machine();
    json!({"kernel": kernel, "cpu_model": cpu,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "cpus_allowed": sys::procfs::cpus_allowed(sys::process::pid())})
}

/// Answers questions on stdin until it closes.
pub fn serve() -> Result<(), crate::load::Error> {
    let mut out = std::io::stdout().lock();
    let mut seen: BTreeSet<i32> = BTreeSet::new();
    let mut listener = Listener::default();
    loop {
        let Some(line) = listener.line() else {
            match listener.wait(SILENCE) {
                Heard::Something => continue,
                Heard::Nothing | Heard::Closed => return Ok(()),
            }
        };
        let mut words = line.split_whitespace();
        let cmd = words.next().unwrap_or("");
        let pid: i32 = words.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let answer = match cmd {
            "machine" => machine(),
            "tree" | "all" if pid > 0 => {
                seen.extend(sys::procfs::tree(pid));
                let s = if cmd == "all" {
                    sys::procfs::sample_tree_all_threads(pid)
                } else {
                    sys::procfs::sample_tree(pid)
                };
                match s {
                    Ok(s) => sample_json(&s),
                    Err(e) => json!({"error": e.to_string()}),
                }
            }
            "leftovers" => {
                let left: Vec<i32> = seen
                    .iter()
                    .copied()
                    .filter(|p| *p != pid && sys::procfs::is_running(*p))
                    .collect();
                json!({"leftovers": left})
            }
            "" => continue,
            other => json!({"error": format!("unknown question '{other}'")}),
        };
        if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
            return Ok(());
        }
    }
}
