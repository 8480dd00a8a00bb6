//! The start gate of threaded models.

use std::sync::{Condvar, Mutex};

use super::config::TICK;
use crate::sync::{lock, wait_timeout};

/// Where the threads of a threaded model meet before any of them accepts: a worker that sets up
/// its epoll instance or ring after another started accepting could find every descriptor taken
/// (EMFILE) and fail. Process models need none: each process has its own descriptor table.
pub struct Gate {
    /// Per party (workers, then the main thread): arrived yet?
    arrived: Mutex<Vec<bool>>,
    all_in: Condvar,
}

impl Gate {
    /// A gate for `parties` threads; 0 makes every call a no-op.
    pub fn new(parties: usize) -> Gate {
        Gate {
            arrived: Mutex::new(vec![false; parties]),
            all_in: Condvar::new(),
        }
    }

    /// Party `i` is ready; waits until every party is (or the server stops).
    pub fn arrive_and_wait(&self, i: usize, stop: &dyn Fn() -> bool) {
        let mut a = lock(&self.arrived);
        if i >= a.len() {
            return;
        }
        a[i] = true;
        self.all_in.notify_all();
        while !a.iter().all(|x| *x) && !stop() {
            a = wait_timeout(&self.all_in, a, TICK);
        }
    }

    /// Party `i` will not come (it ended): nobody waits for it.
    pub fn leave(&self, i: usize) {
        let mut a = lock(&self.arrived);
        if let Some(x) = a.get_mut(i) {
            *x = true;
        }
        self.all_in.notify_all();
    }
}
