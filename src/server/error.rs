//! What can go wrong starting or running a server: the bottom of `server/`, importing only the
//! parsers below it (`--work`'s, the flags only some models honour).

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::flag::Flag;
use super::work::BadWork;
use crate::store::{Kind, Toucher};
use crate::units::{format_duration, CpuList};

pub use crate::sys::error::IoError;

/// What can go wrong starting or running a server. Each variant but [`Error::Io`] is the
/// user's to change (exit code 2); the message says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--workers` for a model that has none.
    #[error("model '{model}' has no workers; drop --workers (or pick a model with workers: see `muxlab models`)")]
    NoWorkers { model: &'static str, workers: usize },
    #[error("--workers must be at least 1")]
    ZeroWorkers,
    #[error("--workers {workers} is more than 1024")]
    TooManyWorkers { workers: usize },
    #[error("--procs {procs} is not from 1 to {}", super::config::MOST_PROCS)]
    ProcsOutOfRange { procs: usize },
    /// `--procs` for a design that does not form process groups.
    #[error("model '{model}' does not run as a process group: {why}; drop --procs (see `muxlab models` for the designs that do)")]
    NoGroup { model: &'static str, why: NoGroup },
    /// `--procs` with a keyed protocol: each process would keep a keyspace of its own.
    #[error("--procs {procs} with a keyed protocol would split one keyspace into {procs} unrelated ones (a key set through one process is missing in the others); drop --procs")]
    GroupKeyspaces { procs: usize },
    /// A flag the model does not honour.
    #[error(
        "model '{model}' has no {} ({}); drop it, or see `muxlab models` for the models that do",
        flag.name(),
        flag.lacking()
    )]
    Unhonoured { model: &'static str, flag: Flag },
    #[error("--batch-wait {} is more than 10ms: it is latency added to every busy turn", format_duration(*wait))]
    BatchWaitOver { wait: Duration },
    #[error(
        "--green-slice {} is not from 1us to 1s: it is how long cpu: work runs before the others in line",
        format_duration(*slice)
    )]
    GreenSliceOutOfRange { slice: Duration },
    #[error("--backlog must be at least 1")]
    BacklogUnderOne { backlog: i32 },
    #[error("--max-output must be at least 1 byte")]
    ZeroMaxOutput,
    #[error("--max-conns must be at least 1")]
    ZeroMaxConns,
    #[error("--nofile {nofile} is too low: the server needs at least 16 descriptors")]
    NofileTooLow { nofile: u64 },
    #[error("--work-from-request reads an HTTP request's query: it needs --proto http or h2")]
    WorkFromRequestNeedsHttp,
    #[error("--stream makes HTTP responses event streams: it needs --proto http or h2")]
    StreamNeedsHttp,
    #[error("--max-streams must be at least 1")]
    ZeroMaxStreams,
    #[error("--max-work must be more than zero")]
    ZeroMaxWork,
    #[error("--packet-size must be at least 1 byte")]
    ZeroPacketSize,
    /// `--tls` that makes no server configuration.
    #[error(transparent)]
    Tls(#[from] crate::proto::BadTls),
    /// `--work` that does not read.
    #[error(transparent)]
    Work(#[from] BadWork),
    /// `--store`, `--max-keys` or `--max-memory` without a keyed protocol.
    #[error(
        "--store, --max-keys and --max-memory are the keyed state of resp and memcache: they need --proto resp or memcache"
    )]
    KeyedFlagsWithoutKeyedProto,
    #[error("--max-keys and --max-memory hold at least one key: leave them out for no bound")]
    ZeroKeyBound,
    #[error("--max-value must be from 1 byte to 1GiB (a command is held whole until it runs)")]
    MaxValueOutOfRange { max_value: usize },
    /// `--work` with a keyed protocol.
    #[error(
        "--work is each HTTP, echo or packet request's work: a resp or memcache command's work is its run against the store"
    )]
    WorkWithKeyedProto,
    /// `--reserve` that leaves the pool no worker for the long work.
    #[error(
        "--reserve under={}:{reserved} reserves every one of the pool's {workers} workers: leave at least one for the long work (give more --workers)",
        format_duration(*under)
    )]
    ReserveTakesAll {
        under: Duration,
        reserved: usize,
        workers: usize,
    },
    /// `--store sharded` for a model with no worker loops to shard over.
    #[error(
        "--store {store} is a shard per worker loop, each taking commands for its keys from the others: model '{model}' has no such loops (multi-reactor and dispatch do)"
    )]
    NoShards { store: Kind, model: &'static str },
    /// A one-thread store for a design where more than one thread touches data.
    #[error(
        "--store {store} is one thread's table, and model '{model}' with {workers} worker(s) has more than one thread touching data ({}): use --store locked",
        data.says()
    )]
    StoreNotShared {
        store: Kind,
        model: &'static str,
        workers: usize,
        data: Toucher,
    },
    /// `--max-keys` under the number of tables that share it.
    #[error(
        "--max-keys {max_keys} under --store {store}: its {tables} tables each hold a share of the keys, and one with no share holds none: give at least {tables}"
    )]
    MaxKeysUnderTables {
        max_keys: usize,
        store: Kind,
        tables: usize,
    },
    /// `--cpus` the process may not be pinned to.
    #[error("cannot pin to CPUs {cpus:?}: {source}")]
    Pin { cpus: CpuList, source: io::Error },
    #[error("{addr} is already in use: pick another port with --port, or use --port 0 for any free port")]
    AddrInUse { addr: SocketAddr },
    /// `--metrics` could not be bound.
    #[error(
        "--metrics {addr}: cannot serve metrics there: {source} (pick another address, or port 0 for any free one)"
    )]
    MetricsAddr { addr: SocketAddr, source: io::Error },
    /// `--addr` that is not one of this machine's.
    #[error("{addr} is not an address of this machine: pick another with --addr")]
    NotOurAddress { addr: IpAddr },
    /// A port under 1024 without the privilege.
    #[error("port {port} needs privileges: use a port above 1023 or --port 0")]
    PortNeedsPrivileges { port: u16 },
    /// `--max-conns` past what the machine's settings hold for the design.
    #[error("--max-conns {asked} is more than model '{model}' holds on this machine ({most}); what stops it: {bound}. `muxlab models` gives each design's ceiling; --procs N runs an event-loop design as N processes")]
    OverCeiling {
        model: &'static str,
        asked: usize,
        most: u64,
        bound: super::bound::Bound,
    },
    /// A member of a process group ended while the group ran (and stopped it).
    #[error("process {index} of the group (pid {pid}) {}; the group stopped", ended(*exit))]
    MemberEnded {
        index: usize,
        pid: i32,
        exit: crate::sys::process::Exit,
    },
    /// A system call failed.
    #[error(transparent)]
    Io(#[from] IoError),
}

