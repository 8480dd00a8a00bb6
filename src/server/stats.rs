//! Shared-memory counters: one cache-line-aligned block per worker, in one `MAP_SHARED`
//! mapping made before any fork, so threads and forked processes count the same way.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Declares [`Counter`] and its JSON names together, so the two cannot drift apart.
macro_rules! counters {
    ($($(#[doc = $doc:literal])* $variant:ident => $name:literal,)*) => {
        /// One counter of a worker block.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Counter {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Counter {
            /// Every counter, in block order.
            pub const ALL: &'static [Counter] = &[$(Counter::$variant,)*];

            /// The counter's key in the `stats` line.
            pub fn name(self) -> &'static str {
                match self {
                    $(Counter::$variant => $name,)*
                }
            }
        }
    };
}

counters! {
    /// Connections accepted and kept.
    Accepted => "accepted",
    /// Connections closed (kept ones only).
    Closed => "closed",
    /// Refused: `--max-conns` reached.
    RejectedLimit => "rejected_limit",
    /// Refused: the descriptor does not fit in select's FD_SETSIZE.
    RejectedFdSetSize => "rejected_fdsetsize",
    /// Refused: out of descriptors (EMFILE / ENFILE).
    RejectedEmfile => "rejected_emfile",
    /// Requests answered (HTTP requests, echo reads, packet frames).
    Requests => "requests",
    /// Bytes read from connections.
    BytesIn => "bytes_in",
    /// Bytes written to connections.
    BytesOut => "bytes_out",
    /// Returns from the waiting call (epoll_wait, poll, select, a blocking accept / read).
    Loops => "loop_iterations",
    /// Events those returns delivered (for select and poll: descriptors examined).
    Events => "events",
    /// Events that found work to do (bytes moved, a connection accepted).
    Useful => "useful_events",
    /// Accept attempts after a wake-up that found nothing (another worker won the race).
    AcceptLost => "accept_lost",
    /// System calls issued by the model (counted by `sys`).
    Syscalls => "syscalls",
    /// Worker processes restarted after dying.
    Restarts => "restarts",
    /// A fork() or thread spawn failed (the connection it was for was closed).
    SpawnFailed => "spawn_failed",
    /// A session stopped consuming input because its connection's unsent output reached the
    /// bound: `--max-output`, or 64 KiB in the blocking models, which write as they go (see
    /// `Worker::on_input`).
    OutputPaused => "output_paused",
    /// Closed: silent between requests for `--idle-timeout`.
    ClosedIdle => "closed_idle",
    /// Closed: its output made no progress for `--idle-timeout` (nginx's send_timeout).
    ClosedSendTimeout => "closed_send_timeout",
    /// Closed: its HTTP/2 output waited for the client's window for `--idle-timeout` with
    /// nothing moving (a flow-control stall); its streams reset.
    ClosedWindowStall => "closed_window_stall",
    /// Closed with 408: a request head not complete within `--header-timeout`.
    ClosedHeaderTimeout => "closed_header_timeout",
    /// A loop stopped accepting: it held its process's share of connections.
    AcceptPaused => "accept_paused",
    /// uring: a receive found every provided buffer of its ring in use (ENOBUFS) and was
    /// submitted again: a stall a ring too small for its connections shows.
    RecvNoBuffers => "recv_no_buffers",
    /// HTTP/2 streams opened.
    StreamsOpened => "streams_opened",
    /// HTTP/2 streams refused: over `--max-streams`.
    StreamsRefused => "streams_refused",
    /// HTTP/2 streams reset, by the client or by a stream error.
    StreamsReset => "streams_reset",
    /// HTTP/2 connections ended with ENHANCE_YOUR_CALM past `--h2-client-resets`: the client
    /// reset open or answered streams too fast (Rapid Reset).
    CalmClientResets => "h2_calm_client_resets",
    /// ... past `--h2-server-resets`: the client made the server reset streams too fast
    /// (MadeYouReset).
    CalmServerResets => "h2_calm_server_resets",
    /// ... past `--h2-quiet-frames`: frames that produce no output, too many.
    CalmQuietFrames => "h2_calm_quiet_frames",
    /// Requests whose time in the server was measured (those of one feed in eight).
    TimedRequests => "timed_requests",
    /// Nanoseconds those requests spent in the server, summed: from when it learned their
    /// input was there (the wait's return in an event loop, else the read's) to when their
    /// responses were ready to be handed to the kernel (the end of the feed that answered them).
    ResidenceNs => "residence_ns",
    /// Of that, nanoseconds before their handling began (behind other connections' requests of
    /// the same wake-up, or earlier requests of the same read).
    WaitInsideNs => "wait_inside_ns",
    /// Event streams (`/stream`, `--stream`) begun.
    SseStarted => "sse_started",
    /// ... that sent every event.
    SseFinished => "sse_finished",
    /// ... cut before their last event: the connection closed, its HTTP/2 stream was reset, or
    /// the server stopped.
    SseCut => "sse_cut",
    /// Events sent.
    SseEvents => "sse_events",
    /// Events sent more than `--stream-slack` after their due time.
    SseLate => "sse_late",
    /// Events by lateness (sent after their due time): up to 1 ms, 2 ms, 5 ms, 10 ms, 50 ms,
    /// 100 ms, 1 s, and more.
    SseLateLe1ms => "sse_late_le_1ms",
    SseLateLe2ms => "sse_late_le_2ms",
    SseLateLe5ms => "sse_late_le_5ms",
    SseLateLe10ms => "sse_late_le_10ms",
    SseLateLe50ms => "sse_late_le_50ms",
    SseLateLe100ms => "sse_late_le_100ms",
    SseLateLe1s => "sse_late_le_1s",
    SseLateOver1s => "sse_late_over_1s",
    /// `offload`: requests whose work went to the pool, and those whose work was done on the
    /// loop (drawn at or under `--offload-over`, the queue full, or a request the session
    /// cannot answer later: a body, echo, packet, an event stream).
    OffloadQueued => "offload_queued",
    OffloadInline => "offload_inline",
    /// ... pool jobs done, those a reserved worker took (`--reserve`), and those dropped before
    /// they ran: their HTTP/2 stream was reset, their connection closed, or the server stopped.
    OffloadDone => "offload_done",
    OffloadReserved => "offload_reserved",
    OffloadCancelled => "offload_cancelled",
    /// Nanoseconds the pool's jobs waited in its queue, summed (÷ offload_done: the mean wait).
    OffloadWaitNs => "offload_wait_ns",
    /// resp and memcache: commands run against the store by kind (GET and MGET, memcache's
    /// get and gets; SET and MSET, memcache's set, add and replace; DEL and delete; INCR and
    /// DECR in their forms; the rest), keys read that were there and those that were not, and
    /// commands answered with an error (unknown, malformed, past a bound, or failed).
    KeyedGets => "keyed_gets",
    KeyedSets => "keyed_sets",
    KeyedDels => "keyed_dels",
    KeyedIncrs => "keyed_incrs",
    KeyedOther => "keyed_other",
    KeyedHits => "keyed_hits",
    KeyedMisses => "keyed_misses",
    KeyedErrors => "keyed_errors",
    /// Commands run against the store by this thread (io-threads: the executor's; sharded:
    /// each owner's, its own connections' and the hops it took), and commands sent to
    /// another thread to run (a key of another worker's shard, or the executor).
    KeyedExecuted => "keyed_executed",
    KeyedHops => "keyed_hops",
    /// Keys the store dropped past their expiry time (touched by a command, or swept), and
    /// keys it evicted to stay within --max-keys and --max-memory.
    KeyedExpired => "keyed_expired",
    KeyedEvicted => "keyed_evicted",
    /// Table locks commands took (`locked`, `striped`, and `sharded`'s shard locks, which their
    /// owners take), those that found the lock held and waited, and the one in 64 timed: their
    /// nanoseconds waiting for it and holding it (÷ keyed_lock_timed: the mean wait and
    /// critical section).
    KeyedLocks => "keyed_locks",
    KeyedLockContended => "keyed_lock_contended",
    KeyedLockTimed => "keyed_lock_timed",
    KeyedLockWaitedNs => "keyed_lock_waited_ns",
    KeyedLockHeldNs => "keyed_lock_held_ns",
    /// green: threads taken from another processor's run queue, `cpu:` work's slices given
    /// up to the threads in line, and processors handed to another carrier for a blocking call.
    GreenSteals => "green_steals",
    GreenSlices => "green_slices",
    GreenHandoffs => "green_handoffs",
    /// green's high-water marks, kept in worker 0's block (so the total is the mark): carrier
    /// threads alive at once, blocking calls in flight at once, and the deepest a green
    /// thread's stack went (bytes).
    GreenThreadsPeak => "green_threads_peak",
    GreenCallsPeak => "green_calls_peak",
    GreenStackPeak => "green_stack_peak",
}

