//! Handing a request's work to other threads: the contract between the per-request hook and a
//! design that offloads (the `offload` model's pool). The loop's hook draws the request's work
//! ([`Job`]) and, where the design takes it ([`Offloader::submit`]), answers the request later
//! ([`crate::proto::later::Later::Pending`]) with the job's ticket; the thread that did the work
//! posts the ticket back to the loop, which completes the response
//! ([`crate::proto::Session::complete_each`]).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::server::{Job, Worker};

/// Does a job's work on the calling thread (a pool's), counted in its class.
pub fn perform(w: Worker<'_>, job: &Job) {
    let busy = crate::server::work::perform(job.cpu, job.wait);
    if let Some(row) = job.row {
        w.ctx
            .classes
            .count(row.min(crate::server::ROWS), busy.as_nanos() as u64);
    }
}

/// Tickets handed out by this process.
static TICKETS: AtomicU64 = AtomicU64::new(1);

/// A ticket no other response of this process has.
pub fn ticket() -> u64 {
    TICKETS.fetch_add(1, Ordering::Relaxed)
}
