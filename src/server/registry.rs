//! The model descriptor every file in `models/` exports; the list itself is `models::ALL`.

use super::config::Workers;
use super::ctx::Ctx;
use super::error::Error;
use super::flag::Flag;

/// The four families of `muxlab models`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// One connection per process or thread, blocking calls.
    Blocking,
    /// One thread waits on many descriptors (select, poll, epoll).
    Multiplexing,
    /// Production epoll designs with several threads or processes.
    EpollArchitecture,
    /// Completion-based I/O (io_uring) and runtimes.
    Completion,
}

impl Family {
    pub fn name(&self) -> &'static str {
        match self {
            Family::Blocking => "blocking",
            Family::Multiplexing => "multiplexing",
            Family::EpollArchitecture => "epoll architecture",
            Family::Completion => "completion",
        }
    }
}

/// A registered model: its description and its entry point.
pub struct Model {
    /// The `--model` value.
    pub name: &'static str,
    pub family: Family,
    /// One line: how it waits and dispatches.
    pub mechanism: &'static str,
    /// A real product built this way.
    pub product: &'static str,
    /// The seed article that measured it.
    pub seed: &'static str,
    /// What `--workers` means for it.
    pub workers: Workers,
    /// The model-specific flags it honours; the others are refused.
    pub flags: &'static [Flag],
    /// Serves one connection at a time per worker (the backlog holds the rest): its concurrency
    /// is its number of workers (`muxlab models` says so).
    pub one_conn_per_worker: bool,
    /// Default `--max-conns` when the fd-limit-based default is too high for the model.
    pub default_max_conns: Option<usize>,
    /// The fewest workers it runs by default (a pool for blocking work is not sized by the
    /// CPUs: libuv's holds 4).
    pub min_workers: usize,
    /// The listener is bound with SO_REUSEPORT, so workers can bind their own on the same port.
    pub reuseport: bool,
    /// Its syscalls go through `sys` and are counted; `false` where a runtime makes them
    /// (tokio): the `syscalls` counter is then not measured, `null` in the stats line, never 0.
    pub counts_syscalls: bool,
    /// How it hands requests to its workers, for the queueing prediction (`Unknown`: none).
    pub queueing: Discipline,
    /// How many event streams (`/stream`) it can hold open at once, and what each costs it.
    pub streams: Streams,
    /// Which of its threads touch keyed data (resp, memcache): the stores it may keep, and
    /// the one it keeps by default.
    pub data: crate::store::Toucher,
    /// Its workers' loops take keyed commands from each other (`server::crossing::hops`): it may keep
    /// `--store sharded`.
    pub shards: bool,
    /// Threads it runs beside its `--workers` (io-threads' executor): each has a block of
    /// counters and a place at the start gate, after the workers'.
    pub extra_threads: usize,
    /// Runs until the stop flag is set; returns once every worker has stopped.
    pub run: fn(&'static Ctx) -> Result<(), Error>,
}

impl Model {
    /// The workers it runs with `--workers given` on `cpus` CPUs: 1 for a model without
    /// workers, else as given, else one per CPU (at least `min_workers`).
    pub fn worker_count(&self, given: Option<usize>, cpus: usize) -> usize {
        match (self.workers, given) {
            (Workers::None, _) => 1,
            (_, Some(n)) => n,
            (_, None) => cpus.max(self.min_workers).max(1),
        }
    }

    /// The defaults a descriptor starts from (`..Model::BASE`): no workers, no model-specific
    /// flags, many connections per worker, the fd-limit-based `--max-conns`, a plain listener.
    pub const BASE: Model = Model {
        name: "",
        family: Family::Multiplexing,
        mechanism: "",
        product: "",
        seed: "-",
        workers: Workers::None,
        flags: &[],
        one_conn_per_worker: false,
        default_max_conns: None,
        min_workers: 1,
        reuseport: false,
        counts_syscalls: true,
        queueing: Discipline::Unknown,
        streams: Streams::Timers,
        data: crate::store::Toucher::Threads,
        shards: false,
        extra_threads: 0,
        run: |_| Ok(()),
    };
}

/// How many event streams a design holds at once, said up front (`muxlab models`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streams {
    /// Thousands: a stream is a timer (a deadline heap's entry, a timeout operation, a runtime's
    /// timer) and its connection's buffers.
    Timers,
    /// One at a time per worker: a stream holds its worker for its whole life.
    OnePerWorker,
    /// A thread per stream, blocked between events.
    ThreadEach,
    /// A process per stream, blocked between events (at most `--max-conns`, 1,000 by default).
    ProcessEach,
    /// Under FD_SETSIZE (1,024) descriptors, streams and listener together.
    UnderFdSetSize,
    /// A green thread per stream, parked between events.
    GreenEach,
}

impl Streams {
    /// What `muxlab models` says.
    pub fn says(self) -> &'static str {
        match self {
            Streams::Timers => "thousands of streams, a timer each",
            Streams::OnePerWorker => "one stream at a time per worker",
            Streams::ThreadEach => "a thread per connection or stream: four mappings each (its stack, its signal stack, a guard page each), so vm.max_map_count (65,530 by default) holds it to about 16,000",
            Streams::ProcessEach => "a process per stream",
            Streams::UnderFdSetSize => "streams under 1,024 descriptors",
            Streams::GreenEach => "a green thread per connection or stream: two mappings each (its stack and its guard page), so vm.max_map_count (65,530 by default) holds it to about 32,000",
        }
    }
}

/// How a design hands requests to its workers: declared by each model here, read by the
/// queueing prediction (the `queueing` layer above), the one property of a design it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discipline {
    /// Not modelled (one connection at a time per worker, work stealing, ...): no prediction.
    Unknown,
    /// One queue every worker takes from; a single event loop is one worker.
    Shared,
    /// A queue per worker: a connection stays with the worker it was given.
    PerWorker(Assign),
    /// A thread or process per connection: no queue, only the CPUs are shared.
    PerConnection,
    /// Green threads over the workers (goroutines): a thread per connection whose computing
    /// shares the workers in slices (their run queues, stealing between them: one line), and
    /// whose blocking calls hold no worker.
    Green,
}

/// How connections are given to workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assign {
    /// In turn: an acceptor hands them out (dispatch, multi-reactor).
    RoundRobin,
    /// At random: the kernel's SO_REUSEPORT hash, or whichever worker wins the accept.
    Random,
}

impl Discipline {
    /// In words, for `muxlab predict` and the verdicts.
    pub fn describe(self) -> &'static str {
        match self {
            Discipline::Unknown => "not modelled",
            Discipline::Shared => "one queue shared by the workers",
            Discipline::PerWorker(Assign::RoundRobin) => "a queue per worker, connections handed out in turn",
            Discipline::PerWorker(Assign::Random) => "a queue per worker, connections spread by the kernel",
            Discipline::PerConnection => "a thread per connection, no queue",
            Discipline::Green => "green threads sharing the workers in slices, blocking calls off them",
        }
    }
}
