//! The load engine: one epoll loop per thread, each owning its connections, its timers and its
//! [`Tally`]. Nothing is shared on the hot path; the progress line reads a per-thread word the
//! loop stores once per iteration.
//!
//! A connection cycles Down -> Connecting -> Up. While Up it keeps up to `--pipeline` requests
//! in flight, each remembered as (intended send time, actual send time). Closed loop: the next
//! request goes out when a response arrives (after `--think`). Open loop (`--rate`): send times
//! are scheduled at a fixed rate per thread whether or not responses keep up; a request whose
//! time has come waits in a backlog for a free connection, and its latency is measured from the
//! scheduled time (coordinated-omission-correct), the uncorrected latency from the actual send.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::request::{EchoReader, HttpReader, Payload};
use super::tally::{ErrorClass, Tally};
use super::Spec;
use crate::sys;
use crate::sys::epoll::{Epoll, Events, ERR, HUP, IN, OUT, RDHUP};

/// How often in-flight requests are checked against `--timeout`.
const SCAN: Duration = Duration::from_millis(50);

/// Far enough ahead to mean "not yet": the window's start before connecting has ended.
const NOT_YET: Duration = Duration::from_secs(100 * 365 * 86_400);
/// First and largest pause before reconnecting after a failure.
pub(super) const BACKOFF_MIN: Duration = Duration::from_millis(10);
pub(super) const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// One thread's share of the run.
#[derive(Debug, Clone)]
pub struct ThreadPlan {
    /// Connection slots this thread runs.
    pub conns: usize,
    /// Global number of its first slot (echo patterns differ per slot).
    pub first_slot: u64,
    /// Requests to send in the measured window (`-n`); `None`: run for the duration.
    pub quota: Option<u64>,
    /// Requests per second for this thread (`--rate`).
    pub rate: Option<f64>,
    /// New connections per second for this thread (`--connect-rate`).
    pub connect_rate: Option<f64>,
    /// When everything started.
    pub t0: Instant,
}

/// A progress word per thread, padded to its own cache lines.
#[repr(align(128))]
#[derive(Default)]
pub struct Progress {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
}

/// When the run's window may start: once every engine thread has seen the first attempt of
/// each of its connections end (up, or failed), or the connect timeout pass. The last thread
/// to get there sets `t0`; each thread's warm-up, window and schedule start from it.
#[derive(Debug)]
pub struct Start {
    left: AtomicUsize,
    t0: OnceLock<Instant>,
}

impl Start {
    pub fn new(threads: usize) -> Start {
        Start {
            left: AtomicUsize::new(threads),
            t0: OnceLock::new(),
        }
    }

    /// When connecting ended, once it has.
    pub fn t0(&self) -> Option<Instant> {
        self.t0.get().copied()
    }

    pub(super) fn thread_done(&self, now: Instant) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _ = self.t0.set(now);
        }
    }
}

/// Connects a thread starts at once before it serves events again: thousands of connects
/// (each can take a while in the kernel's port search) never starve the sockets already up.
const OPEN_BATCH: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Down,
    Connecting,
    /// TCP is up, the TLS handshake is not done (https targets).
    Handshaking,
    Up,
}

