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

/// A descriptor set; copyable, because select() overwrites its arguments. It remembers the
/// highest descriptor inserted, so [`select`] computes `nfds` itself and never lets the kernel
/// look past the set.
#[derive(Clone, Copy)]
pub struct FdSet {
    set: libc::fd_set,
    /// Highest descriptor inserted plus one (0: empty); always <= FD_SETSIZE.
    end: usize,
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
        FdSet { set, end: 0 }
    }

    /// Adds `fd`; returns `false` (and changes nothing) when `fd` does not fit.
    pub fn insert(&mut self, fd: RawFd) -> bool {
        if fd < 0 || fd as usize >= FD_SETSIZE {
            return false;
        }
        // SAFETY: 0 <= fd < FD_SETSIZE, checked above.
        unsafe { libc::FD_SET(fd, &mut self.set) };
        self.end = self.end.max(fd as usize + 1);
        true
    }

    /// The highest descriptor inserted plus one: the `nfds` [`select`] passes for this set.
    #[cfg(test)]
    pub fn end(&self) -> usize {
        self.end
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
/// ones). EINTR: 0.
pub fn select(read: &mut FdSet, write: &mut FdSet, timeout: Duration) -> io::Result<usize> {
    let mut tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // Only descriptors below FD_SETSIZE can be inserted, so nfds <= FD_SETSIZE.
    let nfds = read.end.max(write.end) as libc::c_int;
    // SAFETY: the sets and tv are valid for the call, and the kernel reads and writes only the
    // first nfds <= FD_SETSIZE bits of each set (see above).
    let r = unsafe { libc::select(nfds, &mut read.set, &mut write.set, std::ptr::null_mut(), &mut tv) };
    match super::cvt(r) {
        Ok(n) => Ok(n as usize),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod sys_select {
    use std::os::fd::RawFd;
    use std::time::Duration;

    use crate::sys::select::*;

    #[test]
    fn a_set_knows_its_end_and_refuses_past_fd_setsize() {
        let mut s = FdSet::new();
        assert_eq!(s.end(), 0);
        assert!(s.insert(3));
        assert!(s.insert(FD_SETSIZE as RawFd - 1));
        assert_eq!(s.end(), FD_SETSIZE);
        assert!(!s.insert(FD_SETSIZE as RawFd));
        assert!(!s.insert(-1));
        assert_eq!(s.end(), FD_SETSIZE, "a refused descriptor does not move the end");
        assert!(s.contains(3) && !s.contains(4) && !s.contains(FD_SETSIZE as RawFd));
        // select with empty sets computes nfds = 0 and just waits.
        let (mut r, mut w) = (FdSet::new(), FdSet::new());
        assert_eq!(select(&mut r, &mut w, Duration::from_millis(1)).unwrap(), 0);
    }
}
