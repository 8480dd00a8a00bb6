//! A keyed store in the simulation: what a command does beside its CPU. With a lock
//! ([`Lock`]: `locked`, `striped:N`), each command holds one of the store's locks for its
//! critical section — drawn by its key, so hot keys make hot stripes — and a command that finds
//! it held waits, its worker blocked, in that lock's queue; the critical section is CPU too,
//! shared as the rest is, so a holder that loses its CPU keeps the others waiting. With shards
//! ([`Shards`]: `sharded`), a command whose key another worker owns is a second queue's: its
//! worker does its part and goes on, and the owner runs the rest when it comes to it in its
//! own queue. The costs are measured: the design's CPU per command, and the critical section
//! (the store's one-in-64 timed lock holds, `store::taken`).

use std::collections::VecDeque;
use std::time::Duration;

/// The store's locks: each command holds the one of its key's stripe for `hold`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lock {
    /// Each stripe's share of the commands, cumulative (one stripe: `[1.0]`; none is read as
    /// one).
    pub stripes: Vec<f64>,
    pub hold: Duration,
    /// Commands per request (a pipelined batch's): their critical sections run one after
    /// another, each on its own key's stripe.
    pub commands: usize,
}

/// The store's shards, one per worker: a command whose key another worker owns has that
/// worker run its last `cost` of CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Shards {
    /// Each worker's share of the keys' commands, cumulative.
    pub owners: Vec<f64>,
    /// The owner's part of one command.
    pub cost: Duration,
    /// Commands per request (a pipelined batch's), each with its own key: the parts of those
    /// another worker owns go to the first such owner (exact with two workers).
    pub commands: usize,
}

/// Cumulative shares of `weights` (their sum need not be 1).
pub fn cumulative(weights: &[f64]) -> Vec<f64> {
    let total: f64 = weights.iter().sum();
    weights
        .iter()
        .scan(0.0, |acc, w| {
            *acc += w / total;
            Some(*acc)
        })
        .collect()
}

/// What a command does after the CPU part it is computing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Then {
    /// Nothing more: it is done (or waits, with `sleep:` work).
    Done,
    /// Takes lock `stripe` (or waits for it), then computes `hold` holding it; `left`: the
    /// critical sections left, this one included (a batch's commands).
    Lock { stripe: usize, hold: f64, left: usize },
    /// Holds lock `stripe`: releases it when its CPU part ends, then takes the next.
    Holding { stripe: usize, hold: f64, left: usize },
    /// Goes to worker `owner`'s queue, where `cpu` of it is run.
    Hop { owner: usize, cpu: f64 },
    /// Sent here by a hop: computes `cpu` when its worker takes it.
    Hopped { cpu: f64 },
}

/// The locks' state: which are held, and who waits for each (a request's slot and the
/// critical section it will compute).
pub(super) struct Locks {
    held: Vec<bool>,
    waiting: Vec<VecDeque<(usize, f64)>>,
}

impl Locks {
    pub(super) fn new(stripes: usize) -> Locks {
        Locks {
            held: vec![false; stripes.max(1)],
            waiting: vec![VecDeque::new(); stripes.max(1)],
        }
    }

    /// Slot `slot` asks for `stripe`: whether it took it (else it waits in line).
    pub(super) fn take(&mut self, stripe: usize, slot: usize, hold: f64) -> bool {
        if self.held[stripe] {
            self.waiting[stripe].push_back((slot, hold));
            return false;
        }
        self.held[stripe] = true;
        true
    }

    /// `stripe` is released: the next in line takes it (its slot and critical section).
    pub(super) fn release(&mut self, stripe: usize) -> Option<(usize, f64)> {
        let next = self.waiting[stripe].pop_front();
        self.held[stripe] = next.is_some();
        next
    }
}
