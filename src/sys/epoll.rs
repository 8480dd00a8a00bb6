//! epoll: one selector, the four calls of its API, and the event buffer.
//!
//! A registration carries a `u64` token chosen by the caller (models use the fd number).
//! Level-triggered by default; add [`ET`] for edge-triggered, [`ONESHOT`] to disarm after one
//! event (re-arm with [`Epoll::modify`]), [`EXCLUSIVE`] (add only) to wake one waiter of many.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use super::cvt;

pub const IN: u32 = libc::EPOLLIN as u32;
pub const OUT: u32 = libc::EPOLLOUT as u32;
pub const ERR: u32 = libc::EPOLLERR as u32;
pub const HUP: u32 = libc::EPOLLHUP as u32;
pub const RDHUP: u32 = libc::EPOLLRDHUP as u32;
pub const ET: u32 = libc::EPOLLET as u32;
pub const ONESHOT: u32 = libc::EPOLLONESHOT as u32;
pub const EXCLUSIVE: u32 = libc::EPOLLEXCLUSIVE as u32;

/// An epoll instance.
pub struct Epoll {
    fd: OwnedFd,
}

/// The buffer `epoll_wait` fills.
pub struct Events {
    buf: Vec<libc::epoll_event>,
    len: usize,
}

/// An empty buffer (a placeholder; allocates nothing).
impl Default for Events {
    fn default() -> Self {
        Events {
            buf: Vec::new(),
            len: 0,
        }
    }
}

impl Events {
    pub fn with_capacity(n: usize) -> Self {
        Events {
            buf: vec![libc::epoll_event { events: 0, u64: 0 }; n.max(1)],
            len: 0,
        }
    }
    /// The events of the last wait as `(token, flags)`.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.buf[..self.len].iter().map(|e| (e.u64, e.events))
    }
    pub fn len(&self) -> usize {
        self.len
    }
}

impl Epoll {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain flag argument.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: fd was just created and is owned by nobody else.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn ctl(&self, op: libc::c_int, fd: impl AsFd, token: u64, flags: u32) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: flags,
            u64: token,
        };
        // SAFETY: ev is valid for the call.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd.as_fd().as_raw_fd(), &mut ev) })?;
        Ok(())
    }

    pub fn add(&self, fd: impl AsFd, token: u64, flags: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, flags)
    }

    pub fn modify(&self, fd: impl AsFd, token: u64, flags: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, flags)
    }

    /// Arms `fd` for one event (`flags` with [`ONESHOT`]): modifies its registration, or adds
    /// it where it has none. By number: a green thread parks on a descriptor its own stack
    /// owns, and the scheduler arms it once the thread has suspended (a closed or foreign
    /// number fails with EBADF, or arms a registration of this instance only).
    pub fn arm_raw(&self, fd: std::os::fd::RawFd, token: u64, flags: u32) -> io::Result<()> {
        let ctl = |op| {
            let mut ev = libc::epoll_event {
                events: flags,
                u64: token,
            };
            // SAFETY: ev is valid for the call; epoll_ctl reads a descriptor number only.
            cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) })
        };
        match ctl(libc::EPOLL_CTL_MOD) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => ctl(libc::EPOLL_CTL_ADD).map(|_| ()),
            r => r.map(|_| ()),
        }
    }

    pub fn delete(&self, fd: impl AsFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Waits up to `timeout` with nanosecond precision (epoll_pwait2, Linux 5.11+), falling
    /// back to millisecond epoll_wait (rounded up) where the kernel lacks it. EINTR: 0 events.
    pub fn wait_precise(&self, events: &mut Events, timeout: std::time::Duration) -> io::Result<usize> {
        use std::sync::atomic::{AtomicBool, Ordering};
        static NO_PWAIT2: AtomicBool = AtomicBool::new(false);
        if !NO_PWAIT2.load(Ordering::Relaxed) {
            let ts = libc::timespec {
                tv_sec: timeout.as_secs() as libc::time_t,
                tv_nsec: timeout.subsec_nanos() as libc::c_long,
            };
            // SAFETY: buf has room for buf.len() events; ts is valid; a null sigmask is allowed.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    self.fd.as_raw_fd(),
                    events.buf.as_mut_ptr(),
                    events.buf.len() as libc::c_int,
                    &ts as *const libc::timespec,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                )
            };
            match cvt(r as libc::c_int) {
                Ok(n) => {
                    events.len = n as usize;
                    return Ok(events.len);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    events.len = 0;
                    return Ok(0);
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => NO_PWAIT2.store(true, Ordering::Relaxed),
                Err(e) => return Err(e),
            }
        }
        let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
        self.wait(events, ms)
    }

    /// Waits up to `timeout_ms` (-1: forever). EINTR is reported as zero events.
    pub fn wait(&self, events: &mut Events, timeout_ms: i32) -> io::Result<usize> {
        // SAFETY: buf has room for buf.len() events.
        let r = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                events.buf.as_mut_ptr(),
                events.buf.len() as libc::c_int,
                timeout_ms,
            )
        };
        match cvt(r) {
            Ok(n) => events.len = n as usize,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => events.len = 0,
            Err(e) => return Err(e),
        }
        Ok(events.len)
    }
}

impl AsRawFd for Epoll {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}

impl AsFd for Epoll {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
