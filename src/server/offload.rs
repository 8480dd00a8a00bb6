//! Handing a request's work to other threads: the contract between the per-request hook and a
//! design that offloads (the `offload` model's pool). The loop's hook draws the request's work
//! ([`Job`]) and, where the design takes it ([`Offloader::submit`]), answers the request later
//! ([`crate::proto::later::Later::Pending`]) with the job's ticket; the thread that did the work
//! posts the ticket back to the loop, which completes the response
//! ([`crate::proto::Session::complete_each`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::ctx::Worker;

/// One request's work, drawn by the loop, done by the pool.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    /// The connection (its token in the loop that owns it) and the response's ticket.
    pub conn: u64,
    pub ticket: u64,
    /// The drawn CPU time and wait, and the mean of the distribution they were drawn from
    /// (what a reservation sorts by).
    pub cpu: Duration,
    pub wait: Duration,
    pub mean: Duration,
    /// The class's row in the server's class table (`None`: not counted per class).
    pub row: Option<usize>,
    /// When it was queued (its wait in the pool counts from here).
    pub queued: Instant,
}

/// A design that takes requests' work off the thread that parsed them.
pub trait Offloader: Sync {
    /// Whether a request whose work, as drawn, takes `work` (CPU and waiting) goes to the pool
    /// (else it runs inline): the draw decides, not its distribution's mean, so a long tail
    /// behind a small mean still leaves the loop.
    fn takes(&self, work: Duration) -> bool;

    /// Queues `job`.
    fn submit(&self, w: Worker<'_>, job: Job);

    /// The responses of these tickets will never be written (their streams were reset, or
    /// their connection closed): their queued work is dropped (a cancel that comes after a
    /// worker took the job finds nothing to drop).
    fn cancel(&self, w: Worker<'_>, tickets: &[u64]);
}

/// Does a job's work on the calling thread (a pool's), counted in its class.
pub fn perform(w: Worker<'_>, job: &Job) {
    let busy = super::work::perform(job.cpu, job.wait);
    if let Some(row) = job.row {
        w.ctx
            .classes
            .count(row.min(super::classes::ROWS), busy.as_nanos() as u64);
    }
}

/// Tickets handed out by this process.
static TICKETS: AtomicU64 = AtomicU64::new(1);

/// A ticket no other response of this process has.
pub fn ticket() -> u64 {
    TICKETS.fetch_add(1, Ordering::Relaxed)
}
