//! One engine thread ([`Engine`]): its connection slots, timers, window, budget and schedule,
//! and the epoll loop that drives them (its turns, timers, events and writes). What happens to
//! a connection's socket is in `connect`, `issue`, `receive` and `tls`; what its bytes mean is
//! its client connection's (`load::client`), which reports to the engine's `books`.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::books::Ledger;
use super::parts::{self, Limits, Pace, Reach};
use super::ramp::Ramp;
use super::slots::Slot;
use super::window::Window;
use super::{Progress, Start, ThreadPlan};
use crate::load::client::{Connection, Reuse, Setup, State};
use crate::load::{Budget, ErrorClass, Schedule, Spec, Tally};
use crate::sys;
use crate::sys::epoll::{Epoll, Events, ERR, HUP, IN, OUT, RDHUP};
use crate::timer::Timers;

/// How often in-flight requests are checked against `--timeout`.
pub(super) const SCAN: Duration = Duration::from_millis(50);

/// How often the timeout scan looks at the slots that hold (`--active`) too: they have nothing
/// in flight, only a connect (the first, or one reopening) that may take too long. Looking at
/// 20,000 held slots every [`SCAN`] in each of 51 processes took 80 % of the client's CPU
/// at a million connections (issue 82), where the senders need it.
pub(super) const SCAN_HELD: Duration = Duration::from_secs(1);

/// One engine thread.
pub struct Engine<'a> {
    /// The run's parts this thread needs: schedule, pacing and window; where it connects; its
    /// limits.
    pub(super) pace: Pace,
    pub(super) reach: Reach,
    pub(super) limits: Limits,
    /// When the run began (connect timeouts and the gate count from it).
    t0: Instant,
    pub(super) ep: Epoll,
    pub(super) slots: Vec<Slot>,
    /// The run's state beside the connections: figures, window, budget, schedule, drain.
    pub(super) ledger: Ledger,
    pub(super) timers: Timers<usize>,
    /// The read buffer.
    pub(super) buf: Vec<u8>,
    /// The classes' cumulative weights (empty without `--mix`), and the choices' generator.
    pub(super) cumulative: Vec<f64>,
    pub(super) rng: crate::rng::Rng,
    pub(super) ramp: Ramp,
    pub(super) start: &'a Start,
    /// Slots that hold (`--active`): the spread of their reopening grows with it.
    pub(super) holding: usize,
    /// Where some slots hold: those that send, which the timeout scan looks at every
    /// [`SCAN`], and when it next looks at every slot ([`SCAN_HELD`]).
    pub(super) senders: Vec<usize>,
    pub(super) held_scan: Instant,
    /// Connections that stopped reading at
    /// [`READS_PER_TURN`](super::receive::READS_PER_TURN) with more to read: read again next
    /// turn, which does not wait.
    pub(super) again: Vec<usize>,
}

