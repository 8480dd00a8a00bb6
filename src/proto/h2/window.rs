//! A flow-control window (RFC 9113 5.2, 6.9): what one side may still send on a stream or on
//! the connection. Its arithmetic is checked in one place, as hyper/h2's `FlowControl` does:
//! a window opened past 2^31 - 1, or DATA beyond what it allows, is the flow-control error;
//! a change of SETTINGS_INITIAL_WINDOW_SIZE may drive it below zero (RFC 9113 6.9.2), and
//! nothing is sent until WINDOW_UPDATEs bring it back above.
//!
//! The receiving side is [`Inflow`]: the window it granted and the credit the other side's
//! DATA used, given back once that is half the window (as h2's `FlowControl` does), so a
//! steady upload costs a WINDOW_UPDATE per half window, not one per DATA frame.

use crate::proto::h2::frame::{self, Code, MAX_WINDOW};

/// A window: bytes the other side lets this one send (or, receiving, what it let the other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window(i64);

/// A window's rule broken: RFC 9113's FLOW_CONTROL_ERROR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowError;

impl From<FlowError> for Code {
    fn from(_: FlowError) -> Code {
        Code::FlowControl
    }
}

impl Window {
    /// A window of `size` bytes.
    pub const fn new(size: i64) -> Window {
        Window(size)
    }

    /// What it holds (below zero after SETTINGS_INITIAL_WINDOW_SIZE shrank it).
    pub fn get(self) -> i64 {
        self.0
    }

    /// How much may be sent now: what it holds, 0 when it is closed or below zero.
    pub fn room(self) -> usize {
        self.0.max(0) as usize
    }

    /// A WINDOW_UPDATE of `inc`: opening it past 2^31 - 1 is the error.
    pub fn grant(&mut self, inc: u32) -> Result<(), FlowError> {
        self.shift(i64::from(inc))
    }

    /// SETTINGS_INITIAL_WINDOW_SIZE changed by `delta`: every stream's window moves by it,
    /// below zero too; past 2^31 - 1 is the error.
    pub fn shift(&mut self, delta: i64) -> Result<(), FlowError> {
        let moved = self.0 + delta;
        if moved > MAX_WINDOW {
            return Err(FlowError);
        }
        self.0 = moved;
        Ok(())
    }

    /// `n` bytes of DATA arrived under it: more than it allows is the error.
    pub fn consume(&mut self, n: usize) -> Result<(), FlowError> {
        let n = n as i64;
        if n > self.0 {
            return Err(FlowError);
        }
        self.0 -= n;
        Ok(())
    }

    /// `n` bytes were sent under it (at most its [`room`](Window::room)).
    pub fn spend(&mut self, n: usize) {
        debug_assert!(n <= self.room(), "sent past the window");
        self.0 -= n as i64;
    }
}

/// A receive window of `size` bytes: what the other side may still send, and the credit its
/// DATA used that is not granted back yet (the two always add up to `size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inflow {
    window: Window,
    size: u32,
    owed: u32,
}

impl Inflow {
    /// A window of `size` bytes (at most 2^31 - 1), all of it open.
    pub fn new(size: u32) -> Inflow {
        let size = size.min(MAX_WINDOW as u32);
        Inflow {
            window: Window::new(i64::from(size)),
            size,
            owed: 0,
        }
    }

    /// `n` bytes of DATA (padding included) arrived under it: more than it allows is the
    /// error; otherwise they are owed back.
    pub fn consume(&mut self, n: usize) -> Result<(), FlowError> {
        self.window.consume(n)?;
        self.owed += n as u32;
        Ok(())
    }

    /// The credit to grant back now (a WINDOW_UPDATE's increment), once it is half the
    /// window or more: then the window holds it again.
    pub fn release(&mut self) -> Option<u32> {
        self.release_at(self.size.div_ceil(2))
    }

    /// [`Inflow::release`] once the credit is `at` or more (half of a smaller window the
    /// other side may still assume).
    pub fn release_at(&mut self, at: u32) -> Option<u32> {
        if self.owed == 0 || self.owed < at {
            return None;
        }
        let inc = std::mem::take(&mut self.owed);
        self.window
            .grant(inc)
            .expect("the credit given back is what the window took");
        Some(inc)
    }

    /// The credit its DATA used that is not granted back yet.
    pub fn owed(&self) -> u32 {
        self.owed
    }

