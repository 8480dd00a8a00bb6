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
use std::net::{IpAddr, SocketAddr};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::pacing::Pacing;
use super::tally::{ErrorClass, Tally};
use super::workload::{pattern, EchoReader, HttpReader, Kind, Read};
use super::LoadConfig;
use crate::sys;
use crate::sys::epoll::{Epoll, Events, ERR, ET, HUP, IN, OUT, RDHUP};

/// How often in-flight requests are checked against `--timeout`.
const SCAN: Duration = Duration::from_millis(50);
/// First and largest pause before reconnecting after a failure.
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_millis(500);

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Down,
    Connecting,
    Up,
}

struct Conn {
    /// Global slot number.
    slot: u64,
    fd: Option<OwnedFd>,
    state: State,
    /// When the current connect began.
    started: Instant,
    /// (intended, actual) send times of requests awaiting responses, oldest first.
    inflight: VecDeque<(Instant, Instant)>,
    /// Requests sent on the current socket.
    on_socket: u64,
    out: Vec<u8>,
    out_pos: usize,
    http: HttpReader,
    echo: EchoReader,
    /// Echo messages sent on this slot (the pattern's sequence number).
    send_seq: u64,
    /// A timer (think time or reconnect back-off) is set for this instant.
    wake: Option<Instant>,
    backoff: Duration,
    connected_once: bool,
    /// The server announced it will close after the last response.
    server_closing: bool,
    /// Queued in the free list of rate mode.
    in_free: bool,
    /// Requests reserved (and counted) for this socket when it was opened, with a per-socket
    /// limit (`--close`, `--requests-per-conn`), so no socket opens for nothing at the end.
    tickets: u64,
    /// How many of `tickets` were counted against the quota (reserved inside the window).
    counted: u64,
}

/// One engine thread.
pub struct Engine<'a> {
    cfg: &'a LoadConfig,
    plan: ThreadPlan,
    ep: Epoll,
    conns: Vec<Conn>,
    tally: Tally,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    buf: Vec<u8>,
    request: Vec<u8>,
    measure_from: Instant,
    end: Option<Instant>,
    /// Requests sent (or attempts failed) counted against the quota.
    issued: u64,
    inflight: usize,
    /// Requests reserved by sockets and not yet sent (sum of `tickets`).
    reserved: u64,
    /// Rate mode: the next scheduled send, the interval, scheduled sends waiting, free conns.
    next_intended: Instant,
    interval: Option<Duration>,
    backlog: VecDeque<Instant>,
    free: VecDeque<usize>,
    next_connect: Instant,
    connect_interval: Option<Duration>,
    bind_next: usize,
}

