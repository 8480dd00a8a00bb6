//! The engine's [`Books`]: what a client connection's answers and failures do to the run —
//! the budget settled, an open loop's schedule told what will not complete, and the window's
//! figures (latency, throughput, status classes, per connection and per second) counted for
//! what came inside it. The [`Ledger`] holds those parts of the engine; a connection's step
//! borrows it beside the connection.

use std::time::Instant;

use super::window::{Drain, Window};
use crate::load::client::{Books, Sent};
use crate::load::{Budget, ErrorClass, Schedule, Tally};

/// The run's state a thread keeps beside its connections.
pub(super) struct Ledger {
    pub(super) tally: Tally,
    pub(super) window: Window,
    /// What `-n` leaves to send.
    pub(super) budget: Budget,
    /// The open loop's schedule (`--rate`); `None` in a closed loop.
    pub(super) schedule: Option<Schedule>,
    /// After the window (or a stop): what is in flight is waited for, nothing new is sent.
    pub(super) drain: Option<Drain>,
    /// Event streams' figures from outside the measured window (warm-up), kept apart.
    spill: Option<Box<Tally>>,
    /// Event streams being received, over every connection (the progress line's).
    pub(super) open_streams: usize,
    /// The thread's connections.
    slots: usize,
    /// `--metrics`: the window's durations, bucketed for a scrape.
    pub(super) live: Option<crate::load::Live>,
}

impl Ledger {
    /// The books of a thread of `slots` connections.
    pub(super) fn new(
        tally: Tally,
        window: Window,
        budget: Budget,
        schedule: Option<Schedule>,
        slots: usize,
    ) -> Ledger {
        Ledger {
            tally,
            window,
            budget,
            schedule,
            drain: None,
            spill: None,
            open_streams: 0,
            slots,
            live: None,
        }
    }

    /// Whether the window's open-loop schedule is counted (an open loop over a duration).
    pub(super) fn counted_window(&self) -> bool {
        self.schedule.as_ref().is_some_and(|s| s.counted())
    }
}

/// One unanswered request of `class` (after the window, in drain `d`), in the series' last
/// interval.
pub(super) fn count_unanswered(tally: &mut Tally, d: Drain, class: u8) {
    tally.error_at(ErrorClass::Unanswered, d.last_instant());
    if let Some(c) = tally.classes.get_mut(usize::from(class)) {
        c.errors += 1;
    }
}

impl Books for Ledger {
    fn answered(&mut self, index: usize, r: &Sent, status: Option<u16>, now: Instant) -> bool {
        let (intended, sent, class) = (r.intended, r.at, r.class);
        self.budget.settled(1);
        if self.drain.is_some() {
            // Answered after the window: not counted (the schedule was closed with it).
            return false;
        }
        let in_window = self.window.inside(now);
        // Open loop over a duration: the window's requests are those it scheduled; one answered
        // after the close is counted there, as not completed.
        let scheduled = self.schedule.as_ref().map(|s| s.counts(intended));
        let counts = match scheduled {
            Some(true) if !in_window => {
                if let Some(s) = self.schedule.as_mut() {
                    s.lose(intended, class);
                }
                false
            }
            Some(true) => true,
            _ => in_window && !self.counted_window(),
        };
        if !counts {
            return false;
        }
        let t = &mut self.tally;
        t.requests += 1;
        t.per_conn[index] += 1;
        let sec = now.duration_since(self.window.from()).as_secs() as usize;
        if t.per_second.len() <= sec {
            t.per_second.resize(sec + 1, 0);
        }
        t.per_second[sec] += 1;
        let ns = now.duration_since(intended).as_nanos() as u64;
        t.latency.record_ns(ns);
        if let Some(live) = &mut self.live {
            live.observe(ns, 1);
        }
        if let Some(iv) = t.interval(now) {
            iv.completed += 1;
            iv.latency.record_ns(ns);
        }
        if let Some(c) = t.classes.get_mut(class as usize) {
            c.requests += 1;
            c.latency.record_ns(ns);
        }
        // In closed loop intended == sent: a second histogram would be a copy.
        if self.schedule.is_some() {
            t.uncorrected.record_ns(now.duration_since(sent).as_nanos() as u64);
        }
        if let Some(status) = status {
            match status {
                100..=599 => t.status[status as usize / 100 - 1] += 1,
                _ => t.error(ErrorClass::BadResponse),
            }
            if !(200..400).contains(&status) {
                if let Some(c) = t.classes.get_mut(class as usize) {
                    c.non_2xx_3xx += 1;
                }
            }
        }
        true
    }

