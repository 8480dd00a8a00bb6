//! [`Books`]: what a client connection tells the run about its requests while it reads, and the
//! one place it reads the run's figures from. The engine keeps the books (the window, the
//! budget, the open loop's schedule, the tally); a connection never sees them, so a test can
//! keep books of its own and step a connection with scripted input.

use std::time::Instant;

use super::Sent;
use crate::load::{ErrorClass, Tally};

/// The run's side of a connection's requests.
pub trait Books {
    /// Request `r` of the connection at `index` (its slot in the thread) was answered at `now`
    /// (`status`: an HTTP status; `None` where the protocol has none): settles it, and says
    /// whether it counts in the run's figures (not outside the window, nor after it).
    fn answered(&mut self, index: usize, r: &Sent, status: Option<u16>, now: Instant) -> bool;

    /// Request `r` will not complete: settled, lost to an open loop's window, and an error of
    /// `class` (and of its request class).
    fn abandoned(&mut self, r: Sent, class: ErrorClass, now: Instant);

    /// An answer that counts is an error all the same (a wrong value, a refusal): one of
    /// `class`, and of request class `request_class`.
    fn answer_failed(&mut self, class: ErrorClass, request_class: u8);

    /// Whether `now` is inside the measured window.
    fn inside(&self, now: Instant) -> bool;

    /// The run's figures (protocols add their own counts; inside the window, see
    /// [`Books::inside`]).
    fn tally(&mut self) -> &mut Tally;

    /// The figures event streams count what arrived at `now` into: the window's, or the
    /// warm-up's, kept apart and never reported.
    fn events(&mut self, now: Instant) -> &mut Tally;

    /// An event stream opened (`true`) or ended: the progress line's count.
    fn stream_open(&mut self, open: bool);

    /// `n` events came inside the window on the connection at `index`.
    fn events_of(&mut self, index: usize, n: u64);
}