pub(super) struct Conn {
    /// Global slot number.
    pub(super) slot: u64,
    pub(super) fd: Option<OwnedFd>,
    /// The TLS connection over `fd` (https targets).
    pub(super) tls: Option<Box<rustls::ClientConnection>>,
    /// When the TLS handshake began.
    pub(super) tls_started: Instant,
    pub(super) state: State,
    /// When the current connect began.
    pub(super) started: Instant,
    /// (intended, actual) send times of requests awaiting responses, oldest first.
    pub(super) inflight: VecDeque<(Instant, Instant)>,
    /// Requests sent on the current socket.
    pub(super) on_socket: u64,
    pub(super) out: Vec<u8>,
    pub(super) out_pos: usize,
    pub(super) http: HttpReader,
    pub(super) echo: EchoReader,
    /// Echo messages sent on this slot (the pattern's sequence number).
    pub(super) send_seq: u64,
    /// A timer (think time or reconnect back-off) is set for this instant.
    pub(super) wake: Option<Instant>,
    /// A connect time under `--connect-rate` is booked for this slot (its timer is set).
    pub(super) connect_booked: bool,
    /// Counted among the connections up before sending started (`--connect-first`).
    pub(super) counted_up: bool,
    /// Its first connect attempt has ended (up, or failed).
    pub(super) tried: bool,
    pub(super) backoff: Duration,
    pub(super) connected_once: bool,
    /// The server announced it will close after the last response.
    pub(super) server_closing: bool,
    /// Queued in the free list of rate mode.
    pub(super) in_free: bool,
    /// Requests reserved (and counted) for this socket when it was opened, with a per-socket
    /// limit (`--close`, `--requests-per-conn`), so no socket opens for nothing at the end.
    pub(super) tickets: u64,
    /// How many of `tickets` were counted against the quota (reserved inside the window).
    pub(super) counted: u64,
}

/// Whether `t` falls in `window` (from its start, up to its end).
pub(super) fn in_window(window: Option<(Instant, Instant)>, t: Instant) -> bool {
    window.is_some_and(|(from, end)| t >= from && t < end)
}

/// One engine thread.
pub struct Engine<'a> {
    pub(super) spec: &'a Spec,
    pub(super) plan: ThreadPlan,
    pub(super) ep: Epoll,
    pub(super) conns: Vec<Conn>,
    pub(super) tally: Tally,
    pub(super) timers: BinaryHeap<Reverse<(Instant, usize)>>,
    pub(super) buf: Vec<u8>,
    pub(super) request: Vec<u8>,
    pub(super) measure_from: Instant,
    pub(super) end: Option<Instant>,
    /// Requests sent (or attempts failed) counted against the quota.
    pub(super) issued: u64,
    pub(super) inflight: usize,
    /// Requests reserved by sockets and not yet sent (sum of `tickets`).
    pub(super) reserved: u64,
    /// Rate mode: the next scheduled send, the interval, scheduled sends waiting, free conns.
    pub(super) next_intended: Instant,
    pub(super) interval: Option<Duration>,
    pub(super) backlog: VecDeque<Instant>,
    pub(super) free: VecDeque<usize>,
    /// Rate mode over a duration: intended send times scheduled inside the window, and those
    /// of them that will not complete inside it (their socket failed or closed, or the
    /// response came after the window): at the close each enters the corrected histogram at
    /// the window's end less its intended time.
    pub(super) scheduled: u64,
    pub(super) lost: Vec<Instant>,
    /// The window whose schedule is counted: (warm-up's end, end) of an open-loop run over a
    /// duration; `None` otherwise.
    pub(super) counted_window: Option<(Instant, Instant)>,
    pub(super) next_connect: Instant,
    pub(super) connect_interval: Option<Duration>,
    /// Requests may be sent (`--connect-first` holds them until every connection is up, or the
    /// connect timeout has passed).
    pub(super) sending: bool,
    /// Connections up while `sending` was held.
    pub(super) up_first: usize,
    pub(super) bind_next: usize,
    /// Slots whose first connect has not been started yet (they are opened in batches).
    opening: usize,
    /// Slots whose first connect attempt has not ended.
    pub(super) unresolved: usize,
    start: &'a Start,
    /// This thread has told `start` that its connecting is over.
    told_start: bool,
    /// The window's start is known (`measure_from`, `end` and the schedule are set from it).
    window_known: bool,
}