    fn abandoned(&mut self, r: Sent, class: ErrorClass, now: Instant) {
        self.budget.settled(1);
        if let Some(d) = self.drain {
            // Given up after the window (a stream the server reset, say): unanswered.
            return count_unanswered(&mut self.tally, d, r.class);
        }
        if let Some(s) = self.schedule.as_mut() {
            s.lose(r.intended, r.class);
        }
        if self.window.inside(now) {
            self.answer_failed(class, r.class);
        }
    }

    fn answer_failed(&mut self, class: ErrorClass, request_class: u8) {
        self.tally.error(class);
        if let Some(c) = self.tally.classes.get_mut(usize::from(request_class)) {
            c.errors += 1;
        }
    }

    fn inside(&self, now: Instant) -> bool {
        self.window.inside(now)
    }

    fn tally(&mut self) -> &mut Tally {
        &mut self.tally
    }

    fn events(&mut self, now: Instant) -> &mut Tally {
        match self.window.inside(now) {
            true => &mut self.tally,
            false => self.spill.get_or_insert_with(Default::default),
        }
    }

    fn stream_open(&mut self, open: bool) {
        match open {
            true => self.open_streams += 1,
            false => self.open_streams -= 1,
        }
    }

    fn events_of(&mut self, index: usize, n: u64) {
        let per = &mut self.tally.per_conn_events;
        if per.is_empty() {
            per.resize(self.slots, 0);
        }
        per[index] += n;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// The books of one connection whose window opened at `t0` after `warmup`, for `length`.
    fn ledger(t0: Instant, warmup: Duration, length: Option<Duration>) -> Ledger {
        let mut window = Window::new(t0, warmup.is_zero());
        window.begin(t0, warmup, length);
        let tally = Tally {
            per_conn: vec![0],
            ..Default::default()
        };
        let mut budget = Budget::new(None);
        // The requests the tests settle went out first.
        for _ in 0..8 {
            budget.sent();
        }
        Ledger::new(tally, window, budget, None, 1)
    }

    fn sent(at: Instant) -> Sent {
        Sent {
            intended: at,
            at,
            class: 0,
            stream: 0,
            lane: 0,
            tries: 0,
        }
    }

    #[test]
    fn an_answer_counts_inside_the_window_and_not_after_it_nor_in_the_drain() {
        let t0 = Instant::now();
        let mut l = ledger(t0, Duration::ZERO, Some(Duration::from_secs(1)));
        assert!(l.answered(0, &sent(t0), Some(200), t0 + 10 * MS));
        assert_eq!((l.tally.requests, l.tally.per_conn[0], l.tally.status[1]), (1, 1, 1));
        assert!(!l.answered(0, &sent(t0), Some(200), t0 + 2000 * MS), "after the window");
        assert!(
            l.answered(0, &sent(t0), Some(999), t0 + 20 * MS),
            "a status no class holds"
        );
        assert_eq!(l.tally.errors_by_name().get("bad_response"), Some(&1));
        assert!(
            l.answered(0, &sent(t0), None, t0 + 30 * MS),
            "no status: counted, binned nowhere"
        );
        assert_eq!((l.tally.requests, l.tally.status.iter().sum::<u64>()), (3, 1));
        l.drain = Some(Drain::new(t0 + 1000 * MS, t0 + 3000 * MS));
        assert!(!l.answered(0, &sent(t0), Some(200), t0 + 40 * MS), "in the drain");
        assert_eq!(l.tally.requests, 3);
    }

    #[test]
    fn a_request_given_up_in_the_window_is_an_error_of_its_class_and_in_the_drain_unanswered() {
        let t0 = Instant::now();
        let mut l = ledger(t0, Duration::ZERO, Some(Duration::from_secs(1)));
        l.abandoned(sent(t0), ErrorClass::StreamReset, t0 + 10 * MS);
        l.drain = Some(Drain::new(t0 + 1000 * MS, t0 + 3000 * MS));
        l.abandoned(sent(t0), ErrorClass::StreamReset, t0 + 1500 * MS);
        let errors = l.tally.errors_by_name();
        assert_eq!(
            (errors.get("stream_reset"), errors.get("unanswered")),
            (Some(&1), Some(&1))
        );
    }

    #[test]
    fn event_stream_figures_of_the_warm_up_are_kept_apart_from_the_windows() {
        let t0 = Instant::now();
        let mut l = ledger(t0, Duration::from_secs(1), None);
        l.events(t0 + 10 * MS).requests += 7;
        assert_eq!(l.tally.requests, 0, "the warm-up's went elsewhere");
        l.events(t0 + 1500 * MS).requests += 1;
        assert_eq!(l.tally.requests, 1);
        l.events_of(0, 3);
        assert_eq!(l.tally.per_conn_events, [3]);
    }
}
