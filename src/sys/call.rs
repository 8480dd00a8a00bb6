//! Each system call counted: a per-thread count every wrapper adds to ([`take_syscalls`]),
//! the conversion of a `-1` return into `errno` that counts it (`cvt`), and the thread's
//! promise to do no socket I/O (io-threads' executor).

use std::cell::Cell;
use std::io;

thread_local! {
    static SYSCALLS: Cell<u64> = const { Cell::new(0) };
}

thread_local! {
    static NO_SOCKET_IO: Cell<bool> = const { Cell::new(false) };
}

/// This thread never reads or writes a socket from now on (io-threads' executor): `sys`'s
/// reads and writes assert it in debug builds.
#[inline(never)]
pub fn forbid_socket_io() {
    NO_SOCKET_IO.with(|c| c.set(true));
}

/// A read or write of a descriptor is about to happen on this thread.
#[cfg_attr(debug_assertions, inline(never))]
pub(super) fn socket_io() {
    debug_assert!(
        !NO_SOCKET_IO.with(Cell::get),
        "socket I/O on a thread that does none (io-threads' executor)"
    );
}

/// Returns the number of syscalls this thread issued through `sys` since the last call, and resets it.
#[inline(never)]
pub fn take_syscalls() -> u64 {
    SYSCALLS.with(|c| c.replace(0))
}

#[inline]
/// A new anonymous mapping of `len` bytes: zero-filled, page-aligned, readable and writable;
/// shared with children forked afterwards when `shared`. Nothing else refers to it: the caller
/// decides its life (munmap, or the process's).
pub(super) fn map_anonymous(len: usize, shared: bool) -> std::io::Result<*mut libc::c_void> {
    let share = if shared { libc::MAP_SHARED } else { libc::MAP_PRIVATE };
    // SAFETY: an anonymous mapping with no address hint touches no existing memory; the result
    // is checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            share | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    count();
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p)
}

/// Never inlined: a green thread (`server::green`) may be resumed on another OS thread after
/// it parks, and an inlined thread-local's address could be kept across the park by its caller.
#[inline(never)]
pub(super) fn count() {
    SYSCALLS.with(|c| c.set(c.get() + 1));
}

/// Counts one syscall and turns a `-1` return into the thread's `errno`.
#[inline]
pub(super) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    count();
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Same as [`cvt`] for calls returning `ssize_t`.
#[inline]
pub(super) fn cvt_size(ret: libc::ssize_t) -> io::Result<usize> {
    count();
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}
