//! A private network namespace for a run: settings each namespace keeps its own of (the port
//! range, `somaxconn`, ...) are raised inside it and vanish with it, whatever ends the run.

use std::io;

use super::cvt;

/// A private network namespace the calling thread entered, and the way back to the one it
/// left (the machine's settings of `net.*` that are not per namespace, `tcp_mem` say, can be
/// read and written only from there). `/sys` stays the machine's: `/sys/class/net/lo` inside is
/// still the machine's loopback.
pub struct Private {
    original: std::os::fd::OwnedFd,
}

/// Moves the calling thread (and the processes it starts from now on) into a new network
/// namespace with its loopback up. Root only. A multi-threaded process's other threads stay
/// where they were: call it from the thread that starts the run's processes.
pub fn enter_private() -> io::Result<Private> {
    let original = std::os::fd::OwnedFd::from(std::fs::File::open("/proc/thread-self/ns/net")?);
    // SAFETY: unshare takes plain flags and touches no memory of ours.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
    loopback_up()?;
    Ok(Private { original })
}

impl Private {
    /// Moves the calling thread back to the namespace it left (the namespace it made goes
    /// when nothing is in it any more).
    pub fn leave(&self) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: setns takes a descriptor (borrowed, open for the call) and plain flags.
        cvt(unsafe { libc::setns(self.original.as_raw_fd(), libc::CLONE_NEWNET) })?;
        Ok(())
    }
}

/// Brings `lo` up in the current namespace (a new namespace starts with it down).
fn loopback_up() -> io::Result<()> {
    // SAFETY: a plain datagram socket, owned below.
    let s = cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: s was just returned by socket and is not owned elsewhere.
    let s = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(s) };
    use std::os::fd::AsRawFd;
    // SAFETY: ifreq is plain data; zeroed is valid.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (i, b) in b"lo".iter().enumerate() {
        req.ifr_name[i] = *b as libc::c_char;
    }
    // SAFETY: req is a valid ifreq naming `lo`, read and written by the kernel for the call.
    cvt(unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) })?;
    // SAFETY: the flags member of the union was just filled by SIOCGIFFLAGS.
    unsafe { req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short };
    // SAFETY: as above; SIOCSIFFLAGS reads the name and the flags.
    cvt(unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS, &req) })?;
    Ok(())
}
