//! select(): fixed-size bit sets of FD_SETSIZE (1024) descriptors.
//!
//! Setting a bit at or past FD_SETSIZE is out-of-bounds memory corruption in C; here
//! [`FdSet::insert`] refuses it and the model closes such connections instead.

use std::io;
use std::mem;
use std::os::fd::RawFd;
use std::time::Duration;

/// The most descriptors (and the highest fd + 1) select() can watch.
pub const FD_SETSIZE: usize = libc::FD_SETSIZE;

/// A descriptor set; copyable, because select() overwrites its arguments.
#[derive(Clone, Copy)]
pub struct FdSet {
    set: libc::fd_set,
}

impl Default for FdSet {
    fn default() -> Self {
        Self::new()
    }
}

impl FdSet {
    pub fn new() -> Self {
        // SAFETY: fd_set is plain bits; FD_ZERO initialises it.
        let mut set: libc::fd_set = unsafe { mem::zeroed() };
        // SAFETY: set is a valid fd_set.
        unsafe { libc::FD_ZERO(&mut set) };
        FdSet { set }
    }

    /// Adds `fd`; returns `false` (and changes nothing) when `fd` does not fit.
    pub fn insert(&mut self, fd: RawFd) -> bool {
        if fd < 0 || fd as usize >= FD_SETSIZE {
            return false;
        }
        // SAFETY: 0 <= fd < FD_SETSIZE, checked above.
        unsafe { libc::FD_SET(fd, &mut self.set) };
        true
    }

    pub fn contains(&self, fd: RawFd) -> bool {
        if fd < 0 || fd as usize >= FD_SETSIZE {
            return false;
        }
        // SAFETY: 0 <= fd < FD_SETSIZE, checked above.
        unsafe { libc::FD_ISSET(fd, &self.set) }
    }
}

/// Waits until a descriptor of `read` or `write` is ready (both are overwritten with the ready
/// ones); `nfds` is the highest descriptor plus one. EINTR: 0.
pub fn select(nfds: RawFd, read: &mut FdSet, write: &mut FdSet, timeout: Duration) -> io::Result<usize> {
    let mut tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: the sets and tv are valid for the call; nfds <= FD_SETSIZE because only
    // descriptors below FD_SETSIZE can be in the sets.
    let r = unsafe { libc::select(nfds, &mut read.set, &mut write.set, std::ptr::null_mut(), &mut tv) };
    match super::cvt(r) {
        Ok(n) => Ok(n as usize),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(e) => Err(e),
    }
}
