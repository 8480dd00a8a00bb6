//! Owned descriptors and plain read / write.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

/// Reads into `buf`; `Ok(0)` is end of stream.
pub fn read(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    super::socket_io();
    // SAFETY: buf is a valid writable region of buf.len() bytes for the whole call.
    super::cvt_size(unsafe { libc::read(fd.as_fd().as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) })
}

/// Writes from `buf`, returning how many bytes the kernel took. Never raises SIGPIPE.
pub fn write(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    super::socket_io();
    // SAFETY: buf is a valid readable region of buf.len() bytes for the whole call.
    super::cvt_size(unsafe {
        libc::send(
            fd.as_fd().as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_NOSIGNAL,
        )
    })
}

/// Writes what the socket takes now without blocking, even on a blocking socket
/// (MSG_DONTWAIT); a last word before closing. Never raises SIGPIPE.
pub fn try_write(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    super::socket_io();
    // SAFETY: buf is a valid readable region of buf.len() bytes for the whole call.
    super::cvt_size(unsafe {
        libc::send(
            fd.as_fd().as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
        )
    })
}

/// Sends from `buf[*sent..]` what the socket takes now (MSG_DONTWAIT, even on a blocking
/// socket), moving `sent` on; returns the bytes sent. Stops at the first would-block or error
/// (whoever writes next sees it).
pub fn send_now(fd: impl AsFd, buf: &[u8], sent: &mut usize) -> usize {
    let start = *sent;
    while *sent < buf.len() {
        match try_write(fd.as_fd(), &buf[*sent..]) {
            Ok(n) => *sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    *sent - start
}

/// Switches `O_NONBLOCK` on or off.
pub fn set_nonblocking(fd: impl AsFd, on: bool) -> io::Result<()> {
    // SAFETY: fcntl with F_GETFL / F_SETFL only reads and writes the descriptor's flags.
    let flags = super::cvt(unsafe { libc::fcntl(fd.as_fd().as_raw_fd(), libc::F_GETFL) })?;
    let flags = if on {
        flags | libc::O_NONBLOCK
    } else {
        flags & !libc::O_NONBLOCK
    };
    // SAFETY: as above.
    super::cvt(unsafe { libc::fcntl(fd.as_fd().as_raw_fd(), libc::F_SETFL, flags) })?;
    Ok(())
}

/// Opens `/dev/null`: the spare descriptor an accept loop gives up to drain a connection on EMFILE.
pub fn open_spare() -> io::Result<OwnedFd> {
    // SAFETY: the path is a NUL-terminated literal; the returned fd is owned by us alone.
    let fd = super::cvt(unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?;
    // SAFETY: fd was just returned by open and is not owned elsewhere.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Makes `fd` refer to `/dev/null` in this process: whatever it referred to (a listening
/// socket a forked child inherited, say) is released here, while `fd` stays a valid descriptor
/// its owner may keep using and close. dup2 replaces it atomically.
pub fn replace_with_null(fd: &OwnedFd) -> io::Result<()> {
    let null = open_spare()?;
    // SAFETY: both descriptors are open and owned (borrowed for the call); dup2 makes
    // the number of fd a copy of null, which leaves fd owned by its OwnedFd and open.
    super::cvt(unsafe { libc::dup2(null.as_raw_fd(), fd.as_fd().as_raw_fd()) })?;
    Ok(())
}

/// Makes `dst` refer to what `src` refers to (dup3, close-on-exec kept): a forked process that
/// serves through a descriptor its code already holds (`dst`, a listener) takes another socket
/// (`src`) in its place. `dst` stays owned by its OwnedFd.
pub fn dup_onto(src: &OwnedFd, dst: &OwnedFd) -> io::Result<()> {
    // SAFETY: both descriptors are open and owned (borrowed for the call) and differ (dup3
    // refuses equal ones); dup3 closes what the number of dst referred to and makes it a copy
    // of src, leaving both owned and open.
    super::cvt(unsafe { libc::dup3(src.as_raw_fd(), dst.as_raw_fd(), libc::O_CLOEXEC) })?;
    Ok(())
}

/// Takes an exclusive advisory lock on an open file, waiting for it (`flock(LOCK_EX)`): the
/// lock goes with the descriptor, so a process that dies however it ends releases it.
pub fn lock_exclusive(fd: impl AsFd) -> io::Result<()> {
    loop {
        // SAFETY: flock takes a descriptor (borrowed, so open for the call) and plain flags.
        match super::cvt(unsafe { libc::flock(fd.as_fd().as_raw_fd(), libc::LOCK_EX) }) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r.map(drop),
        }
    }
}

/// Takes an exclusive advisory lock on an open file without waiting (`flock(LOCK_EX |
/// LOCK_NB)`): `Ok(false)` when another open file description holds it. The lock goes with the
/// descriptor: closed, or its process gone however it ended, the lock is released.
pub fn try_lock_exclusive(fd: impl AsFd) -> io::Result<bool> {
    // SAFETY: flock takes a descriptor (borrowed, so open for the call) and plain flags.
    match super::cvt(unsafe { libc::flock(fd.as_fd().as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(all(test, debug_assertions))]
mod tests {
    #[test]
    #[should_panic(expected = "socket I/O on a thread that does none")]
    fn a_thread_that_does_no_socket_io_panics_at_a_write_in_debug_builds() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        super::super::forbid_socket_io();
        let _ = super::write(&a, b"x");
    }
}