impl Counter {
    /// green's counters: measured by that model only (null in the others' stats lines).
    pub const GREEN: [Counter; 6] = [
        Counter::GreenSteals,
        Counter::GreenSlices,
        Counter::GreenHandoffs,
        Counter::GreenThreadsPeak,
        Counter::GreenCallsPeak,
        Counter::GreenStackPeak,
    ];
    /// Of those, the high-water marks kept in worker 0's block only (null in the others').
    pub const GREEN_MARKS: [Counter; 3] = [
        Counter::GreenThreadsPeak,
        Counter::GreenCallsPeak,
        Counter::GreenStackPeak,
    ];

    /// The lateness histogram's buckets: each one's upper bound (`None`: the last, unbounded).
    pub const SSE_LATENESS: [(Counter, Option<std::time::Duration>); 8] = {
        use std::time::Duration;
        [
            (Counter::SseLateLe1ms, Some(Duration::from_millis(1))),
            (Counter::SseLateLe2ms, Some(Duration::from_millis(2))),
            (Counter::SseLateLe5ms, Some(Duration::from_millis(5))),
            (Counter::SseLateLe10ms, Some(Duration::from_millis(10))),
            (Counter::SseLateLe50ms, Some(Duration::from_millis(50))),
            (Counter::SseLateLe100ms, Some(Duration::from_millis(100))),
            (Counter::SseLateLe1s, Some(Duration::from_secs(1))),
            (Counter::SseLateOver1s, None),
        ]
    };
}

