//! Runs past the descriptor limit: the connections are split over child processes (this same
//! program with `--shard i/k`), each printing its tally; the parent merges them losslessly.

use std::ffi::OsString;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use super::error::{io_err, Error};
use super::tally::Tally;
use super::Outcome;
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

/// What a shard prints on stdout.
pub fn to_wire(o: &Outcome) -> Value {
    json!({"event": "shard", "tally": o.tally.to_wire(), "elapsed_s": o.elapsed.as_secs_f64(),
        "client_cpu_s": o.client_cpu.as_secs_f64(), "threads": o.threads, "interrupted": o.interrupted})
}

fn from_wire(v: &Value) -> Outcome {
    Outcome {
        tally: Tally::from_wire(&v["tally"]),
        elapsed: Duration::from_secs_f64(v["elapsed_s"].as_f64().unwrap_or(0.0)),
        client_cpu: Duration::from_secs_f64(v["client_cpu_s"].as_f64().unwrap_or(0.0)),
        threads: v["threads"].as_u64().unwrap_or(1) as usize,
        shards: 1,
        interrupted: v["interrupted"].as_bool().unwrap_or(false),
    }
}

/// Runs `k` shards of the command line `args` (without the program name) and merges them.
pub fn run(args: &[OsString], k: usize) -> Result<Outcome, Error> {
    let exe = std::env::current_exe().map_err(io_err("cannot find this program to start shards"))?;
    let mut children = Vec::new();
    for i in 0..k {
        let child = Command::new(&exe)
            .args(args)
            .arg("--shard")
            .arg(format!("{i}/{k}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(io_err(format!("starting shard {i}")))?;
        children.push(child);
    }
    let mut merged: Option<Outcome> = None;
    let mut failures = Vec::new();
    for (i, mut child) in children.into_iter().enumerate() {
        let mut out = String::new();
        let _ = child.stdout.take().expect("piped").read_to_string(&mut out);
        let status = child.wait().map_err(io_err("waiting for a shard"))?;
        let report = out
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["event"] == "shard");
        match report {
            Some(v) => {
                let o = from_wire(&v);
                merged = Some(match merged {
                    None => o,
                    Some(mut m) => {
                        m.tally.merge(&o.tally);
                        m.elapsed = m.elapsed.max(o.elapsed);
                        m.client_cpu += o.client_cpu;
                        m.threads = m.threads.max(o.threads);
                        m.interrupted |= o.interrupted;
                        m
                    }
                });
            }
            None => failures.push(format!("shard {i} reported nothing ({status})")),
        }
    }
    if !failures.is_empty() {
        return Err(Error::Failed(failures.join("; ")));
    }
    let mut o = merged.ok_or("no shard ran")?;
    o.shards = k;
    Ok(o)
}
