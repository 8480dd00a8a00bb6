//! poll(): the kernel scans every descriptor of the array on every call.

use std::io;
use std::os::fd::RawFd;

pub use libc::pollfd as PollFd;

pub const IN: i16 = libc::POLLIN;
pub const OUT: i16 = libc::POLLOUT;

/// An entry asking for `events` on `fd`.
pub fn entry(fd: RawFd, events: i16) -> PollFd {
    PollFd { fd, events, revents: 0 }
}

/// Waits up to `timeout_ms`; returns how many entries have `revents` set (EINTR: 0).
pub fn poll(fds: &mut [PollFd], timeout_ms: i32) -> io::Result<usize> {
    // SAFETY: fds is a valid array of fds.len() pollfd structs.
    match super::cvt(unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) }) {
        Ok(n) => Ok(n as usize),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(e) => Err(e),
    }
}

/// Waits up to `timeout`, to the nanosecond (ppoll); returns how many entries have `revents`
/// set (EINTR: 0).
pub fn ppoll(fds: &mut [PollFd], timeout: std::time::Duration) -> io::Result<usize> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: fds is a valid array of fds.len() pollfd structs; ts is valid; a null sigmask
    // leaves the mask as it is.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    match super::cvt(r) {
        Ok(n) => Ok(n as usize),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(e) => Err(e),
    }
}