/// Words per block: 192 x 8 bytes = 24 cache lines, so neighbours never share a line: the
/// counters, then from [`HIST`] the request duration histogram's buckets and its sum.
const BLOCK: usize = 192;
/// Where a block's duration histogram begins: its buckets ([`crate::metrics::SLOTS`]), then
/// the nanoseconds it counted, summed.
const HIST: usize = 128;
const HIST_SUM: usize = HIST + crate::metrics::SLOTS;
const _: () = assert!(Counter::ALL.len() <= HIST && HIST_SUM < BLOCK);

/// One worker's counters.
#[derive(Clone, Copy)]
pub struct Counters {
    block: &'static [AtomicU64],
}

impl Counters {
    #[inline]
    pub fn add(&self, c: Counter, n: u64) {
        self.block[c as usize].fetch_add(n, Ordering::Relaxed);
    }
    /// Raises a high-water mark to `v` (it never goes down).
    #[inline]
    pub fn raise(&self, c: Counter, v: u64) {
        self.block[c as usize].fetch_max(v, Ordering::Relaxed);
    }
    #[inline]
    pub fn get(&self, c: Counter) -> u64 {
        self.block[c as usize].load(Ordering::Relaxed)
    }
    /// `n` requests of `ns` nanoseconds each, into the duration histogram.
    #[inline]
    pub fn observe(&self, ns: u64, n: u64) {
        self.block[HIST + crate::metrics::slot(ns)].fetch_add(n, Ordering::Relaxed);
        self.block[HIST_SUM].fetch_add(ns.saturating_mul(n), Ordering::Relaxed);
    }
    /// The duration histogram: its buckets' counts and the nanoseconds it counted.
    pub fn durations(&self) -> ([u64; crate::metrics::SLOTS], u64) {
        let mut counts = [0u64; crate::metrics::SLOTS];
        for (i, c) in counts.iter_mut().enumerate() {
            *c = self.block[HIST + i].load(Ordering::Relaxed);
        }
        (counts, self.block[HIST_SUM].load(Ordering::Relaxed))
    }
    /// Adds the syscalls this thread issued since the last flush.
    #[inline]
    pub fn flush_syscalls(&self) {
        self.add(Counter::Syscalls, crate::sys::take_syscalls());
    }
    fn values(&self) -> CounterValues {
        CounterValues(
            Counter::ALL
                .iter()
                .map(|&c| (c.name().to_string(), Some(self.get(c))))
                .collect(),
        )
    }
}

