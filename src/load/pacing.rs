//! When requests are sent: closed loop, closed loop with think time, or open loop at a rate.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The pacing of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Send the next request as soon as a response arrives (wrk, ab).
    Closed,
    /// Wait this long after each response before the next request, per connection (seed 003).
    Think(Duration),
    /// Open loop: this many requests per second overall, on schedule whatever the latency;
    /// latency counts from the scheduled time (coordinated-omission-correct).
    Rate(f64),
}

impl Pacing {
    pub fn describe(&self) -> String {
        match self {
            Pacing::Closed => "closed loop".into(),
            Pacing::Think(d) => format!("closed loop, {} think time", crate::units::format_duration(*d)),
            Pacing::Rate(r) => format!("open loop at {r} req/s"),
        }
    }
}

/// What `-n` leaves to send: the quota, the requests committed against it, those reserved by
/// sockets that carry a set number each (`--close`, `--requests-per-conn`) and not sent yet,
/// and those in flight. Only requests committed inside the measured window count against the
/// quota.
#[derive(Debug)]
pub(super) struct Budget {
    quota: Option<u64>,
    /// Requests sent (or attempts failed) counted against the quota.
    issued: u64,
    /// Requests reserved by sockets and not yet sent.
    reserved: u64,
    inflight: usize,
}

impl Budget {
    pub(super) fn new(quota: Option<u64>) -> Budget {
        Budget {
            quota,
            issued: 0,
            reserved: 0,
            inflight: 0,
        }
    }

    /// Whether one more request may be committed, `waiting` being committed already (an open
    /// loop's backlog); `counting`: inside the window.
    pub(super) fn allows(&self, counting: bool, waiting: usize) -> bool {
        match self.quota {
            Some(q) if counting => self.issued + (waiting as u64) < q,
            _ => true,
        }
    }

    /// A request committed (counted against the quota when `counting`).
    pub(super) fn commit(&mut self, counting: bool) {
        if counting {
            self.issued += 1;
        }
    }

    /// Reserves up to `per_socket` requests for a new socket: how many, and how many of them
    /// count against the quota; `None` when nothing is left.
    pub(super) fn reserve(&mut self, per_socket: u64, counting: bool) -> Option<(u64, u64)> {
        let left = match self.quota {
            Some(q) if counting => q.saturating_sub(self.issued),
            _ => per_socket,
        };
        let r = per_socket.min(left);
        if r == 0 {
            return None;
        }
        let counted = if counting { r } else { 0 };
        self.issued += counted;
        self.reserved += r;
        Some((r, counted))
    }

    /// A reserved request was sent.
    pub(super) fn spend(&mut self) {
        self.reserved -= 1;
    }

    /// A socket that failed gives back what it reserved and did not send.
    pub(super) fn give_back(&mut self, tickets: u64, counted: u64) {
        self.issued -= counted;
        self.reserved -= tickets;
    }

    /// A failed attempt with nothing in flight still uses up a request (when counting under a
    /// quota), so `-n` ends.
    pub(super) fn failed_attempt(&mut self, counting: bool) {
        if counting && self.quota.is_some() {
            self.issued += 1;
        }
    }

    pub(super) fn sent(&mut self) {
        self.inflight += 1;
    }

    /// `n` requests are no longer in flight (answered, or lost with their socket).
    pub(super) fn settled(&mut self, n: usize) {
        self.inflight -= n;
    }

    /// `-n` is done: everything committed, nothing in flight or reserved, nothing `waiting`.
    pub(super) fn done(&self, waiting: bool) -> bool {
        match self.quota {
            Some(q) => self.issued >= q && self.inflight == 0 && self.reserved == 0 && !waiting,
            None => false,
        }
    }
}

/// The highest `--rate` a run may ask for (a ramp's peak included): every request costs the
/// client a system call or a share of one, about a microsecond of a CPU, so no client of a
/// machine of a few cores sends ten million a second; a schedule denser than that would only
/// fall behind from its first instant (before: 1e9 queued sends without bound until the kernel
/// killed the process).
pub const MAX_RATE: f64 = 10_000_000.0;

/// The most sends an open loop's schedule holds one by one, waiting for a connection or lost:
/// past it, a due send stays in the schedule (its intended time kept, so its latency is still
/// counted from it) until the backlog has room, and lost ones are counted by the slice of the
/// window they were due in. Memory stays bounded at any rate and duration.
pub(super) const EXACT: usize = 1 << 18;