/// How a process ended, in words.
fn ended(exit: crate::sys::process::Exit) -> String {
    match exit {
        crate::sys::process::Exit::Code(c) => format!("exited with code {c}"),
        crate::sys::process::Exit::Signal(s) => format!("was killed by signal {s}"),
    }
}

impl Error {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        !matches!(self, Error::Io(_) | Error::MemberEnded { .. })
    }
}

/// Wraps an `io::Error` with what was being done, as a server error.
pub fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> Error {
    let wrap = crate::sys::error::io_err(what);
    move |source| Error::Io(wrap(source))
}

/// Why a design does not form process groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoGroup {
    /// A thread or process per connection: its ceiling is threads or memory, not descriptors.
    Blocking,
    /// It is made of processes already: `--workers` sets how many.
    Processes,
    /// A green thread per connection: its ceiling is `vm.max_map_count` (a stack each).
    Green,
}

impl std::fmt::Display for NoGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoGroup::Blocking => {
                "it serves a connection with a thread or a process of its own, or one at a time per worker, so threads, memory or its workers bound it before descriptors do"
            }
            NoGroup::Processes => "its workers are processes already; --workers sets how many",
            NoGroup::Green => "a green thread per connection holds a stack mapping, so vm.max_map_count bounds it before descriptors do",
        })
    }
}
