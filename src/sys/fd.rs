//! Owned descriptors and plain read / write.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Reads into `buf`; `Ok(0)` is end of stream.
pub fn read(fd: &impl AsRawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: buf is a valid writable region of buf.len() bytes for the whole call.
    super::cvt_size(unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) })
}

/// Writes from `buf`, returning how many bytes the kernel took. Never raises SIGPIPE.
pub fn write(fd: &impl AsRawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is a valid readable region of buf.len() bytes for the whole call.
    super::cvt_size(unsafe { libc::send(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) })
}

/// Switches `O_NONBLOCK` on or off.
pub fn set_nonblocking(fd: &impl AsRawFd, on: bool) -> io::Result<()> {
    // SAFETY: fcntl with F_GETFL / F_SETFL only reads and writes the descriptor's flags.
    let flags = super::cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) })?;
    let flags = if on {
        flags | libc::O_NONBLOCK
    } else {
        flags & !libc::O_NONBLOCK
    };
    // SAFETY: as above.
    super::cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags) })?;
    Ok(())
}

/// Opens `/dev/null`: the spare descriptor an accept loop gives up to drain a connection on EMFILE.
pub fn open_spare() -> io::Result<OwnedFd> {
    // SAFETY: the path is a NUL-terminated literal; the returned fd is owned by us alone.
    let fd = super::cvt(unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?;
    // SAFETY: fd was just returned by open and is not owned elsewhere.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Closes a descriptor this process inherited but does not own as an `OwnedFd` (a forked child
/// closing the parent's listener). The caller must never use `fd` again.
pub fn close_inherited(fd: RawFd) {
    // SAFETY: closing an int has no memory effects; the caller promises not to reuse it.
    unsafe { libc::close(fd) };
    super::count();
}