/// Slices of the window lost sends are counted in past [`EXACT`]: at most this many.
const SLICES: u32 = 1 << 16;

/// Requests of the counted window that will not complete inside it: each with its intended
/// time up to [`EXACT`], then a count per slice of the window and class, a slice's sends
/// taking its end as their intended time (their latency at the close a lower bound, as every
/// lost request's is).
#[derive(Debug, Default)]
struct Lost {
    exact: Vec<(Instant, u8)>,
    sliced: HashMap<(u32, u8), u64>,
    count: u64,
}

impl Lost {
    fn add(&mut self, t: Instant, class: u8, (from, end): (Instant, Instant)) {
        self.count += 1;
        if self.exact.len() < EXACT {
            self.exact.push((t, class));
            return;
        }
        let width = ((end - from) / SLICES).max(std::time::Duration::from_millis(1));
        let slice = (t.saturating_duration_since(from).as_nanos() / width.as_nanos()) as u32;
        *self.sliced.entry((slice, class)).or_default() += 1;
    }

    /// Each lost request's latency at `close` (the close less its intended time), with its
    /// class and how many share it.
    fn at_close(&self, close: Instant, (from, end): (Instant, Instant)) -> Vec<(Duration, u8, u64)> {
        let width = ((end - from) / SLICES).max(std::time::Duration::from_millis(1));
        let exact = self
            .exact
            .iter()
            .map(|&(t, c)| (close.saturating_duration_since(t), c, 1));
        let sliced = self.sliced.iter().map(|(&(slice, c), &n)| {
            let latest = from + width * (slice + 1);
            (close.saturating_duration_since(latest), c, n)
        });
        exact.chain(sliced).collect()
    }
}

/// What an open loop's window closed with: the sends it scheduled, those of them not
/// completed, and their latencies at the close (each with its class and how many share it).
pub(super) type Closed = (u64, u64, Vec<(Duration, u8, u64)>);

/// An open loop's schedule (`--rate`): send times at a fixed interval whether or not responses
/// keep up; a send whose time has come waits in the backlog for a free connection. Over a
/// duration it also counts what the window's schedule called for, and keeps the intended times
/// of those that will not complete inside it (their socket failed or closed, or the response
/// came after the window): at the close each enters the corrected histogram at the window's
/// end less its intended time.
#[derive(Debug)]
pub(super) struct Schedule {
    interval: Duration,
    /// Sends due at each time (a keyed target's `--pipeline`: a batch written at once).
    batch: usize,
    /// The next scheduled send.
    next: Instant,
    /// Sends whose time has come (with their class), waiting for a connection.
    /// Sends due: their intended time, class, and when the client noticed they were due.
    backlog: VecDeque<(Instant, u8, Instant)>,
    /// Connections that can take a request now.
    free: VecDeque<usize>,
    /// The window whose schedule is counted: (warm-up's end, end) of a run over a duration.
    counted: Option<(Instant, Instant)>,
    /// Sends scheduled inside `counted`, and those of them that will not complete inside it.
    scheduled: u64,
    lost: Lost,
    /// Poisson arrivals: the gaps are drawn (exponential, mean `interval`) from this.
    poisson: Option<crate::rng::Rng>,
    /// A ramp (`--rate A:B/T`, `A,B,C/T`): the rate at each instant from the window's start,
    /// which sets each gap instead of `interval`.
    ramp: Option<(crate::load::Rate, Instant)>,
}

impl Schedule {
    /// `rate` requests per second from `t0` (until the window is known, nothing is due), in
    /// batches of `batch` due together (at rate ÷ batch); `poisson`: the gaps drawn from this
    /// generator, else fixed.
    pub(super) fn new(rate: f64, batch: usize, t0: Instant, poisson: Option<crate::rng::Rng>) -> Schedule {
        let batch = batch.max(1);
        Schedule {
            interval: Duration::from_secs_f64(batch as f64 / rate),
            batch,
            next: t0,
            backlog: VecDeque::new(),
            free: VecDeque::new(),
            counted: None,
            scheduled: 0,
            lost: Lost::default(),
            poisson,
            ramp: None,
        }
    }

    /// The rate follows `ramp` (this thread's share of it) from the window's start.
    pub(super) fn ramped(mut self, ramp: Option<crate::load::Rate>) -> Schedule {
        self.ramp = ramp.map(|r| (r, self.next));
        self
    }

