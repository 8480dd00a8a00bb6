//! eventfd: a counter descriptor one thread writes to wake another's event loop.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::cvt;

pub struct EventFd {
    fd: OwnedFd,
}

impl EventFd {
    /// A non-blocking, close-on-exec eventfd starting at 0.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain integer arguments.
        let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
        // SAFETY: fd was just created and is owned by nobody else.
        Ok(EventFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Adds one to the counter, making the descriptor readable.
    pub fn notify(&self) -> io::Result<()> {
        let one: u64 = 1;
        // SAFETY: one is 8 readable bytes.
        super::cvt_size(unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) })?;
        Ok(())
    }

    /// Reads and resets the counter; `Ok(0)` when nothing was pending.
    pub fn drain(&self) -> io::Result<u64> {
        let mut v: u64 = 0;
        // SAFETY: v is 8 writable bytes.
        match super::cvt_size(unsafe { libc::read(self.fd.as_raw_fd(), (&mut v as *mut u64).cast(), 8) }) {
            Ok(_) => Ok(v),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(e),
        }
    }
}

impl AsRawFd for EventFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl std::os::fd::AsFd for EventFd {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