    /// [`Inflow::release_at`], granting back no more than `room`: the credit that fits goes
    /// back once it is `at` or more (or all that is owed), the rest stays owed.
    pub fn release_within(&mut self, at: u32, room: usize) -> Option<u32> {
        let inc = self.owed.min(room.min(u32::MAX as usize) as u32);
        if inc == 0 || (inc < at && inc < self.owed) || self.owed < at {
            return None;
        }
        self.owed -= inc;
        self.window
            .grant(inc)
            .expect("the credit given back is what the window took");
        Some(inc)
    }
}

/// The window the server grants the client, per stream and on the connection: as large as
/// `--max-output` (never under the RFC's 65,535, never past 2^31 - 1), so a client may have as
/// much on its way as the server may hold toward it, and a steady upload costs a WINDOW_UPDATE
/// per half of it ([`Inflow`]). The window open to the client and the output held for its
/// windows share it: a client that never reads makes the session hold at most one such window
/// plus one read.
pub fn recv_window(max_output: usize) -> u32 {
    max_output
        .min(frame::MAX_WINDOW as usize)
        .max(frame::INITIAL_WINDOW as usize) as u32
}

#[cfg(test)]
mod tests {
    use crate::proto::h2::window::*;

    #[test]
    fn a_window_opens_to_two_to_the_31_less_one_and_not_past_it() {
        let mut w = Window::new(MAX_WINDOW - 10);
        assert_eq!(w.grant(10), Ok(()));
        assert_eq!(w.get(), MAX_WINDOW);
        assert_eq!(w.grant(1), Err(FlowError));
        assert_eq!(w.get(), MAX_WINDOW, "a refused grant changes nothing");
    }

    #[test]
    fn settings_may_drive_a_window_below_zero_and_updates_bring_it_back() {
        let mut w = Window::new(65_535);
        w.spend(60_000);
        w.shift(-65_535 + 1000).unwrap();
        assert_eq!(w.get(), 5_535 - 64_535);
        assert_eq!(w.room(), 0, "nothing may be sent below zero");
        w.grant(70_000).unwrap();
        assert_eq!(w.room(), 11_000);
    }

    #[test]
    fn data_past_the_window_is_the_flow_control_error() {
        let mut w = Window::new(100);
        assert_eq!(w.consume(60), Ok(()));
        assert_eq!(w.consume(41), Err(FlowError));
        assert_eq!(w.consume(40), Ok(()));
        assert_eq!(w.get(), 0);
        assert_eq!(Code::from(FlowError), Code::FlowControl);
    }

    #[test]
    fn a_receive_window_gives_its_credit_back_at_half_and_never_past_its_size() {
        let mut w = Inflow::new(100);
        w.consume(30).unwrap();
        assert_eq!(w.release(), None, "under half: kept");
        w.consume(20).unwrap();
        assert_eq!(w.release(), Some(50), "half: all of it back");
        assert_eq!((w.owed(), w.release()), (0, None));
        // The window was whole again: 100 more may come, not 101.
        assert_eq!(w.consume(101), Err(FlowError));
        w.consume(100).unwrap();
        assert_eq!(w.consume(1), Err(FlowError), "closed until credit goes back");
        assert_eq!(w.release(), Some(100));
        // An odd size: half rounds up, so a window of 1 gives back each byte.
        let mut one = Inflow::new(1);
        one.consume(1).unwrap();
        assert_eq!(one.release(), Some(1));
        assert_eq!(
            Inflow::new(u32::MAX),
            Inflow::new(MAX_WINDOW as u32),
            "capped at 2^31 - 1"
        );
        let mut big = Inflow::new(1 << 20);
        big.consume(40_000).unwrap();
        assert_eq!((big.release(), big.release_at(32_768)), (None, Some(40_000)));
    }

    #[test]
    fn credit_goes_back_only_within_the_room_given_and_the_rest_stays_owed() {
        let mut w = Inflow::new(100);
        w.consume(80).unwrap();
        assert_eq!(w.release_within(50, 200), Some(80), "all of it fits");
        w.consume(80).unwrap();
        assert_eq!(w.release_within(50, 60), Some(60), "what fits, at least `at`");
        assert_eq!(w.owed(), 20, "the rest stays owed");
        assert_eq!(w.consume(81), Err(FlowError), "20 still owed: 80 open");
        w.consume(40).unwrap();
        assert_eq!(w.release_within(50, 10), None, "what fits is under `at`: none");
        assert_eq!(w.release_within(50, 0), None, "no room: none");
        assert_eq!(w.release_within(50, 60), Some(60));
        let mut small = Inflow::new(100);
        small.consume(10).unwrap();
        assert_eq!(small.release_within(50, 100), None, "owed under `at`: kept");
    }
}
