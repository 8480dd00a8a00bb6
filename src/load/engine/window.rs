//! When an engine thread measures: from the warm-up's end to the duration's, once connecting
//! is over and the window's start is known.

use std::time::{Duration, Instant};

/// Far enough ahead to mean "not yet": the window's start before connecting has ended.
const NOT_YET: Duration = Duration::from_secs(100 * 365 * 86_400);

/// After the window (or a stop): how long what is in flight is waited for (see `drain`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Drain {
    /// The window's close: unanswered requests are counted in the series' last interval.
    closed: Instant,
    /// When waiting ends.
    until: Instant,
}

impl Drain {
    pub(super) fn new(closed: Instant, until: Instant) -> Drain {
        Drain { closed, until }
    }

    /// Waiting is over at `now`.
    pub(super) fn over(&self, now: Instant) -> bool {
        now >= self.until
    }

    /// The last instant of the window: where what went unanswered is counted.
    pub(super) fn last_instant(&self) -> Instant {
        self.closed.checked_sub(Duration::from_nanos(1)).unwrap_or(self.closed)
    }

    /// How long the loop may wait for an event: up to the drain's end, or the next scan.
    pub(super) fn wait(&self, now: Instant, next_scan: Instant) -> Duration {
        self.until.min(next_scan).saturating_duration_since(now)
    }
}

/// The measured window of one engine thread.
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    /// The warm-up's end (far ahead until the start is known).
    from: Instant,
    /// The duration's end; `None` for a run of `-n` requests (or not known yet).
    end: Option<Instant>,
    /// The start is known (`from` and `end` are set).
    known: bool,
    /// The run has no warm-up: before the start is known, what is committed already counts
    /// (the window then starts with the first request).
    no_warmup: bool,
}

impl Window {
    /// A window not known yet, of a run that started at `t0`.
    pub(super) fn new(t0: Instant, no_warmup: bool) -> Window {
        Window {
            from: t0 + NOT_YET,
            end: None,
            known: false,
            no_warmup,
        }
    }

    /// Connecting ended at `t0`: the window runs `warmup` later, for `duration` (if any).
    pub(super) fn begin(&mut self, t0: Instant, warmup: Duration, duration: Option<Duration>) {
        self.known = true;
        self.from = t0 + warmup;
        self.end = duration.map(|d| self.from + d);
    }

    pub(super) fn known(&self) -> bool {
        self.known
    }

    /// The warm-up's end.
    pub(super) fn from(&self) -> Instant {
        self.from
    }

    pub(super) fn end(&self) -> Option<Instant> {
        self.end
    }

    /// At or past the warm-up's end.
    pub(super) fn started(&self, now: Instant) -> bool {
        now >= self.from
    }

    /// Past the duration's end.
    pub(super) fn over(&self, now: Instant) -> bool {
        self.end.is_some_and(|e| now >= e)
    }

    /// Inside the window: past the warm-up, not past the end.
    pub(super) fn inside(&self, now: Instant) -> bool {
        now >= self.from && self.end.is_none_or(|e| now <= e)
    }

    /// Whether what is committed at `now` counts against the quota: inside the window, or,
    /// before its start is known, when there is no warm-up.
    pub(super) fn counting(&self, now: Instant) -> bool {
        match self.known {
            true => now >= self.from,
            false => self.no_warmup,
        }
    }
}
