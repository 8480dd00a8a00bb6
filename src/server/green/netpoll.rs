//! The netpoller: one epoll instance where green threads wait for their sockets, and the
//! one timer heap (`crate::timer`) for how long each waits.
//!
//! A thread parks once it has suspended: the scheduler files it by its id, arms its timer,
//! then arms its descriptor for one event (`EPOLLONESHOT`, the id as the token). Whichever
//! comes first, the event or the timer, takes it out and makes it runnable with what woke it;
//! the other finds nothing (its generation is stale) and is dropped. Any carrier may poll: one
//! without a processor blocks here (and an eventfd wakes it when there is work for it), one
//! with a processor looks without waiting between its threads.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{Resume, G};
use crate::sync::lock;
use crate::sys;
use crate::timer::Timers;

/// The token of the waker's eventfd (threads' ids start at 1).
const WAKER: u64 = 0;

pub(super) struct Netpoll {
    epoll: sys::epoll::Epoll,
    waker: sys::eventfd::EventFd,
    parked: Mutex<Parked>,
}

/// The threads parked, each with the generation of its park (a stale timer or event names
/// an older one), and their deadlines.
#[derive(Default)]
struct Parked {
    threads: HashMap<u64, (G, u64)>,
    timers: Timers<(u64, u64)>,
    generation: u64,
    /// When a carrier blocked here means to wake (a park due sooner wakes it).
    blocked_until: Option<Instant>,
}

/// What one poll brought: the threads made runnable.
pub(super) type Woken = Vec<G>;

impl Netpoll {
    pub(super) fn new() -> std::io::Result<Netpoll> {
        let epoll = sys::epoll::Epoll::new()?;
        let waker = sys::eventfd::EventFd::new()?;
        epoll.add(&waker, WAKER, sys::epoll::IN)?;
        Ok(Netpoll {
            epoll,
            waker,
            parked: Mutex::new(Parked::default()),
        })
    }

    /// Parks `g` until `fd` has one of `events` (an error or a hang-up always wakes it) or
    /// `until` passes. A descriptor that cannot be armed wakes it at once (its next call
    /// reports the error).
    pub(super) fn park(&self, g: G, fd: RawFd, events: u32, until: Option<Instant>) -> Option<G> {
        let id = g.id;
        let wake_poller = {
            let mut p = lock(&self.parked);
            p.generation += 1;
            let generation = p.generation;
            if let Some(at) = until {
                p.timers.arm(at, (id, generation));
            }
            p.threads.insert(id, (g, generation));
            until.is_some_and(|at| p.blocked_until.is_some_and(|b| at < b))
        };
        if wake_poller {
            let _ = self.waker.notify();
        }
        let flags = events | sys::epoll::ONESHOT | sys::epoll::RDHUP;
        if self.epoll.arm_raw(fd, id, flags).is_err() {
            let mut p = lock(&self.parked);
            return p.threads.remove(&id).map(|(mut g, _)| {
                g.resume = Resume::Ready;
                g
            });
        }
        None
    }

    /// How long a carrier with nothing to run may block here: until the earliest deadline,
    /// at most `cap`.
    pub(super) fn timeout(&self, cap: Duration) -> Duration {
        lock(&self.parked).timers.timeout(Instant::now(), cap)
    }

    /// Waits up to `wait` (zero: a look) for events and deadlines; the threads they wake go
    /// to `woken`.
    pub(super) fn poll(&self, wait: Duration, events: &mut sys::epoll::Events, woken: &mut Woken) {
        if !wait.is_zero() {
            lock(&self.parked).blocked_until = Some(Instant::now() + wait);
        }
        let n = self.epoll.wait_precise(events, wait).unwrap_or(0);
        let mut p = lock(&self.parked);
        if !wait.is_zero() {
            p.blocked_until = None;
        }
        for (token, _) in events.iter().take(n) {
            if token == WAKER {
                let _ = self.waker.drain();
                continue;
            }
            if let Some((mut g, _)) = p.threads.remove(&token) {
                g.resume = Resume::Ready;
                woken.push(g);
            }
        }
        let now = Instant::now();
        while let Some((_, (id, generation))) = p.timers.pop_due(now) {
            if p.threads.get(&id).is_some_and(|(_, gen)| *gen == generation) {
                let (mut g, _) = p.threads.remove(&id).expect("found above");
                g.resume = Resume::TimedOut;
                woken.push(g);
            }
        }
        if p.timers.len() > 4 * p.threads.len() + 64 {
            // Mostly stale entries (threads woken by events before their deadlines): drop them.
            let live: std::collections::HashSet<(u64, u64)> =
                p.threads.iter().map(|(id, (_, gen))| (*id, *gen)).collect();
            p.timers.retain(|_, key| live.contains(&key));
        }
    }

    /// Wakes a carrier blocked in [`poll`](Self::poll).
    pub(super) fn wake(&self) {
        let _ = self.waker.notify();
    }
}