    /// The gap to the next send.
    fn gap(&mut self) -> Duration {
        if let Some((rate, from)) = &self.ramp {
            // A ramp: the gap after which the rates crossed call for one more batch (an
            // exponential draw of it for Poisson arrivals).
            let amount = match self.poisson.as_mut() {
                Some(r) => r.exp(self.batch as f64),
                None => self.batch as f64,
            };
            return rate.gap_after(self.next.saturating_duration_since(*from), amount);
        }
        match self.poisson.as_mut() {
            Some(r) => Duration::from_secs_f64(r.exp(self.interval.as_secs_f64())),
            None => self.interval,
        }
    }

    /// The schedule starts at `t0`, when connecting ended; over a duration, the window from
    /// `from` to `end` is counted.
    pub(super) fn begin(&mut self, t0: Instant, from: Instant, end: Option<Instant>) {
        self.counted = end.map(|e| (from, e));
        self.next = t0;
        if let Some((_, start)) = self.ramp.as_mut() {
            *start = from;
        }
    }

    /// When the next send is due.
    pub(super) fn next(&self) -> Instant {
        self.next
    }

    /// Whether the window's schedule is counted (a run over a duration).
    pub(super) fn counted(&self) -> bool {
        self.counted.is_some()
    }

    /// Whether a request intended at `t` belongs to the counted window.
    pub(super) fn counts(&self, t: Instant) -> bool {
        self.counted.is_some_and(|(from, end)| t >= from && t < end)
    }

    /// Moves the sends due by `now` into the backlog, while `may` (given a send's time and the
    /// backlog's length) allows one more; `class` picks each one's class.
    pub(super) fn due(
        &mut self,
        now: Instant,
        mut may: impl FnMut(Instant, usize) -> bool,
        mut class: impl FnMut() -> u8,
    ) {
        // A backlog of EXACT sends leaves the rest due in the schedule, their times kept.
        while self.next <= now && self.backlog.len() < EXACT && may(self.next, self.backlog.len()) {
            for _ in 0..self.batch {
                // The last batch of a quota (`-n`) may be short: what is left of it is not
                // sent, and the schedule goes on (it ends with the quota).
                if !may(self.next, self.backlog.len()) {
                    break;
                }
                if self.counts(self.next) {
                    self.scheduled += 1;
                }
                self.backlog.push_back((self.next, class(), now));
            }
            let gap = self.gap();
            self.next += gap;
        }
    }

    /// The oldest send waiting (its time, class, and when the client noticed it was due), if
    /// any.
    pub(super) fn take_due(&mut self) -> Option<(Instant, u8, Instant)> {
        self.backlog.pop_front()
    }

    /// Sends waiting for a connection.
    pub(super) fn waiting(&self) -> usize {
        self.backlog.len()
    }

    /// Connection `i` can take a request.
    pub(super) fn offer(&mut self, i: usize) {
        self.free.push_back(i);
    }

    /// A connection that can take a request, while sends wait.
    pub(super) fn take_free(&mut self) -> Option<usize> {
        if self.backlog.is_empty() {
            return None;
        }
        self.free.pop_front()
    }

    /// A request of `class` intended at `t` will not complete inside the window (if it counts
    /// there).
    pub(super) fn lose(&mut self, t: Instant, class: u8) {
        if let Some(window) = self.counted.filter(|_| self.counts(t)) {
            self.lost.add(t, class, window);
        }
    }

    /// At the close of the window (or at `now`, if the run stopped first): what the schedule
    /// called for in the window and did not get done is not dropped. Each request still waiting
    /// to be sent, `inflight`, failed, or answered too late, is returned with the latency it
    /// enters the corrected histogram with (the close less its intended send time: a lower
    /// bound, with its class, and how many share it), and the count scheduled. Sends never
    /// moved into the backlog take their class from `class`.
    pub(super) fn close(
        &mut self,
        now: Instant,
        inflight: impl Iterator<Item = (Instant, u8)>,
        mut class: impl FnMut() -> u8,
    ) -> Option<Closed> {
        let (from, end) = self.counted?;
        let close = end.min(now).max(from);
        // Sends whose time came before the close but were never moved into the backlog.
        while self.next < end && self.next < close {
            if self.counts(self.next) {
                for _ in 0..self.batch {
                    self.scheduled += 1;
                    self.lost.add(self.next, class(), (from, end));
                }
            }
            let gap = self.gap();
            self.next += gap;
        }
        let waiting: Vec<(Instant, u8)> = self.backlog.drain(..).map(|(t, c, _)| (t, c)).chain(inflight).collect();
        for (t, c) in waiting {
            self.lose(t, c);
        }
        Some((self.scheduled, self.lost.count, self.lost.at_close(close, (from, end))))
    }
}

