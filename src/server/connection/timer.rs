//! The timer a connection's wiring holds for it: when it is armed for, from when that time is
//! near enough to keep, and whether the first is still to be armed. The connection works out
//! its timeouts ([`super::Connection::poll_timeout`]); this part decides when the wiring needs
//! a new timer for them, and whether one that came is the one it holds.
//!
//! Most steps need not work the timeouts out: a deadline a step sets lies at least a floor
//! ahead (a tick, the header or idle timeout: each runs from now) and most others only move
//! later. So while the held timer is still ahead, within that floor, and no later response's
//! piece falls due before it, it will do as it is: a timeout that comes back earlier than it
//! (giving back buffers after a PING, a head's deadline once a ring's send drained) is handled
//! when it comes, at most the floor late — the old sweep's tick.

use std::time::{Duration, Instant};

use crate::timer::Stamp;

/// The timer held for a connection (its times kept as [`Stamp`]s: 16 bytes in all).
#[derive(Debug, Clone, Copy)]
pub struct Held {
    /// The time its wiring holds a timer for.
    at: Option<Stamp>,
    /// From when on that time is within the floor of a new timeout (its time less the floor);
    /// `None` while nothing has moved since the connection was made and its first timer is
    /// still to be armed (it means nothing until a timer is held).
    from: Option<Stamp>,
}

/// A `from` for a connection no longer fresh whose timer is not armed yet: any time does (it
/// is read only while a timer is held, and arming sets it).
const MOVED: Stamp = Stamp::EPOCH;

impl Held {
    /// A connection made at `now`: no timer yet.
    pub fn new() -> Held {
        Held { at: None, from: None }
    }

    /// The connection moved: its first timer, if still to come, is reckoned as any other.
    pub fn moved(&mut self) {
        self.from.get_or_insert(MOVED);
    }

    /// The held timer will do at `now` (still ahead, within the floor, and no later piece,
    /// `due()`, falls due before it): no timeout need be worked out.
    pub fn will_do(&self, now: Instant, due: impl FnOnce() -> Option<Instant>) -> bool {
        let held = self.at.map(Stamp::instant);
        held.is_some_and(|held| {
            held > now && self.from.is_some_and(|from| now >= from.instant()) && due().is_none_or(|d| d >= held)
        })
    }

    /// Its first timer, once, for a connection made at `made` where nothing has moved
    /// (`moving`: something is moving in this very step): every timeout runs from then, none
    /// sooner than `floor` (a connection answered and closed at once costs no reckoning).
    pub fn first(&mut self, moving: bool, made: Instant, floor: Duration) -> Option<Instant> {
        if self.from.is_some() || moving || self.at.is_some() {
            return None;
        }
        self.hold(made + floor, made)
    }

    /// The time the wiring must arm a timer for at `now`, for the earliest timeout `due`: none
    /// while the held one comes no later (it comes early, finds nothing due, and the next is
    /// armed: a deadline that moves later with every request costs no new timer).
    pub fn arm(&mut self, due: Instant, now: Instant, floor: Duration) -> Option<Instant> {
        if self
            .at
            .map(Stamp::instant)
            .is_some_and(|held| held > now && held <= due)
        {
            return None;
        }
        self.hold(due, due.checked_sub(floor).unwrap_or(due))
    }

    fn hold(&mut self, at: Instant, from: Instant) -> Option<Instant> {
        self.at = Some(Stamp::of(at));
        self.from = Some(Stamp::of(from));
        Some(at)
    }

    /// The wiring's timer for `at` came up at `now` (`None`: a timer that carries no time):
    /// `false` when it is not the one held (stale). One whose time has come is spent.
    pub fn came(&mut self, at: Option<Instant>, now: Instant) -> bool {
        if at.is_some_and(|at| self.at != Some(Stamp::of(at))) {
            return false;
        }
        if self.at.map(Stamp::instant).is_some_and(|held| held <= now) {
            self.at = None;
        }
        true
    }

    /// The wiring's timer for `at` is the one held.
    pub fn is(&self, at: Instant) -> bool {
        self.at == Some(Stamp::of(at))
    }
}
