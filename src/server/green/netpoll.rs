//! The netpoller: one epoll instance where green threads wait for their sockets, and the
//! one timer heap (`crate::timer`) for how long each waits.
//!
//! A thread parks once it has suspended: the scheduler files it by its id, arms its timer,
//! then arms its descriptor for one event (`EPOLLONESHOT`, the id as the token). Whichever
//! comes first, the event or the timer, takes it out and makes it runnable with what woke it;
//! the other finds nothing (the token and the timer carry the park's generation: a stale one
//! is dropped). Any carrier may poll: one
//! without a processor blocks here (and an eventfd wakes it when there is work for it), one
//! with a processor looks without waiting between its threads.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::thread::{Resume, G};
use crate::sync::lock;
use crate::sys;
use crate::timer::Timers;

/// The token of the waker's eventfd (threads' ids start at 1, so no park's token is 0).
const WAKER: u64 = 0;

/// A park's token: the thread's id and the park's generation (its low bits), so an event
/// armed for an earlier park of the same thread is told apart and dropped.
const GENERATION_BITS: u32 = 20;

fn token(id: u64, generation: u64) -> u64 {
    (id << GENERATION_BITS) | (generation & ((1 << GENERATION_BITS) - 1))
}

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

impl Parked {
    /// Takes thread `id` out if its park is `generation`'s.
    fn take(&mut self, id: u64, generation: u64, why: Resume) -> Option<G> {
        let live = self
            .threads
            .get(&id)
            .is_some_and(|(_, g)| *g & ((1 << GENERATION_BITS) - 1) == generation);
        if !live {
            return None;
        }
        self.threads.remove(&id).map(|(mut g, _)| {
            g.resume = why;
            g
        })
    }
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
    /// `until` passes; a negative `fd`: until `until` only. The descriptor is armed under the
    /// lock the wake-ups take it out under, so no wake-up can come between its filing and its
    /// arming. One that cannot be armed is given back at once (its next call reports why).
    pub(super) fn park(&self, g: G, fd: RawFd, events: u32, until: Option<Instant>) -> Option<G> {
        let id = g.id;
        let mut p = lock(&self.parked);
        p.generation += 1;
        let generation = p.generation;
        if let Some(at) = until {
            p.timers.arm(at, (id, generation & ((1 << GENERATION_BITS) - 1)));
        }
        p.threads.insert(id, (g, generation));
        let sooner = until.is_some_and(|at| p.blocked_until.is_some_and(|b| at < b));
        let armed = fd < 0
            || self
                .epoll
                .arm_raw(fd, token(id, generation), events | sys::epoll::ONESHOT)
                .is_ok();
        let back = (!armed).then(|| {
            p.threads.remove(&id).map(|(mut g, _)| {
                g.resume = Resume::Ready;
                g
            })
        });
        drop(p);
        if sooner {
            let _ = self.waker.notify();
        }
        back.flatten()
    }

    /// Blocks up to `cap`, or until the earliest deadline, for events; the threads woken go to
    /// `woken`. The one carrier without a processor that polls calls this.
    pub(super) fn block(&self, cap: Duration, events: &mut sys::epoll::Events, woken: &mut Woken) {
        let wait = {
            let mut p = lock(&self.parked);
            let wait = p.timers.timeout(Instant::now(), cap);
            p.blocked_until = Some(Instant::now() + wait);
            wait
        };
        self.poll(wait, events, woken);
    }

    /// A look without waiting, between threads.
    pub(super) fn look(&self, events: &mut sys::epoll::Events, woken: &mut Woken) {
        self.poll(Duration::ZERO, events, woken);
    }

    /// Waits up to `wait` (zero: a look) for events and deadlines; the threads they wake go
    /// to `woken`. A look leaves the waker's count for the carrier blocked here.
    fn poll(&self, wait: Duration, events: &mut sys::epoll::Events, woken: &mut Woken) {
        let n = self.epoll.wait_precise(events, wait).unwrap_or(0);
        let mut p = lock(&self.parked);
        if !wait.is_zero() {
            p.blocked_until = None;
        }
        for (t, _) in events.iter().take(n) {
            if t == WAKER {
                if !wait.is_zero() {
                    let _ = self.waker.drain();
                }
                continue;
            }
            if let Some(g) = p.take(t >> GENERATION_BITS, t & ((1 << GENERATION_BITS) - 1), Resume::Ready) {
                woken.push(g);
            }
        }
        let now = Instant::now();
        while let Some((_, (id, generation))) = p.timers.pop_due(now) {
            if let Some(g) = p.take(id, generation, Resume::TimedOut) {
                woken.push(g);
            }
        }
        if p.timers.len() > 4 * p.threads.len() + 64 {
            // Mostly stale entries (threads woken by events before their deadlines): drop them.
            let live: std::collections::HashSet<(u64, u64)> = p
                .threads
                .iter()
                .map(|(id, (_, gen))| (*id, gen & ((1 << GENERATION_BITS) - 1)))
                .collect();
            p.timers.retain(|_, key| live.contains(&key));
        }
    }

    /// Wakes a carrier blocked in [`block`](Self::block).
    pub(super) fn wake(&self) {
        let _ = self.waker.notify();
    }
}
