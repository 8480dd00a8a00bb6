//! The load engine: one epoll loop per thread, each owning its connections, its timers and its
//! [`Tally`](crate::load::Tally). Nothing is shared on the hot path; the progress line reads a
//! per-thread word the loop stores once per iteration.
//!
//! A connection cycles Down -> Connecting -> Up. While Up it keeps up to `--pipeline` requests
//! in flight, each remembered as (intended send time, actual send time). Closed loop: the next
//! request goes out when a response arrives (after `--think`). Open loop (`--rate`): send times
//! are scheduled at a fixed rate per thread whether or not responses keep up; a request whose
//! time has come waits in a backlog for a free connection, and its latency is measured from the
//! scheduled time (coordinated-omission-correct), the uncorrected latency from the actual send.
//!
//! The engine is a driver: it owns the poller, one set of timers, the schedule (rates, ramps,
//! open and closed loop) and the window, and moves bytes. What a connection's bytes mean is
//! its client connection's ([`Connection`](crate::load::client::Connection), sans I/O, one
//! protocol session each); the engine names no protocol. An [`Engine`] (`thread`) is made of
//! parts that keep their own state: the connection slots ([`slots::Slot`]: socket, TLS, timer
//! and pacing marks around a connection), the connect phase ([`ramp::Ramp`]), the measured
//! window ([`window::Window`]), what `-n` leaves to send ([`Budget`](crate::load::Budget)) and
//! an open loop's [`Schedule`](crate::load::Schedule); what a connection's answers do to the run
//! is its [`books::Ledger`]. What happens to a socket is in `connect` (its life cycle), `issue`
//! (sending), `receive` (reading) and `tls`; a thread's share of the run is its
//! [`ThreadPlan`], its window waits for every thread's [`Start`], and it shows its counts in its
//! [`Progress`] word.

mod books;
mod classes;
mod connect;
mod drain;
mod issue;
mod parts;
mod plan;
mod progress;
mod ramp;
mod receive;
mod slots;
mod start;
mod thread;
mod tls;
mod window;

pub use plan::ThreadPlan;
pub use progress::Progress;
pub use start::Start;
pub use thread::Engine;