impl<'a> Engine<'a> {
    pub fn new(spec: &'a Spec, plan: ThreadPlan, start: &'a Start) -> io::Result<Engine<'a>> {
        // Until connecting is over, nothing is measured: the window is set by `begin_window`.
        let measure_from = plan.t0 + NOT_YET;
        let head_only = spec.method.eq_ignore_ascii_case("HEAD");
        let conns = (0..plan.conns)
            .map(|i| Conn {
                slot: plan.first_slot + i as u64,
                fd: None,
                tls: None,
                tls_started: plan.t0,
                state: State::Down,
                started: plan.t0,
                inflight: VecDeque::new(),
                on_socket: 0,
                out: Vec::new(),
                out_pos: 0,
                http: match spec.payload {
                    Payload::Generated(size) => HttpReader::new(head_only).verifying(plan.first_slot + i as u64, size),
                    _ => HttpReader::new(head_only),
                },
                echo: EchoReader::new(spec.size()),
                send_seq: 0,
                wake: None,
                connect_booked: false,
                counted_up: false,
                tried: false,
                backoff: BACKOFF_MIN,
                connected_once: false,
                server_closing: false,
                in_free: false,
                tickets: 0,
                counted: 0,
            })
            .collect();
        let tally = Tally {
            per_conn: vec![0; plan.conns],
            ..Default::default()
        };
        let interval = plan.rate.map(|r| Duration::from_secs_f64(1.0 / r));
        let connect_interval = plan.connect_rate.map(|r| Duration::from_secs_f64(1.0 / r));
        Ok(Engine {
            spec,
            ep: Epoll::new()?,
            conns,
            tally,
            timers: BinaryHeap::new(),
            buf: vec![0u8; 256 * 1024],
            request: super::request::http_request(
                &spec.method,
                spec.target(),
                spec.headers(),
                spec.close(),
                &spec.payload,
                spec.chunked(),
            ),
            measure_from,
            end: None,
            issued: 0,
            inflight: 0,
            reserved: 0,
            next_intended: plan.t0,
            interval,
            backlog: VecDeque::new(),
            free: VecDeque::new(),
            scheduled: 0,
            lost: Vec::new(),
            counted_window: None,
            next_connect: plan.t0,
            connect_interval,
            sending: false,
            up_first: 0,
            bind_next: plan.first_slot as usize,
            opening: 0,
            unresolved: plan.conns,
            start,
            told_start: false,
            window_known: false,
            plan,
        })
    }

    /// Whether what is committed at `now` counts against the quota: inside the window, or,
    /// before its start is known, when there is no warm-up (the window then starts with the
    /// first request).
    pub(super) fn counting(&self, now: Instant) -> bool {
        if self.window_known {
            now >= self.measure_from
        } else {
            self.spec.warmup().is_zero()
        }
    }

    /// Starts the next batch of first connects.
    fn open_some(&mut self, now: Instant) {
        let until = (self.opening + OPEN_BATCH).min(self.conns.len());
        while self.opening < until {
            let i = self.opening;
            self.opening += 1;
            self.start_connect(i, now);
        }
    }

    /// A slot's first attempt ended (it is up, or it failed).
    pub(super) fn first_try_over(&mut self, i: usize) {
        if !std::mem::replace(&mut self.conns[i].tried, true) {
            self.unresolved -= 1;
        }
    }

    /// Connecting is over for this thread when every slot's first attempt has ended, or when
    /// all were started and the connect timeout has passed since the run began.
    fn check_connecting(&mut self, now: Instant) {
        if self.told_start || self.opening < self.conns.len() {
            return;
        }
        if self.unresolved == 0 || now >= self.plan.t0 + self.spec.timeout() {
            self.told_start = true;
            self.tally.unresolved_at_start = self.unresolved as u64;
            self.start.thread_done(now);
        }
    }

    /// The window starts `warmup` after `t0`, when connecting ended; an open-loop schedule
    /// starts at `t0` too (no request is scheduled while connections are still being opened).
    fn begin_window(&mut self, t0: Instant) {
        self.window_known = true;
        self.measure_from = t0 + self.spec.warmup();
        self.end = self.spec.duration.map(|d| self.measure_from + d);
        self.counted_window = self
            .end
            .filter(|_| self.interval.is_some())
            .map(|e| (self.measure_from, e));
        self.next_intended = t0;
    }

    /// Runs until the duration ends, the quota is done, or `stop` is set. Returns the tally and
    /// the CPU this thread used over the measured window: from the warm-up's end to the close,
    /// before any socket is torn down (closing thousands of them is not load).
    pub fn run(mut self, progress: &Progress, stop: &AtomicU64) -> (Tally, Duration) {
        let mut events = Events::with_capacity(1024);
        let mut next_scan = Instant::now() + SCAN;
        let mut cpu_from = None;
        loop {
            let now = Instant::now();
            if self.opening < self.conns.len() {
                self.open_some(now);
            }
            self.check_connecting(now);
            if !self.window_known {
                if let Some(t0) = self.start.t0() {
                    self.begin_window(t0);
                }
            }
            if cpu_from.is_none() && now >= self.measure_from {
                cpu_from = Some(sys::process::thread_cpu_time());
            }
            if self.finished(now) || stop.load(Ordering::Relaxed) != 0 {
                break;
            }
            while let Some(&Reverse((t, i))) = self.timers.peek() {
                if t > now {
                    break;
                }
                self.timers.pop();
                if self.conns[i].wake == Some(t) {
                    self.conns[i].wake = None;
                    self.on_timer(i, now);
                }
            }
            // Requests start with the warm-up, once connecting is over; with --connect-first,
            // once every connection is up too (or the connect timeout has passed: some never
            // connected, go with those that did).
            if !self.sending
                && self.window_known
                && (!self.spec.connect_first()
                    || self.up_first >= self.conns.len()
                    || now >= self.plan.t0 + self.spec.timeout())
            {
                self.start_sending(now);
            }
            if self.interval.is_some() && self.sending && self.window_known {
                self.schedule(now);
            }
            if now >= next_scan {
                self.scan_timeouts(now);
                next_scan = now + SCAN;
            }
            let mut wait = self.next_deadline(next_scan).saturating_duration_since(Instant::now());
            if self.opening < self.conns.len() {
                wait = Duration::ZERO;
            } else if !self.window_known {
                // Another thread may end connecting at any moment.
                wait = wait.min(Duration::from_millis(2));
            }
            let n = match self.ep.wait_precise(&mut events, wait) {
                Ok(n) => n,
                Err(_) => break,
            };
            let now = Instant::now();
            debug_assert!(n == events.len());
            for (token, flags) in events.iter() {
                self.on_event(token as usize, flags, now);
            }
            progress.requests.store(self.tally.requests, Ordering::Relaxed);
            progress.errors.store(self.tally.error_total(), Ordering::Relaxed);
        }
        let cpu = cpu_from.map_or(Duration::ZERO, |from| {
            sys::process::thread_cpu_time().saturating_sub(from)
        });
        self.tally.never_connected = self.conns.iter().filter(|c| !c.connected_once).count() as u64;
        self.close_window(Instant::now());
        (self.tally, cpu)
    }

    /// Whether a request intended at `t` belongs to the window of an open-loop run over a
    /// duration (the only runs whose schedule is counted).
    pub(super) fn scheduled_in_window(&self, t: Instant) -> bool {
        in_window(self.counted_window, t)
    }

    /// Open loop over a duration: what the schedule called for inside the window and did not
    /// get done by its close (or by `now`, if the run was stopped) is not dropped: each request
    /// still waiting to be sent, in flight, failed, or answered too late enters the corrected
    /// histogram at the close less its intended send time (a lower bound of its latency).
    fn close_window(&mut self, now: Instant) {
        let (Some(interval), Some(end)) = (self.interval, self.end) else {
            return;
        };
        let close = end.min(now).max(self.measure_from);
        // Sends whose time came before the close but were never moved into the backlog.
        while self.next_intended < end && self.next_intended < close {
            if self.scheduled_in_window(self.next_intended) {
                self.scheduled += 1;
                self.lost.push(self.next_intended);
            }
            self.next_intended += interval;
        }
        let waiting = self
            .backlog
            .drain(..)
            .chain(self.conns.iter().flat_map(|c| c.inflight.iter().map(|&(t, _)| t)));
        let waiting: Vec<Instant> = waiting.collect();
        for t in waiting {
            if self.scheduled_in_window(t) {
                self.lost.push(t);
            }
        }
        for &t in &self.lost {
            self.tally
                .latency
                .record_ns(close.saturating_duration_since(t).as_nanos() as u64);
        }
        self.tally.scheduled = Some(self.scheduled);
        self.tally.not_completed = Some(self.lost.len() as u64);
    }

    fn finished(&self, now: Instant) -> bool {
        if let Some(end) = self.end {
            return now >= end;
        }
        match self.plan.quota {
            Some(q) => self.issued >= q && self.inflight == 0 && self.reserved == 0 && self.backlog.is_empty(),
            None => false,
        }
    }

    fn next_deadline(&self, next_scan: Instant) -> Instant {
        let mut d = next_scan;
        if let Some(&Reverse((t, _))) = self.timers.peek() {
            d = d.min(t);
        }
        if self.interval.is_some() && self.window_known && self.may_issue(self.next_intended) {
            d = d.min(self.next_intended);
        }
        if let Some(e) = self.end {
            d = d.min(e);
        }
        d
    }

    pub(super) fn set_timer(&mut self, i: usize, at: Instant) {
        self.conns[i].wake = Some(at);
        self.timers.push(Reverse((at, i)));
    }

    fn on_timer(&mut self, i: usize, now: Instant) {
        match self.conns[i].state {
            State::Down => self.start_connect(i, now),
            State::Up => self.fill(i, now),
            State::Connecting | State::Handshaking => {}
        }
    }

    fn on_event(&mut self, i: usize, flags: u32, now: Instant) {
        if self.conns[i].state == State::Connecting {
            if flags & (ERR | HUP) != 0 {
                // The connect failed: SO_ERROR says why.
                let e = match self.conns[i].fd.as_ref().map(sys::socket::take_error) {
                    Some(Ok(Some(e))) | Some(Err(e)) => e,
                    _ => io::Error::from(io::ErrorKind::ConnectionRefused),
                };
                return self.fail(i, ErrorClass::of(&e), now);
            }
            if flags & OUT == 0 {
                return;
            }
            self.on_connected(i, now);
            if self.conns[i].state == State::Handshaking {
                return;
            }
        } else if self.conns[i].state == State::Handshaking {
            return self.drive_handshake(i, now);
        }
        if self.conns[i].state != State::Up {
            return;
        }
        if flags & OUT != 0 && self.flush(i).is_err() {
            return;
        }
        if flags & (IN | RDHUP | HUP | ERR) != 0 {
            // With a hang-up pending, read to the end; otherwise a short read means drained
            // (each new arrival raises a new edge), which saves the read that returns EAGAIN.
            self.on_readable(i, now, flags & (RDHUP | HUP | ERR) != 0);
        }
    }

    pub(super) fn flush(&mut self, i: usize) -> Result<(), ()> {
        if self.conns[i].tls.is_some() {
            return self.tls_flush(i);
        }
        let c = &mut self.conns[i];
        let Some(fd) = c.fd.as_ref() else {
            return Err(());
        };
        while c.out_pos < c.out.len() {
            match sys::fd::write(fd, &c.out[c.out_pos..]) {
                Ok(n) => {
                    c.out_pos += n;
                    self.tally.bytes_out += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.fail(i, ErrorClass::of(&e), Instant::now());
                    return Err(());
                }
            }
        }
        c.out.clear();
        c.out_pos = 0;
        Ok(())
    }
}
