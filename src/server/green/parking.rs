//! A green thread's waits for its connection: the blocking connection code's
//! [`Waits`](crate::server::Waits), each a park at the netpoller. The socket is
//! non-blocking; a read or write that finds it not ready parks until it is or its timeout
//! passes (then `WouldBlock`, as a blocking socket's SO_RCVTIMEO gives). A wait inside a step
//! of the connection (the hook writing replies before a request's work) is a blocking call
//! instead: the thread does not move to another OS thread in the middle of the hook.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use super::thread::{park, Resume};
use crate::server::Waits;
use crate::sys;

/// One green thread's waits: its read and write timeouts, and its stack (what an idle
/// connection gives back).
pub struct Parking {
    read: Cell<Duration>,
    write: Cell<Duration>,
    stack: sys::stack::Bounds,
    /// The deepest this thread's stack went, seen when it sheds (pages given back are gone).
    deepest: Cell<usize>,
}

impl Parking {
    pub(super) fn new(stack: sys::stack::Bounds) -> Parking {
        Parking {
            read: Cell::new(Duration::from_secs(1)),
            write: Cell::new(Duration::from_secs(1)),
            stack,
            deepest: Cell::new(0),
        }
    }

    /// The deepest its stack went, in bytes.
    pub(super) fn deepest(&self) -> usize {
        self.deepest.get().max(sys::stack::touched(self.stack))
    }

    /// Waits until `fd` has `events`, at most `wait`: whether it came (or the descriptor failed).
    pub fn wait_for(&self, fd: &impl AsRawFd, events: u32, wait: Duration) -> bool {
        park(fd.as_raw_fd(), events, Some(Instant::now() + wait)) == Some(Resume::Ready)
    }

    /// Parks for `d`, on no descriptor.
    pub fn pause(&self, d: Duration) {
        park(-1, 0, Some(Instant::now() + d));
    }

    /// `op` until it does not find the socket unready, parking for `events` between tries
    /// for at most `wait` in all.
    fn until_ready(
        &self,
        fd: &OwnedFd,
        events: u32,
        wait: Duration,
        mut op: impl FnMut() -> io::Result<usize>,
    ) -> io::Result<usize> {
        let until = Instant::now() + wait;
        loop {
            match op() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if park(fd.as_raw_fd(), events, Some(until)) != Some(Resume::Ready) {
                        return Err(e);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return r,
            }
        }
    }
}

impl Waits for Parking {
    fn set_timeouts(&self, _fd: &OwnedFd, t: Duration) -> io::Result<()> {
        self.read.set(t);
        self.write.set(t);
        Ok(())
    }

    fn set_read_timeout(&self, _fd: &OwnedFd, t: Duration) -> io::Result<()> {
        self.read.set(t);
        Ok(())
    }

    fn read(&self, fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
        self.until_ready(fd, sys::epoll::IN, self.read.get(), || sys::fd::read(fd, buf))
    }

    fn write(&self, fd: &OwnedFd, data: &[u8]) -> io::Result<usize> {
        self.until_ready(fd, sys::epoll::OUT, self.write.get(), || sys::fd::write(fd, data))
    }

    fn poll(&self, fd: &OwnedFd, paused: bool, wait: Duration) -> io::Result<bool> {
        let events = if paused { 0 } else { sys::epoll::IN };
        Ok(self.wait_for(fd, events, wait))
    }

    /// The connection is idle: the stack's pages below the frames it waits in go back.
    fn shed(&self) {
        self.deepest.set(self.deepest());
        sys::stack::release_below_here(self.stack);
    }
}
