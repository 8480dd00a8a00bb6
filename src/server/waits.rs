//! How a connection served in blocking style waits: in the kernel on a blocking socket
//! ([`Kernel`], the blocking models), or parked at a green thread's netpoller
//! (`server::green`'s `Parking`). The connection's code (`blocking::serve_waiting`) is the same
//! either way.

use std::io;
use std::os::fd::OwnedFd;

use crate::sys;

/// The waits of a connection served in blocking style.
pub trait Waits {
    /// The wait of a read and of a write from now on, until set again.
    fn set_timeouts(&self, fd: &OwnedFd, t: std::time::Duration) -> io::Result<()>;
    /// The wait of a read from now on.
    fn set_read_timeout(&self, fd: &OwnedFd, t: std::time::Duration) -> io::Result<()>;
    /// Reads what arrived, waiting up to the read timeout (then `WouldBlock`).
    fn read(&self, fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes what the socket takes, waiting up to the write timeout (then `WouldBlock`).
    fn write(&self, fd: &OwnedFd, data: &[u8]) -> io::Result<usize>;
    /// Waits up to `wait` for input (`paused`: only for an error or a hang-up): whether
    /// anything came.
    fn poll(&self, fd: &OwnedFd, paused: bool, wait: std::time::Duration) -> io::Result<bool>;
    /// The connection has gone idle: what its waiting holds and does not use goes back.
    fn shed(&self) {}
}

/// Waiting in the kernel: blocking sockets with SO_RCVTIMEO / SO_SNDTIMEO, and ppoll.
pub struct Kernel;

impl Waits for Kernel {
    fn set_timeouts(&self, fd: &OwnedFd, t: std::time::Duration) -> io::Result<()> {
        sys::socket::set_timeouts(fd, t)
    }
    fn set_read_timeout(&self, fd: &OwnedFd, t: std::time::Duration) -> io::Result<()> {
        sys::socket::set_read_timeout(fd, t)
    }
    fn read(&self, fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
        sys::fd::read(fd, buf)
    }
    fn write(&self, fd: &OwnedFd, data: &[u8]) -> io::Result<usize> {
        sys::fd::write(fd, data)
    }
    fn poll(&self, fd: &OwnedFd, paused: bool, wait: std::time::Duration) -> io::Result<bool> {
        let events = if paused { 0 } else { sys::poll::IN };
        let mut p = [sys::poll::entry(std::os::fd::AsRawFd::as_raw_fd(fd), events)];
        sys::poll::ppoll(&mut p, wait).map(|n| n > 0)
    }
}
