//! A command's table lock, taken and counted: every acquisition, those that found the lock
//! held and waited for it, and one in [`EVERY`] timed — how long it waited, how long the
//! command then held it (its critical section, a wall-clock time: a holder preempted inside it
//! holds it longer). Three clock reads per 64 acquisitions: the design's lock costs are
//! measured, never guessed, at a cost no figure resolves. The tally
//! is the thread's own, taken by whoever counts the command ([`drain`]).

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Instant;

use super::table::Table;

/// One acquisition in this many is timed.
pub const EVERY: u64 = 64;

/// What this thread's acquisitions found since the last [`drain`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub taken: u64,
    /// Found the lock held and waited.
    pub contended: u64,
    /// Timed, and their nanoseconds waiting and holding.
    pub timed: u64,
    pub waited_ns: u64,
    pub held_ns: u64,
}

thread_local! {
    static TALLY: Cell<Tally> = const { Cell::new(Tally { taken: 0, contended: 0, timed: 0, waited_ns: 0, held_ns: 0 }) };
    /// Acquisitions ever made on this thread: which ones are timed.
    static SEQ: Cell<u64> = const { Cell::new(0) };
}

/// A table's lock held by a command.
pub struct Taken<'a> {
    guard: MutexGuard<'a, Table>,
    /// When it was acquired, where this acquisition is timed.
    since: Option<Instant>,
}

/// Takes `m`'s lock (poisoned or not, as `sync::lock`), counted.
pub fn take(m: &Mutex<Table>) -> Taken<'_> {
    let n = next_seq();
    let asked = n.is_multiple_of(EVERY).then(Instant::now);
    let (guard, contended) = match m.try_lock() {
        Ok(g) => (g, false),
        Err(TryLockError::Poisoned(p)) => (p.into_inner(), false),
        Err(TryLockError::WouldBlock) => (crate::sync::lock(m), true),
    };
    let since = asked.map(|asked| {
        let now = Instant::now();
        add(|t| t.waited_ns += (now - asked).as_nanos() as u64);
        now
    });
    add(|t| {
        t.taken += 1;
        t.contended += u64::from(contended);
    });
    Taken { guard, since }
}

/// This thread's next acquisition's number.
#[inline(never)]
fn next_seq() -> u64 {
    SEQ.with(|s| {
        let n = s.get().wrapping_add(1);
        s.set(n);
        n
    })
}

#[inline(never)]
fn add(f: impl FnOnce(&mut Tally)) {
    TALLY.with(|c| {
        let mut t = c.get();
        f(&mut t);
        c.set(t);
    });
}

/// This thread's tally since the last call, reset.
#[inline(never)]
pub fn drain() -> Tally {
    TALLY.with(|c| c.replace(Tally::default()))
}

impl Deref for Taken<'_> {
    type Target = Table;
    fn deref(&self) -> &Table {
        &self.guard
    }
}

impl DerefMut for Taken<'_> {
    fn deref_mut(&mut self) -> &mut Table {
        &mut self.guard
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        if let Some(since) = self.since {
            let held = since.elapsed().as_nanos() as u64;
            add(|t| {
                t.timed += 1;
                t.held_ns += held;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every acquisition is counted, one in 64 timed; a lock another thread holds is a
    /// contended acquisition, and its whole wait is in the timed one's figure.
    #[test]
    fn acquisitions_are_counted_the_held_ones_as_contended_and_one_in_64_timed() {
        let m = std::sync::Arc::new(Mutex::new(Table::new()));
        // The next acquisition is the first of a round of 64 (a test thread may be reused).
        SEQ.with(|s| s.set(0));
        drain();
        for _ in 0..EVERY {
            drop(take(&m));
        }
        let t = drain();
        assert_eq!((t.taken, t.contended, t.timed), (EVERY, 0, 1));
        assert_eq!(drain(), Tally::default(), "drained");
        // Held here while another thread takes it: its 64th acquisition, timed, finds the lock
        // held. The lock is released only once that thread sleeps in its wait (its state `S`,
        // read from /proc: not a guess at timing), 20 ms after: the wait it times covers them.
        let guard = crate::sync::lock(&m);
        let (tx, rx) = std::sync::mpsc::channel();
        let taker = {
            let m = m.clone();
            std::thread::spawn(move || {
                SEQ.with(|s| s.set(EVERY - 1));
                drain();
                tx.send(crate::sys::process::tid()).unwrap();
                drop(take(&m));
                drain()
            })
        };
        let tid = rx.recv().unwrap();
        while !crate::sys::procfs::thread_asleep(tid) {
            std::thread::yield_now();
        }
        let asleep = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let released = asleep.elapsed();
        drop(guard);
        let t = taker.join().unwrap();
        assert_eq!((t.taken, t.contended, t.timed), (1, 1, 1), "{t:?}");
        assert!(t.waited_ns >= released.as_nanos() as u64, "{t:?} against {released:?}");
    }
}
