//! The simulation's clock: a time (or a virtual time) in seconds, ordered, and a timeline of
//! events of one kind, earliest first.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A time (or a virtual time) in seconds, ordered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct At(pub(super) f64);

impl Eq for At {}

impl PartialOrd for At {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for At {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Events of one kind, earliest first: (when, order of scheduling, what).
pub(super) type Timeline = BinaryHeap<Reverse<(At, u64, usize)>>;
