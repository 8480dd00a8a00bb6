//! Budgets per connection for the floods that cost a server without asking it for anything:
//! resets by the client (Rapid Reset, CVE-2023-44487), resets the client makes the server send
//! (MadeYouReset, 2025), and frames that produce no output (empty DATA, PRIORITY, unknown
//! types, SETTINGS and PING beyond reason, RST_STREAM and WINDOW_UPDATE on closed streams).
//! Past a budget the connection ends with GOAWAY ENHANCE_YOUR_CALM, as nginx, h2o, Go, hyper/h2
//! and Netty end theirs.
//!
//! Each budget is a number of events in a sliding window, kept in O(1) state: the count of the
//! current fixed window plus the previous window's, weighted by how much of it the sliding
//! window still covers (the approximation rate limiters use at scale). The clock is read only
//! when an event is counted: a connection that sends requests and nothing else never reads it.

use std::time::{Duration, Instant};

use crate::proto::{Calm, Cause, Rate};

/// One budget's count over its sliding window.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    rate: Rate,
    /// When the current fixed window began (`None`: no event yet).
    start: Option<Instant>,
    current: u32,
    previous: u32,
}

impl Budget {
    pub fn new(rate: Rate) -> Budget {
        Budget {
            rate,
            start: None,
            current: 0,
            previous: 0,
        }
    }

    /// One more event at `now`: `false` once the events in the sliding window pass the budget.
    pub fn spend(&mut self, now: Instant) -> bool {
        if self.rate == Rate::OFF {
            return true;
        }
        let per = self.rate.per;
        let start = *self.start.get_or_insert(now);
        let since = now.saturating_duration_since(start);
        if since >= per {
            // The fixed window moved on: one window later, the current becomes the previous;
            // two or more, both are past (and the window starts where `now` falls).
            let windows = since.as_nanos() / per.as_nanos();
            self.previous = if windows == 1 { self.current } else { 0 };
            self.current = 0;
            let into = Duration::from_nanos((since.as_nanos() % per.as_nanos()) as u64);
            self.start = Some(now - into);
        }
        self.current = self.current.saturating_add(1);
        let into = now.saturating_duration_since(self.start.unwrap_or(now)).as_secs_f64() / per.as_secs_f64();
        let seen = f64::from(self.previous) * (1.0 - into) + f64::from(self.current);
        seen <= f64::from(self.rate.max)
    }
}

/// A connection's three budgets, the first it went past (its end), and the frames so far that
/// produced no output.
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    client_resets: Budget,
    server_resets: Budget,
    quiet_frames: Budget,
    tripped: Option<Cause>,
    quiet: u32,
}

impl Budgets {
    pub fn new(calm: Calm) -> Budgets {
        Budgets {
            client_resets: Budget::new(calm.client_resets),
            server_resets: Budget::new(calm.server_resets),
            quiet_frames: Budget::new(calm.quiet_frames),
            tripped: None,
            quiet: 0,
        }
    }

    /// One event of `cause`, now; the first budget spent is the connection's end
    /// ([`Budgets::tripped`]).
    pub fn spend(&mut self, cause: Cause) {
        if self.tripped.is_some() {
            return;
        }
        let budget = match cause {
            Cause::ClientResets => &mut self.client_resets,
            Cause::ServerResets => &mut self.server_resets,
            Cause::QuietFrames => &mut self.quiet_frames,
        };
        if !budget.spend(Instant::now()) {
            self.tripped = Some(cause);
        }
    }

    /// A frame that produced no output (asked nothing of the server): counted against its
    /// budget, and not as the connection's activity.
    pub fn quiet_frame(&mut self) {
        self.quiet = self.quiet.wrapping_add(1);
        self.spend(Cause::QuietFrames);
    }

    /// The budget the connection went past, if it did.
    pub fn tripped(&self) -> Option<Cause> {
        self.tripped
    }

    /// Frames that produced no output so far (wrapping: differences count).
    pub fn quiet(&self) -> u32 {
        self.quiet
    }
}

#[cfg(test)]
mod tests {
    use crate::proto::h2::budget::*;