#[cfg(test)]
mod schedule_gaps {
    use super::*;

    /// Poisson gaps are exponential: their mean is the interval and so is their spread
    /// (coefficient of variation 1), where uniform gaps do not vary at all.
    #[test]
    fn poisson_gaps_spread_as_an_exponential_and_uniform_ones_do_not() {
        let stats = |s: &mut Schedule| {
            let gaps: Vec<f64> = (0..50_000).map(|_| s.gap().as_secs_f64() * 1e6).collect();
            let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
            let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
            (mean, var.sqrt() / mean)
        };
        let now = Instant::now();
        let (mean, cv) = stats(&mut Schedule::new(1000.0, 1, now, Some(crate::rng::Rng::new(&[1]))));
        assert!((mean - 1000.0).abs() < 20.0 && (cv - 1.0).abs() < 0.03, "{mean} {cv}");
        let (mean, cv) = stats(&mut Schedule::new(1000.0, 1, now, None));
        assert_eq!((mean.round(), cv), (1000.0, 0.0));
    }

    /// A batch of N is due at once, every N / rate: N commands at each time, the rate kept.
    #[test]
    fn batches_are_due_together_at_the_rate_over_their_size() {
        let t0 = Instant::now();
        let mut s = Schedule::new(1600.0, 16, t0, None);
        s.begin(t0, t0, Some(t0 + Duration::from_secs(1)));
        s.due(t0 + Duration::from_millis(25), |_, _| true, || 0);
        let due: Vec<Instant> = std::iter::from_fn(|| s.take_due().map(|(t, _, _)| t)).collect();
        // Times 0, 10 and 20 ms: three batches of 16.
        assert_eq!(due.len(), 48);
        for (k, batch) in due.chunks(16).enumerate() {
            assert!(
                batch.iter().all(|&t| t == t0 + Duration::from_millis(10 * k as u64)),
                "batch {k}"
            );
        }
        let (scheduled, not_completed, lost) = s.close(t0 + Duration::from_secs(2), std::iter::empty(), || 0).unwrap();
        assert_eq!(scheduled, 1600, "a second of it schedules the rate");
        assert_eq!(not_completed, 1600 - 48, "what was never taken is lost, batch by batch");
        assert_eq!(lost.iter().map(|l| l.2).sum::<u64>(), 1600 - 48);
    }

    /// At the highest rate a run may ask, against connections that never take a send, the
    /// backlog stops at EXACT (the rest stay due in the schedule, their times kept) and the
    /// lost ones past EXACT are counted by slice: every scheduled send is accounted for, each
    /// latency a lower bound (before: one entry per send, 24 GB at 1e9 req/s).
    #[test]
    fn a_schedule_no_connection_takes_holds_bounded_memory_and_loses_nothing_uncounted() {
        let t0 = Instant::now();
        let rate = MAX_RATE;
        let mut s = Schedule::new(rate, 1, t0, None);
        let end = t0 + Duration::from_millis(200);
        s.begin(t0, t0, Some(end));
        s.due(t0 + Duration::from_millis(100), |_, _| true, || 0);
        assert_eq!(s.waiting(), EXACT, "the backlog stops at EXACT");
        let (scheduled, not_completed, lost) = s.close(end, std::iter::empty(), || 0).unwrap();
        let want = (rate * 0.2).round() as u64;
        assert!(scheduled.abs_diff(want) <= 1, "{scheduled} of {want}");
        assert_eq!(not_completed, scheduled, "every send lost, each counted");
        assert_eq!(lost.iter().map(|l| l.2).sum::<u64>(), scheduled);
        assert!(lost.len() < EXACT + 2 * SLICES as usize, "{} entries", lost.len());
        // The oldest lost send waited the whole window; none is said to have waited longer,
        // and one counted by its slice (1 ms wide here) at most a slice less.
        let longest = lost.iter().map(|l| l.0).max().unwrap();
        assert!(
            longest <= Duration::from_millis(200) && longest >= Duration::from_millis(199),
            "{longest:?}"
        );
    }
}
