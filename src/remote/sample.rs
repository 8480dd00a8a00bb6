//! `muxlab sample`: bench runs it over ssh on a server's host and asks, one line at a time:
//! `machine` (kernel, CPU model, cores, CPUs this process may use), `tree PID` (the process
//! tree's CPU time, memory, threads, and the host's kernel TCP memory), `all PID` (the same
//! with every thread's context switches), `leftovers PID` (processes of that tree, ever seen,
//! still running). Each answer is one JSON line. It ends when stdin closes or stays silent for
//! a minute (a lost controller).

use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::stdin::{Heard, Listener};
use crate::sys::{self, procfs::ProcSample};

/// How long the sampler waits for its next question before it gives up on the controller.
const SILENCE: Duration = Duration::from_secs(60);

/// A sample as it travels, with the host's kernel TCP memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleLine {
    pub cpu_ns: u64,
    pub threads: u64,
    pub rss: u64,
    pub pss: Option<u64>,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub reaped_children_ns: u64,
    pub thread_set: Option<u64>,
    /// The host's kernel TCP memory in pages.
    pub tcp_pages: Option<u64>,
    /// The host's kernel slab in KiB (absent from an older muxlab's lines).
    #[serde(default)]
    pub slab_kib: Option<u64>,
}

impl SampleLine {
    /// `s` as it travels, with this host's kernel TCP memory.
    pub fn of(s: &ProcSample) -> SampleLine {
        SampleLine {
            cpu_ns: s.cpu.as_nanos() as u64,
            threads: s.threads,
            rss: s.rss,
            pss: s.pss,
            voluntary_switches: s.voluntary_switches,
            involuntary_switches: s.involuntary_switches,
            reaped_children_ns: s.reaped_children.as_nanos() as u64,
            thread_set: s.thread_set,
            tcp_pages: sys::machine::tcp_mem_pages(),
            slab_kib: sys::machine::slab_kib(),
        }
    }

    /// The sample it carries.
    pub fn sample(&self) -> ProcSample {
        ProcSample {
            cpu: Duration::from_nanos(self.cpu_ns),
            threads: self.threads,
            rss: self.rss,
            pss: self.pss,
            voluntary_switches: self.voluntary_switches,
            involuntary_switches: self.involuntary_switches,
            reaped_children: Duration::from_nanos(self.reaped_children_ns),
            thread_set: self.thread_set,
            ..ProcSample::default()
        }
    }
}

/// The other answers: this machine, what is left of a tree, or why a question has no answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum Answer {
    Sample(SampleLine),
    Machine {
        kernel: String,
        cpu_model: String,
        cores: usize,
        cpus_allowed: Option<String>,
    },
    Leftovers {
        leftovers: Vec<i32>,
    },
    Error {
        error: String,
    },
}

/// This machine, as bench's environment records each host.
fn machine() -> Answer {
    let (kernel, cpu_model) = sys::machine::machine();
    Answer::Machine {
        kernel,
        cpu_model,
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        cpus_allowed: sys::procfs::cpus_allowed(sys::process::pid()),
    }
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
                    Ok(s) => Answer::Sample(SampleLine::of(&s)),
                    Err(e) => Answer::Error { error: e.to_string() },
                }
            }
            "leftovers" => {
                let left: Vec<i32> = seen
                    .iter()
                    .copied()
                    .filter(|p| *p != pid && sys::procfs::is_running(*p))
                    .collect();
                Answer::Leftovers { leftovers: left }
            }
            "" => continue,
            other => Answer::Error {
                error: format!("unknown question '{other}'"),
            },
        };
        let line = serde_json::to_string(&answer).expect("an answer serialises");
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            return Ok(());
        }
    }
}
