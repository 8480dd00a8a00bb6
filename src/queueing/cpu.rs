//! The server's CPUs in the simulation: how the requests computing at once share them.
//!
//! - [`Sharing::Processor`]: ideal processor sharing, each computing request running at
//!   `min(1, cpus / computing)` of a CPU, kept by a virtual clock (a request's CPU part ends
//!   when the virtual clock has run its length since it began).
//! - [`Sharing::Slices`]: what the kernel does with more runnable threads than CPUs — each CPU
//!   runs one thread for at most a slice, then the next in line (round robin). A request that
//!   arrives while a long one runs waits up to a slice, not a fair share of an instant. Wake-up
//!   preemption (EEVDF letting a woken thread with lag run at once) is left out: the woken
//!   request waits its turn.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::time::At;

/// How the CPUs are shared by the requests computing at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sharing {
    /// Ideal processor sharing.
    Processor,
    /// Round robin in slices of this many seconds.
    Slices(f64),
}

/// A slot on a CPU under [`Sharing::Slices`]: the request, its CPU left, and when its turn ends.
#[derive(Debug, Clone, Copy)]
struct Turn {
    slot: usize,
    left: f64,
    ends: f64,
}

/// The CPUs and the requests computing on them.
pub(super) struct Cpus {
    cpus: usize,
    sharing: Sharing,
    order: u64,
    // Processor sharing: the virtual clock, and the requests by virtual end.
    virtual_now: f64,
    computing: BinaryHeap<Reverse<(At, u64, usize)>>,
    // Slices: the run queue (request, CPU left), and each CPU's turn.
    queue: VecDeque<(usize, f64)>,
    turns: Vec<Option<Turn>>,
}

impl Cpus {
    pub(super) fn new(cpus: usize, sharing: Sharing) -> Cpus {
        Cpus {
            cpus: cpus.max(1),
            sharing,
            order: 0,
            virtual_now: 0.0,
            computing: BinaryHeap::new(),
            queue: VecDeque::new(),
            turns: vec![None; cpus.max(1)],
        }
    }

    /// Each computing request's share of a CPU under processor sharing.
    fn share(&self) -> f64 {
        match self.computing.len() {
            0 => 0.0,
            m => (self.cpus as f64 / m as f64).min(1.0),
        }
    }

    /// Request `slot` starts computing `cpu` seconds at `now`.
    pub(super) fn add(&mut self, slot: usize, cpu: f64, now: f64) {
        self.order += 1;
        match self.sharing {
            Sharing::Processor => {
                let end = self.virtual_now + cpu;
                self.computing.push(Reverse((At(end), self.order, slot)));
            }
            Sharing::Slices(_) => {
                self.queue.push_back((slot, cpu));
                self.dispatch(now);
            }
        }
    }

    /// Idle CPUs take the next requests in line.
    fn dispatch(&mut self, now: f64) {
        let Sharing::Slices(slice) = self.sharing else { return };
        for turn in self.turns.iter_mut().filter(|t| t.is_none()) {
            let Some((slot, left)) = self.queue.pop_front() else {
                break;
            };
            *turn = Some(Turn {
                slot,
                left,
                ends: now + left.min(slice),
            });
        }
    }

    /// When the next CPU event happens (a request's CPU part ends, or a turn does), if any.
    pub(super) fn next(&self, now: f64) -> Option<f64> {
        match self.sharing {
            Sharing::Processor => {
                let Reverse((end, _, _)) = self.computing.peek()?;
                Some(now + (end.0 - self.virtual_now).max(0.0) / self.share())
            }
            Sharing::Slices(_) => self.turns.iter().flatten().map(|t| t.ends).min_by(f64::total_cmp),
        }
    }

    /// The clock moves from `now` to `to` (before anything else changes).
    pub(super) fn advance(&mut self, now: f64, to: f64) {
        if self.sharing == Sharing::Processor && !self.computing.is_empty() {
            self.virtual_now += (to - now) * self.share();
        }
    }

    /// The CPU event [`next`](Self::next) gave, at `now`: the request whose CPU part ended, if
    /// one did (a turn that ends with CPU left puts its request back in line).
    pub(super) fn step(&mut self, now: f64) -> Option<usize> {
        match self.sharing {
            Sharing::Processor => {
                let Reverse((end, _, slot)) = self.computing.pop()?;
                self.virtual_now = self.virtual_now.max(end.0);
                Some(slot)
            }
            Sharing::Slices(slice) => {
                let ends = |i: usize| self.turns[i].map_or(f64::INFINITY, |t| t.ends);
                let i = (0..self.turns.len())
                    .filter(|&i| self.turns[i].is_some())
                    .min_by(|&a, &b| ends(a).total_cmp(&ends(b)))?;
                let t = self.turns[i].take()?;
                let done = t.left <= slice;
                if !done {
                    self.queue.push_back((t.slot, t.left - slice));
                }
                self.dispatch(now);
                done.then_some(t.slot)
            }
        }
    }
}