/// The whole region: block 0 holds process-wide words, blocks 1..=workers the workers.
#[derive(Clone, Copy)]
pub struct Stats {
    words: &'static [AtomicU64],
    workers: usize,
}

/// Word 0 of block 0: connections open right now, across all workers.
const LIVE: usize = 0;
/// Word 1 of block 0: the stop flag (set by SIGTERM / SIGINT).
const STOP: usize = 1;
/// Word 2 of block 0: the accept mutex of `procs-accept --accept mutex` (0 free, else holder pid).
const ACCEPT_MUTEX: usize = 2;
/// Word 3 of block 0: the ordinals handed to forked processes (their work's draws differ).
const ORDINALS: usize = 3;
/// Word 4 of block 0: the most connections open at once so far.
const PEAK: usize = 4;

impl Stats {
    /// Maps a region for `workers` workers (at least one).
    pub fn new(workers: usize) -> io::Result<Stats> {
        let workers = workers.max(1);
        let words = crate::sys::shm::shared_words((workers + 1) * BLOCK)?;
        Ok(Stats { words, workers })
    }

    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Worker `i`'s block.
    ///
    /// # Panics
    /// When `i` is not below the number of workers the region was made for.
    pub fn worker(&self, i: usize) -> Counters {
        assert!(i < self.workers, "worker {i} of {}", self.workers);
        let b = 1 + i;
        Counters {
            block: &self.words[b * BLOCK..(b + 1) * BLOCK],
        }
    }

    pub fn live(&self) -> &'static AtomicU64 {
        &self.words[LIVE]
    }

    pub fn stop_flag(&self) -> &'static AtomicU64 {
        &self.words[STOP]
    }

    pub fn accept_mutex(&self) -> &'static AtomicU64 {
        &self.words[ACCEPT_MUTEX]
    }

    /// The most connections open at once so far, across all workers and processes.
    pub fn held_peak(&self) -> u64 {
        self.words[PEAK].load(Ordering::Relaxed)
    }

    /// A number no other process of this server got (from 1).
    pub fn next_ordinal(&self) -> u64 {
        self.words[ORDINALS].fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Applies a connection limit: counts the connection as accepted in `c` and returns `true`,
    /// or counts a rejection and returns `false` when `max` are already open.
    pub fn admit(&self, c: Counters, max: usize) -> bool {
        let live = self.live().fetch_add(1, Ordering::AcqRel);
        if live as usize >= max {
            self.live().fetch_sub(1, Ordering::AcqRel);
            c.add(Counter::RejectedLimit, 1);
            return false;
        }
        c.add(Counter::Accepted, 1);
        self.words[PEAK].fetch_max(live + 1, Ordering::Relaxed);
        true
    }

    /// Records that an admitted connection was closed.
    pub fn release(&self, c: Counters) {
        self.live().fetch_sub(1, Ordering::AcqRel);
        c.add(Counter::Closed, 1);
    }

    /// Sum of one counter over all workers.
    pub fn total(&self, c: Counter) -> u64 {
        (0..self.workers).map(|i| self.worker(i).get(c)).sum()
    }

    /// The `stats` line's counters: totals and one set per worker.
    pub fn values(&self) -> (CounterValues, Vec<CounterValues>) {
        let totals = CounterValues(
            Counter::ALL
                .iter()
                .map(|&c| (c.name().to_string(), Some(self.total(c))))
                .collect(),
        );
        (totals, (0..self.workers).map(|w| self.worker(w).values()).collect())
    }
}

/// Counters by name, as a stats line carries them: `None` (null) for one that was not
/// counted (a runtime's own syscalls). Read through [`Counter`]s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterValues(BTreeMap<String, Option<u64>>);

impl CounterValues {
    /// The value of `c`, where it was counted.
    pub fn get(&self, c: Counter) -> Option<u64> {
        self.0.get(c.name()).copied().flatten()
    }

    /// Marks `c` as not counted.
    pub fn not_counted(&mut self, c: Counter) {
        self.0.insert(c.name().to_string(), None);
    }
}