    #[test]
    fn a_rate_reads_and_writes_back_and_bad_ones_are_refused() {
        let r: Rate = "200/30s".parse().unwrap();
        assert_eq!(r, Rate::CLIENT_RESETS);
        assert_eq!(r.to_string(), "200/30s");
        assert_eq!("off".parse::<Rate>().unwrap().to_string(), "off");
        use crate::proto::{BadCalm, CalmFault};
        use crate::units::{BadValue, DurationFault};
        let soon = BadValue::Duration {
            given: "soon".into(),
            fault: DurationFault::NotANumber,
        };
        for (bad, fault) in [
            ("200", CalmFault::NoSlash),
            ("x/1s", CalmFault::CountNotWhole),
            ("0/1s", CalmFault::ZeroCount),
            ("5/0s", CalmFault::WindowOutOfRange { per: Duration::ZERO }),
            ("5/soon", CalmFault::Window(soon)),
            (
                "5/1ns",
                CalmFault::WindowOutOfRange {
                    per: Duration::from_nanos(1),
                },
            ),
            (
                "5/2d",
                CalmFault::Window(BadValue::Duration {
                    given: "2d".into(),
                    fault: DurationFault::UnknownUnit,
                }),
            ),
        ] {
            let e = bad.parse::<Rate>().unwrap_err();
            assert_eq!(
                e,
                BadCalm {
                    given: bad.into(),
                    fault
                },
                "{bad}"
            );
        }
        assert_eq!(
            "5/ soon".parse::<Rate>().unwrap_err().to_string(),
            "'5/ soon': 'soon' is not a duration: write e.g. 200us, 5ms, 1.5s, 2m (write N/DURATION, e.g. 200/30s, or off)"
        );
        assert_eq!(
            "0/1s".parse::<Rate>().unwrap_err().to_string(),
            "'0/1s': the count must be more than zero (write N/DURATION, e.g. 200/30s, or off)"
        );
    }

    #[test]
    fn a_budget_allows_its_count_in_a_window_and_refuses_the_next() {
        let t0 = Instant::now();
        let mut b = Budget::new("3/10s".parse().unwrap());
        assert!((0..3).all(|i| b.spend(t0 + Duration::from_millis(i))));
        assert!(!b.spend(t0 + Duration::from_millis(5)), "the fourth within the window");
    }

    #[test]
    fn the_window_slides_the_previous_windows_events_fading_out() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut b = Budget::new("10/10s".parse().unwrap());
        assert!((0..10).all(|_| b.spend(t0)));
        // 5 s into the next window half of the previous 10 still count: 5 more fit.
        assert!((0..5).all(|_| b.spend(t0 + s(15))));
        assert!(!b.spend(t0 + s(15)));
        // Two windows later nothing of the first counts: 10 fit again, not 11.
        let mut b = Budget::new("10/10s".parse().unwrap());
        assert!((0..10).all(|_| b.spend(t0)));
        assert!((0..10).all(|_| b.spend(t0 + s(25))));
        assert!(!b.spend(t0 + s(25)));
    }

    #[test]
    fn no_budget_never_runs_out() {
        let mut b = Budget::new(Rate::OFF);
        let t0 = Instant::now();
        assert!((0..100_000).all(|_| b.spend(t0)));
    }

    /// The first budget spent is the one a connection ended for, whatever comes after; quiet
    /// frames are counted as they are spent.
    #[test]
    fn the_first_budget_spent_is_the_one_that_stays_tripped() {
        let one: Rate = "1/10s".parse().unwrap();
        let mut b = Budgets::new(Calm {
            client_resets: one,
            server_resets: Rate::OFF,
            quiet_frames: one,
        });
        b.spend(Cause::ClientResets);
        assert_eq!(b.tripped(), None, "one reset is within 1/10s");
        b.spend(Cause::ServerResets);
        b.spend(Cause::ClientResets);
        assert_eq!(b.tripped(), Some(Cause::ClientResets));
        b.quiet_frame();
        b.quiet_frame();
        assert_eq!(b.quiet(), 2);
        assert_eq!(
            b.tripped(),
            Some(Cause::ClientResets),
            "the quiet frames' budget came second"
        );
    }
}
