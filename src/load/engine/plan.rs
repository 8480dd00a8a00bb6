//! One engine thread's share of a process's run: its connection slots, its part of `-n`, of
//! `--rate` and of `--connect-rate`.

use std::time::Instant;

/// One thread's share of the run.
#[derive(Debug, Clone)]
pub struct ThreadPlan {
    /// Connection slots this thread runs.
    pub conns: usize,
    /// Global number of its first slot (echo patterns differ per slot).
    pub first_slot: u64,
    /// Requests to send in the measured window (`-n`); `None`: run for the duration.
    pub quota: Option<u64>,
    /// Requests per second for this thread (`--rate`).
    pub rate: Option<f64>,
    /// New connections per second for this thread (`--connect-rate`).
    pub connect_rate: Option<f64>,
    /// When everything started.
    pub t0: Instant,
}

impl ThreadPlan {
    /// Thread `t` of `threads`' part of a process's `share`, from `t0`.
    pub fn of(share: &crate::load::Share, threads: usize, t: usize, t0: Instant) -> ThreadPlan {
        let conns = share.connections;
        let (n, off) = crate::load::split(conns, threads, t);
        ThreadPlan {
            conns: n,
            first_slot: share.first_slot + off as u64,
            quota: share.quota.map(|q| crate::load::split_weighted(q, conns, off, n)),
            rate: share.rate.map(|r| {
                let first = share.first_slot;
                let (mine, all) = (
                    crate::load::Share::senders(share.active, first + off as u64, n),
                    crate::load::Share::senders(share.active, first, conns),
                );
                if all > 0.0 {
                    r * mine / all
                } else {
                    0.0
                }
            }),
            connect_rate: share.connect_rate.map(|r| r / threads as f64),
            t0,
        }
    }
}