impl<'a> Engine<'a> {
    pub fn new(spec: &'a Spec, plan: ThreadPlan, start: &'a Start) -> io::Result<Engine<'a>> {
        let setup = Setup::of(spec);
        let (pace, reach, limits) = parts::of(spec);
        // A thread whose slots all hold (`--active`) has no share of the rate.
        let rate = plan.rate.filter(|r| *r > 0.0);
        let reuse = Reuse {
            per_socket: pace.per_socket,
            open_loop: rate.is_some(),
        };
        let active = pace.active;
        let slots: Vec<Slot> = (0..plan.conns)
            .map(|i| {
                let g = plan.first_slot + i as u64;
                Slot::new(
                    setup.connection(g, i, plan.t0, reuse),
                    active.is_some_and(|a| !a.sends(g)),
                )
            })
            .collect();
        let holding = slots.iter().filter(|s| s.holds()).count();
        let senders: Vec<usize> = match holding {
            0 => Vec::new(),
            _ => (0..slots.len()).filter(|&i| !slots[i].holds()).collect(),
        };
        let seed = pace.seed;
        let poisson = pace.poisson.then(|| crate::rng::Rng::new(&[seed, plan.first_slot, 1]));
        let schedule = rate.map(|r| {
            // A ramp's rates, scaled to this thread's share of the run's mean.
            let ramp = pace.ramp.map(|w| w.scaled(r / w.per_s()));
            Schedule::new(r, pace.batch, plan.t0, poisson).ramped(ramp)
        });
        // Until connecting is over, nothing is measured: the window is set by `begin_window`.
        let window = Window::new(plan.t0, pace.warmup.is_zero());
        let mut ledger = Ledger::new(
            setup.tally(plan.conns),
            window,
            Budget::new(plan.quota),
            schedule,
            plan.conns,
        );
        let args = spec.args();
        ledger.live = (args.metrics.is_some() || args.metrics_lines).then(crate::load::Live::default);
        Ok(Engine {
            t0: plan.t0,
            ep: Epoll::new()?,
            slots,
            ledger,
            timers: Timers::new(),
            buf: vec![0u8; 256 * 1024],
            cumulative: pace.weights.clone(),
            rng: crate::rng::Rng::new(&[seed, plan.first_slot]),
            ramp: Ramp::new(plan.conns, plan.connect_rate, plan.t0, plan.first_slot as usize),
            start,
            holding,
            senders,
            held_scan: plan.t0,
            again: Vec::new(),
            pace,
            reach,
            limits,
        })
    }

    /// Whether what is committed at `now` counts against the quota.
    pub(super) fn counting(&self, now: Instant) -> bool {
        self.ledger.window.counting(now)
    }

    /// Starts the next batch of first connects.
    fn open_some(&mut self, now: Instant) {
        for i in self.ramp.next_batch() {
            self.start_connect(i, now);
        }
    }

    /// Connection `i`, and the books its step keeps.
    pub(super) fn split(&mut self, i: usize) -> (&mut Connection, &mut Ledger) {
        (self.slots[i].conn_mut(), &mut self.ledger)
    }

    /// A slot's first attempt ended (it is up, or it failed).
    pub(super) fn first_try_over(&mut self, i: usize) {
        if self.slots[i].first_try_over() {
            self.ramp.first_try_over();
        }
    }

    /// Tells `start` once this thread's connecting is over.
    fn check_connecting(&mut self, now: Instant) {
        if let Some(unresolved) = self.ramp.connecting_over(now, self.t0, self.limits.timeout) {
            self.ledger.tally.unresolved_at_start = unresolved as u64;
            self.start.thread_done(now);
        }
    }

    /// The window starts `warmup` after `t0`, when connecting ended; an open-loop schedule
    /// starts at `t0` too (no request is scheduled while connections are still being opened).
    fn begin_window(&mut self, t0: Instant) {
        self.ledger.window.begin(t0, self.pace.warmup, self.pace.duration);
        let (from, end) = (self.ledger.window.from(), self.ledger.window.end());
        if let Some(s) = self.ledger.schedule.as_mut() {
            s.begin(t0, from, end);
        }
        if let Some(every) = self.pace.interval {
            self.ledger.tally.series_clock = Some(crate::load::Clock {
                from,
                until: end,
                every,
            });
            self.ledger.tally.series_every_us = Some(every.as_micros() as u64);
        }
    }

    /// Once a turn: the progress words; with `--metrics`, every [`super::progress::PUBLISH`],
    /// the live figures too.
    fn report(&self, progress: &Progress, now: Instant, next_publish: &mut Instant) {
        progress.requests.store(self.ledger.tally.requests, Ordering::Relaxed);
        progress
            .errors
            .store(self.ledger.tally.error_total(), Ordering::Relaxed);
        if let Some(t) = &self.ledger.tally.sse {
            progress
                .streams
                .store(self.ledger.open_streams as u64, Ordering::Relaxed);
            progress.events.store(t.events, Ordering::Relaxed);
        }
        if self.ledger.live.is_some() && now >= *next_publish {
            self.publish(progress);
            *next_publish = now + super::progress::PUBLISH;
        }
    }

    /// `--metrics`: stores this thread's live figures for a scrape.
    fn publish(&self, progress: &Progress) {
        if let Some(live) = &self.ledger.live {
            let open = self.slots.iter().filter(|s| s.conn().is_up()).count() as u64;
            super::progress::publish(progress, &self.ledger.tally, open);
            live.publish(progress);
        }
    }

    /// Once an interval of the series: the connections and event streams open now.
    fn look_at_interval(&mut self, now: Instant, last: &mut Option<usize>) {
        let Some(i) = self.ledger.tally.series_clock.and_then(|c| c.index(now)) else {
            return;
        };
        if *last == Some(i) {
            return;
        }
        *last = Some(i);
        let open = self.slots.iter().filter(|s| s.conn().is_up()).count() as u64;
        let streams = self.ledger.open_streams as u64;
        if let Some(iv) = self.ledger.tally.interval(now) {
            iv.open = open;
            iv.streams = streams;
        }
    }

    /// Runs until the duration ends, the quota is done, or `stop` is set, then waits for what
    /// is in flight (see `drain`). Returns the tally and the CPU this thread used over the
    /// measured window: from the warm-up's end to the close, before any socket is torn down
    /// (closing thousands of them is not load).
    pub fn run(mut self, progress: &Progress, stop: &AtomicU64) -> (Tally, Duration) {
        // An open loop's sends and a think time are timers: without this the kernel may wake
        // the thread up to 50 us late (its default timer slack), and that lateness would be
        // the client's, in every corrected latency.
        sys::process::exact_sleeps();
        let mut events = Events::with_capacity(1024);
        let mut next_scan = Instant::now() + SCAN;
        let mut cpu_from = None;
        let mut looked = None;
        let mut cpu = Duration::ZERO;
        // The loop could not wait: it ends as a stopped run does (the window closed first).
        let mut broken = false;
        let mut next_publish = Instant::now();
        loop {
            let now = Instant::now();
            let stopped = broken || stop.load(Ordering::Relaxed) != 0;
            if self.ledger.drain.is_none() {
                // Connecting is seen through first: a thread whose share is done at once still
                // tells the others its connecting is over (they wait for every thread's).
                self.connecting_turn(now);
                if cpu_from.is_none() && self.ledger.window.started(now) {
                    cpu_from = Some(sys::process::thread_cpu_time());
                }
                if stopped || self.finished(now) {
                    cpu = cpu_from.map_or(Duration::ZERO, |from| {
                        sys::process::thread_cpu_time().saturating_sub(from)
                    });
                    self.close_window(now);
                    self.begin_drain(now, stopped);
                }
            }
            if self.ledger.drain.is_some() {
                if stopped || self.drain_over(now) || !self.drain_turn(&mut events, &mut next_scan, now) {
                    break;
                }
                continue;
            }
            // Another thread may have ended connecting (`t0`, read from its clock) after this
            // turn read the clock: nothing done from here on is earlier than that. Else a request
            // sent now would be dated before the window (not counted as sent, nor against -n)
            // and answered inside it (counted): 401 responses to `-n 400`, seen once on h2 over
            // TLS with the CPUs busy.
            let now = self.start.t0().map_or(now, |t0| now.max(t0));
            self.fire_timers(now);
            // Requests start with the warm-up, once connecting is over; with --connect-first,
            // once every connection is up too (or the connect timeout has passed: some never
            // connected, go with those that did).
            if self.ramp.may_open(
                self.ledger.window.known(),
                self.pace.connect_first,
                now,
                self.t0,
                self.limits.timeout,
            ) {
                self.start_sending(now);
            }
            if self.ledger.schedule.is_some() && self.ramp.sending() && self.ledger.window.known() {
                self.schedule(now);
            }
            if now >= next_scan {
                self.scan_timeouts(now);
                next_scan = now + SCAN;
            }
            let mut wait = crate::timer::until(self.next_deadline(next_scan), Instant::now());
            if !self.ramp.all_opened() || !self.again.is_empty() {
                wait = Duration::ZERO;
            } else if !self.ledger.window.known() {
                // Another thread may end connecting at any moment.
                wait = wait.min(Duration::from_millis(2));
            }
            let n = match self.ep.wait_precise(&mut events, wait) {
                Ok(n) => n,
                Err(_) => {
                    broken = true;
                    continue;
                }
            };
            let now = Instant::now();
            debug_assert!(n == events.len());
            self.dispatch(&events, now);
            self.look_at_interval(now, &mut looked);
            self.report(progress, now, &mut next_publish);
        }
        self.end_drain();
        self.publish(progress);
        if self.ramp.leaving() {
            self.start.thread_done(Instant::now());
        }
        self.ledger.tally.never_connected = self.slots.iter().filter(|s| !s.conn().connected_once()).count() as u64;
        self.count_holding();
        (self.ledger.tally, cpu)
    }

    /// `--active`: the connections open when the window closed that sent and those that held
    /// (counted then: the drain closes idle ones).
    pub(super) fn count_open(&mut self) {
        if self.pace.active.is_none() {
            return;
        }
        let t = &mut self.ledger.tally;
        let up = |s: &&Slot| s.conn().is_up();
        t.held = Some(self.slots.iter().filter(|s| s.holds()).filter(up).count() as u64);
        t.active = Some(self.slots.iter().filter(|s| !s.holds()).filter(up).count() as u64);
    }

    /// `--active`: fairness over the senders only (a held connection completes nothing by
    /// design, and is not starved).
    fn count_holding(&mut self) {
        if self.pace.active.is_none() {
            return;
        }
        let t = &mut self.ledger.tally;
        let keep: Vec<bool> = self.slots.iter().map(|s| !s.holds()).collect();
        let only_senders = |v: &mut Vec<u64>| {
            if v.len() == keep.len() {
                let mut k = keep.iter();
                v.retain(|_| *k.next().expect("as long"));
            }
        };
        only_senders(&mut t.per_conn);
        only_senders(&mut t.per_conn_events);
    }

    /// The connections still to open are opened (as the ramp allows), those connecting
    /// looked at, and the window begun once every thread's connecting is over.
    fn connecting_turn(&mut self, now: Instant) {
        if !self.ramp.all_opened() {
            self.open_some(now);
        }
        self.check_connecting(now);
        if !self.ledger.window.known() {
            if let Some(t0) = self.start.t0() {
                self.begin_window(t0);
            }
        }
    }

    /// Handles what a wait brought: the connections left to read again first, then `events`.
    pub(super) fn dispatch(&mut self, events: &Events, now: Instant) {
        for i in std::mem::take(&mut self.again) {
            if self.slots[i].conn().is_up() {
                self.on_readable(i, now, true);
            }
        }
        for (token, flags) in events.iter() {
            self.on_event(token as usize, flags, now);
        }
    }

    /// Runs the timers that are due.
    fn fire_timers(&mut self, now: Instant) {
        while let Some((t, i)) = self.timers.pop_due(now) {
            if self.slots[i].wake().fired(t) {
                self.on_timer(i, now);
            }
        }
    }

    fn finished(&self, now: Instant) -> bool {
        if self.ledger.window.end().is_some() {
            return self.ledger.window.over(now);
        }
        self.ledger
            .budget
            .done(self.ledger.schedule.as_ref().is_some_and(|s| s.waiting() > 0))
    }

    fn next_deadline(&self, next_scan: Instant) -> Instant {
        let mut d = next_scan;
        if let Some(t) = self.timers.next() {
            d = d.min(t);
        }
        if let Some(s) = self.ledger.schedule.as_ref().filter(|_| self.ledger.window.known()) {
            if self.may_issue(s.next()) {
                d = d.min(s.next());
            }
        }
        if let Some(e) = self.ledger.window.end() {
            d = d.min(e);
        }
        d
    }

    pub(super) fn set_timer(&mut self, i: usize, at: Instant) {
        self.timers.set(self.slots[i].wake(), at, i);
    }

    fn on_timer(&mut self, i: usize, now: Instant) {
        if self.ledger.drain.is_some() {
            return;
        }
        match self.slots[i].conn().state() {
            State::Down => self.start_connect(i, now),
            State::Up => self.fill(i, now),
            State::Connecting | State::Handshaking => {}
        }
    }

    fn on_event(&mut self, i: usize, flags: u32, now: Instant) {
        let state = self.slots[i].conn().state();
        if state == State::Connecting {
            if flags & (ERR | HUP) != 0 {
                // The connect failed: SO_ERROR says why.
                let e = match self.slots[i].fd().map(sys::socket::take_error) {
                    Some(Ok(Some(e))) | Some(Err(e)) => e,
                    _ => io::Error::from(io::ErrorKind::ConnectionRefused),
                };
                return self.fail(i, ErrorClass::of(&e), now);
            }
            if flags & OUT == 0 {
                return;
            }
            self.on_connected(i, now);
            if self.slots[i].conn().state() == State::Handshaking {
                return;
            }
        } else if state == State::Handshaking {
            return self.drive_handshake(i, now);
        }
        if !self.slots[i].conn().is_up() {
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
        if self.slots[i].tls().is_some() {
            return self.tls_flush(i);
        }
        let (Some(fd), _, conn) = self.slots[i].wire() else {
            return Err(());
        };
        while !conn.all_sent() {
            match sys::fd::write(fd, conn.unsent()) {
                Ok(n) => {
                    conn.wrote(n);
                    self.ledger.tally.bytes_out += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.fail(i, ErrorClass::of(&e), Instant::now());
                    return Err(());
                }
            }
        }
        Ok(())
    }
}
