//! epoll: descriptors registered once in the kernel; a wait returns only the ready ones, so a
//! wake-up costs O(ready). Level- or edge-triggered ([`Trigger`]), chosen when it is made.

use std::io;
use std::os::fd::BorrowedFd;
use std::time::Duration;

use crate::server::drivers::poller::{Interest, Poller};
use crate::server::Trigger;
use crate::server::{io_err, Error};
use crate::sys::epoll::{self as sys_epoll, Events, ET, EXCLUSIVE, IN, OUT, RDHUP};

/// The epoll backend.
pub struct Epoll {
    ep: sys_epoll::Epoll,
    events: Events,
    trigger: Trigger,
}

impl Epoll {
    /// An epoll instance reporting up to 1,024 events per wait.
    pub fn new(trigger: Trigger) -> Result<Epoll, Error> {
        Ok(Epoll {
            ep: sys_epoll::Epoll::new().map_err(io_err("epoll_create"))?,
            events: Events::with_capacity(1024),
            trigger,
        })
    }

    /// A level-triggered instance (the epoll architectures).
    pub fn level() -> Result<Epoll, Error> {
        Epoll::new(Trigger::Level)
    }

    fn flags(&self, interest: Interest) -> u32 {
        let mut f = if interest.read { IN } else { 0 } | if interest.write { OUT } else { 0 };
        if self.trigger == Trigger::Edge {
            f |= ET | if interest.read { RDHUP } else { 0 };
        }
        f
    }

    /// Watches a listener shared with other processes with EPOLLEXCLUSIVE: a new connection
    /// wakes one of the waiters, not all of them.
    pub fn register_exclusive(&mut self, fd: BorrowedFd<'_>, token: u64) -> io::Result<()> {
        self.ep.add(fd, token, IN | EXCLUSIVE)
    }
}

impl Poller for Epoll {
    fn register(&mut self, fd: BorrowedFd<'_>, token: u64, interest: Interest) -> io::Result<()> {
        self.ep.add(fd, token, self.flags(interest))
    }

    fn modify(&mut self, fd: BorrowedFd<'_>, token: u64, interest: Interest) -> io::Result<()> {
        self.ep.modify(fd, token, self.flags(interest))
    }

    fn deregister(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        self.ep.delete(fd)
    }

    fn closing(&mut self, _fd: BorrowedFd<'_>) {}

    fn wait(&mut self, ready: &mut Vec<u64>, timeout: Duration) -> io::Result<usize> {
        let n = self.ep.wait_precise(&mut self.events, timeout)?;
        ready.clear();
        ready.extend(self.events.iter().map(|(token, _)| token));
        Ok(n)
    }

    fn edge(&self) -> bool {
        self.trigger == Trigger::Edge
    }
}