impl<'a> Engine<'a> {
    pub fn new(cfg: &'a LoadConfig, plan: ThreadPlan) -> io::Result<Engine<'a>> {
        let measure_from = plan.t0 + cfg.warmup;
        let end = cfg.duration.map(|d| measure_from + d);
        let head_only = cfg.method.eq_ignore_ascii_case("HEAD");
        let conns = (0..plan.conns)
            .map(|i| Conn {
                slot: plan.first_slot + i as u64,
                fd: None,
                state: State::Down,
                started: plan.t0,
                inflight: VecDeque::new(),
                on_socket: 0,
                out: Vec::new(),
                out_pos: 0,
                http: HttpReader::new(head_only),
                echo: EchoReader::new(cfg.size),
                send_seq: 0,
                wake: None,
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
            cfg,
            ep: Epoll::new()?,
            conns,
            tally,
            timers: BinaryHeap::new(),
            buf: vec![0u8; 256 * 1024],
            request: super::workload::http_request(&cfg.method, &cfg.target, &cfg.headers, cfg.close),
            measure_from,
            end,
            issued: 0,
            inflight: 0,
            reserved: 0,
            next_intended: plan.t0,
            interval,
            backlog: VecDeque::new(),
            free: VecDeque::new(),
            next_connect: plan.t0,
            connect_interval,
            bind_next: plan.first_slot as usize,
            plan,
        })
    }

    /// Runs until the duration ends, the quota is done, or `stop` is set.
    pub fn run(mut self, progress: &Progress, stop: &AtomicU64) -> Tally {
        let mut events = Events::with_capacity(1024);
        let now = Instant::now();
        for i in 0..self.conns.len() {
            self.start_connect(i, now);
        }
        let mut next_scan = now + SCAN;
        loop {
            let now = Instant::now();
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
            if self.interval.is_some() {
                self.schedule(now);
            }
            if now >= next_scan {
                self.scan_timeouts(now);
                next_scan = now + SCAN;
            }
            let wait = self.next_deadline(next_scan).saturating_duration_since(Instant::now());
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
        self.tally.never_connected = self.conns.iter().filter(|c| !c.connected_once).count() as u64;
        self.tally
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

    /// `true` if one more request may be committed at `now`.
    fn may_issue(&self, now: Instant) -> bool {
        if self.end.is_some_and(|e| now >= e) {
            return false;
        }
        match self.plan.quota {
            Some(q) if now >= self.measure_from => self.issued + (self.backlog.len() as u64) < q,
            _ => true,
        }
    }

    fn next_deadline(&self, next_scan: Instant) -> Instant {
        let mut d = next_scan;
        if let Some(&Reverse((t, _))) = self.timers.peek() {
            d = d.min(t);
        }
        if self.interval.is_some() && self.may_issue(self.next_intended) {
            d = d.min(self.next_intended);
        }
        if let Some(e) = self.end {
            d = d.min(e);
        }
        d
    }

    fn set_timer(&mut self, i: usize, at: Instant) {
        self.conns[i].wake = Some(at);
        self.timers.push(Reverse((at, i)));
    }

    fn on_timer(&mut self, i: usize, now: Instant) {
        match self.conns[i].state {
            State::Down => self.start_connect(i, now),
            State::Up => self.fill(i, now),
            State::Connecting => {}
        }
    }

    /// Rate mode: moves sends whose time has come into the backlog, then hands them out.
    fn schedule(&mut self, now: Instant) {
        let interval = self.interval.expect("rate mode");
        while self.next_intended <= now && self.may_issue(self.next_intended) {
            self.backlog.push_back(self.next_intended);
            self.next_intended += interval;
        }
        while !self.backlog.is_empty() {
            let Some(i) = self.free.pop_front() else {
                break;
            };
            self.conns[i].in_free = false;
            self.fill(i, now);
        }
    }

    fn mark_free(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if self.interval.is_some() && !c.in_free && c.state == State::Up && c.inflight.len() < self.cfg.pipeline {
            c.in_free = true;
            self.free.push_back(i);
        }
    }

    /// Requests one socket may carry: 1 with `--close`, K with `--requests-per-conn K`.
    fn per_socket(&self) -> Option<u64> {
        if self.cfg.close {
            Some(1)
        } else {
            self.cfg.requests_per_conn
        }
    }

    fn start_connect(&mut self, i: usize, now: Instant) {
        if !self.may_issue(now) && self.interval.is_none() {
            return;
        }
        if let (Some(k), None) = (self.per_socket(), self.interval) {
            if self.conns[i].tickets == 0 {
                let left = match self.plan.quota {
                    Some(q) if now >= self.measure_from => q.saturating_sub(self.issued),
                    _ => k,
                };
                let r = k.min(left);
                if r == 0 {
                    return;
                }
                let counted = if now >= self.measure_from { r } else { 0 };
                self.issued += counted;
                self.reserved += r;
                let c = &mut self.conns[i];
                c.tickets = r;
                c.counted = counted;
            }
        }
        if let Some(iv) = self.connect_interval {
            if now < self.next_connect {
                let at = self.next_connect;
                self.next_connect += iv;
                self.set_timer(i, at);
                return;
            }
            self.next_connect = now.max(self.next_connect) + iv;
        }
        let target = self.cfg.target.addr;
        let result = (|| -> io::Result<OwnedFd> {
            let fd = sys::socket::tcp_socket(&target, true)?;
            if !self.cfg.bind.is_empty() {
                let src = self.cfg.bind[self.bind_next % self.cfg.bind.len()];
                self.bind_next += 1;
                sys::socket::set_bind_no_port(&fd)?;
                sys::socket::bind(&fd, &SocketAddr::new(IpAddr::V4(src), 0))?;
            }
            match sys::socket::connect(&fd, &target) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
                Err(e) => return Err(e),
            }
            self.ep.add(&fd, i as u64, IN | OUT | RDHUP | ET)?;
            Ok(fd)
        })();
        match result {
            Ok(fd) => {
                let c = &mut self.conns[i];
                c.fd = Some(fd);
                c.state = State::Connecting;
                c.started = now;
            }
            Err(e) => self.fail(i, ErrorClass::of(&e), now),
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

    fn on_connected(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.state = State::Up;
        c.connected_once = true;
        c.backoff = BACKOFF_MIN;
        // Nagle only delays a second small write: keep-alive and pipelined sockets need it off.
        if !self.cfg.close {
            if let Some(fd) = &c.fd {
                let _ = sys::socket::set_nodelay(fd);
            }
        }
        if now >= self.measure_from {
            self.tally
                .connect
                .record_ns(now.duration_since(c.started).as_nanos() as u64);
            self.tally.connects += 1;
        }
        if self.interval.is_some() {
            self.mark_free(i);
            self.schedule(now);
        } else {
            self.fill(i, now);
        }
    }

    /// Sends as many requests as the pacing allows on connection `i`.
    fn fill(&mut self, i: usize, now: Instant) {
        loop {
            let c = &self.conns[i];
            if c.state != State::Up || c.server_closing || c.inflight.len() >= self.cfg.pipeline {
                break;
            }
            let intended = if self.interval.is_some() {
                if self.per_socket().is_some_and(|k| c.on_socket >= k) {
                    break;
                }
                match self.backlog.pop_front() {
                    Some(t) => t,
                    None => break,
                }
            } else if c.tickets > 0 {
                // ab-style: with --close the request's clock starts at connect.
                if self.cfg.close {
                    c.started
                } else {
                    now
                }
            } else if self.per_socket().is_none() && self.may_issue(now) {
                now
            } else {
                break;
            };
            self.enqueue(i, intended, now);
        }
        if self.flush(i).is_ok() {
            self.mark_free(i);
        }
    }

    /// Counts one request against the quota (and as sent, inside the window).
    fn count_issue(&mut self, now: Instant) {
        if now >= self.measure_from {
            self.issued += 1;
            self.tally.sent += 1;
        }
    }

    fn enqueue(&mut self, i: usize, intended: Instant, now: Instant) {
        let sent = if self.cfg.close && self.interval.is_none() {
            intended
        } else {
            now
        };
        let c = &mut self.conns[i];
        if c.tickets > 0 {
            c.tickets -= 1;
            self.reserved -= 1;
            if c.counted > 0 {
                // Counted against the quota when the socket reserved it.
                c.counted -= 1;
                if now >= self.measure_from {
                    self.tally.sent += 1;
                }
            } else {
                self.count_issue(now);
            }
        } else {
            self.count_issue(now);
        }
        if self.interval.is_some() && now >= self.measure_from {
            self.tally
                .send_lag
                .record_ns(now.saturating_duration_since(intended).as_nanos() as u64);
        }
        let c = &mut self.conns[i];
        match self.cfg.target.kind {
            Kind::Http => c.out.extend_from_slice(&self.request),
            Kind::Echo | Kind::Packet => {
                let start = c.out.len();
                c.out.resize(start + self.cfg.size, 0);
                pattern(c.slot, c.send_seq, 0, &mut c.out[start..]);
                c.send_seq += 1;
            }
        }
        c.inflight.push_back((intended, sent));
        c.on_socket += 1;
        self.inflight += 1;
    }

    fn flush(&mut self, i: usize) -> Result<(), ()> {
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

    fn on_readable(&mut self, i: usize, now: Instant, to_eof: bool) {
        loop {
            let r = match self.conns[i].fd.as_ref() {
                Some(fd) => sys::fd::read(fd, &mut self.buf),
                None => return,
            };
            match r {
                Ok(0) => return self.on_eof(i, now),
                Ok(n) => {
                    self.tally.bytes_in += n as u64;
                    if !self.consume(i, n, now) || (n < self.buf.len() && !to_eof) {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.fail(i, ErrorClass::of(&e), now),
            }
        }
    }

    /// Handles `n` bytes in `self.buf`; `false` when the connection was closed meanwhile.
    fn consume(&mut self, i: usize, n: usize, now: Instant) -> bool {
        match self.cfg.target.kind {
            Kind::Http => {
                self.conns[i].http.push(&self.buf[..n]);
                loop {
                    match self.conns[i].http.next_response() {
                        Read::Done { status, close } => {
                            if close {
                                self.conns[i].server_closing = true;
                            }
                            if !self.complete(i, status, now) {
                                return false;
                            }
                        }
                        Read::More => break,
                        Read::Bad => {
                            self.fail(i, ErrorClass::BadResponse, now);
                            return false;
                        }
                    }
                }
            }
            Kind::Echo | Kind::Packet => {
                let c = &mut self.conns[i];
                match c.echo.push(c.slot, &self.buf[..n]) {
                    Ok(k) => {
                        for _ in 0..k {
                            if !self.complete(i, 200, now) {
                                return false;
                            }
                        }
                    }
                    Err(_) => {
                        self.fail(i, ErrorClass::EchoMismatch, now);
                        return false;
                    }
                }
            }
        }
        self.after_responses(i, now)
    }

    /// Records one response; `false` if it was unsolicited (the connection is then closed).
    fn complete(&mut self, i: usize, status: u16, now: Instant) -> bool {
        let Some((intended, sent)) = self.conns[i].inflight.pop_front() else {
            self.fail(i, ErrorClass::BadResponse, now);
            return false;
        };
        self.inflight -= 1;
        if now >= self.measure_from && self.end.is_none_or(|e| now <= e) {
            let t = &mut self.tally;
            t.requests += 1;
            t.per_conn[i] += 1;
            let sec = now.duration_since(self.measure_from).as_secs() as usize;
            if t.per_second.len() <= sec {
                t.per_second.resize(sec + 1, 0);
            }
            t.per_second[sec] += 1;
            t.latency.record_ns(now.duration_since(intended).as_nanos() as u64);
            // In closed loop intended == sent: a second histogram would be a copy.
            if self.interval.is_some() {
                t.uncorrected.record_ns(now.duration_since(sent).as_nanos() as u64);
            }
            if status >= 400 {
                t.error(ErrorClass::HttpStatus);
            }
        }
        true
    }

    /// Decides what a connection does once its responses are processed.
    fn after_responses(&mut self, i: usize, now: Instant) -> bool {
        let c = &self.conns[i];
        let socket_done = c.server_closing
            || self.per_socket().is_some_and(|k| c.on_socket >= k)
            || (self.per_socket().is_some() && c.tickets == 0 && self.interval.is_none());
        if socket_done {
            if c.inflight.is_empty() {
                self.recycle(i, now);
                return false;
            }
            return true;
        }
        match self.cfg.pacing {
            Pacing::Think(d) if c.inflight.is_empty() && c.wake.is_none() => self.set_timer(i, now + d),
            Pacing::Think(_) => {}
            Pacing::Closed => self.fill(i, now),
            Pacing::Rate(_) => {
                self.mark_free(i);
                self.schedule(now);
            }
        }
        true
    }

    fn on_eof(&mut self, i: usize, now: Instant) {
        let c = &self.conns[i];
        if !c.inflight.is_empty() || c.http.mid_response() || c.echo.mid_message() {
            self.fail(i, ErrorClass::UnexpectedClose, now);
        } else {
            // The server closed an idle keep-alive connection: open a new one.
            self.recycle(i, now);
        }
    }

    /// Closes the socket of slot `i` and resets its per-socket state.
    fn close_socket(&mut self, i: usize) {
        let c = &mut self.conns[i];
        c.fd = None;
        c.state = State::Down;
        self.inflight -= c.inflight.len();
        c.inflight.clear();
        c.on_socket = 0;
        c.out.clear();
        c.out_pos = 0;
        c.http.reset();
        c.echo.reset(c.send_seq);
        c.server_closing = false;
    }

    /// A finished connection: close it and open the next one at once.
    fn recycle(&mut self, i: usize, now: Instant) {
        self.close_socket(i);
        self.start_connect(i, now);
    }

    /// A failure: count it, close, and reconnect after a growing back-off.
    fn fail(&mut self, i: usize, class: ErrorClass, now: Instant) {
        self.tally.error(class);
        // Requests the socket reserved but never sent go back to the pool.
        let c = &mut self.conns[i];
        self.issued -= c.counted;
        self.reserved -= c.tickets;
        c.tickets = 0;
        c.counted = 0;
        let c = &self.conns[i];
        if c.inflight.is_empty() && now >= self.measure_from && self.plan.quota.is_some() {
            // A failed attempt with nothing in flight still uses up a request, so -n ends.
            self.issued += 1;
        }
        self.close_socket(i);
        let c = &mut self.conns[i];
        let at = now + c.backoff;
        c.backoff = (c.backoff * 2).min(BACKOFF_MAX);
        self.set_timer(i, at);
    }

    fn scan_timeouts(&mut self, now: Instant) {
        let limit = self.cfg.timeout;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            let late = match c.state {
                State::Connecting => now.duration_since(c.started) > limit,
                State::Up => c
                    .inflight
                    .front()
                    .is_some_and(|&(_, sent)| now.duration_since(sent) > limit),
                State::Down => false,
            };
            if late {
                self.fail(i, ErrorClass::Timeout, now);
            }
        }
    }
}
