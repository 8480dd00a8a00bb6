//! The runtime's entry points the `green` model calls: each green thread starts with its
//! [`Parking`] (its waits at the netpoller over its own stack), and reports how deep its stack
//! went when it finishes.

use std::time::Duration;

use super::parking::Parking;
use super::sched::{Ran, Runtime};
use crate::server::{Ctx, Error};
use crate::sys;

/// The body of a green thread given its stack: `f` with the thread's `Parking`, and how deep
/// the stack went, also when `f` panicked.
fn parked(f: impl FnOnce(&Parking) + Send + 'static) -> impl FnOnce(sys::stack::Bounds) -> Ran + Send + 'static {
    move |bounds| {
        let parking = Parking::new(bounds);
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&parking)));
        Ran {
            deepest: parking.deepest(),
            panicked: ran.is_err(),
        }
    }
}

/// Runs a green runtime of `ctx.workers` processors with `first` as its first thread, until
/// the server stops and every thread has finished.
pub fn run(ctx: &'static Ctx, slice: Duration, first: impl FnOnce(&Parking) + Send + 'static) -> Result<(), Error> {
    Runtime::run(ctx, slice, parked(first))
}

/// Starts a green thread running `f`, from a green thread: in its processor's run queue.
pub fn spawn(f: impl FnOnce(&Parking) + Send + 'static) -> std::io::Result<()> {
    Runtime::spawn(parked(f))
}
