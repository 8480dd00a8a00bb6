//! RLIMIT_NOFILE: how many descriptors this process may open.

use std::io;

/// `(soft, hard)` limits on open descriptors.
pub fn nofile() -> io::Result<(u64, u64)> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is valid for writes.
    super::cvt(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) })?;
    Ok((r.rlim_cur, r.rlim_max))
}

/// Sets the soft limit (at most the hard limit).
pub fn set_nofile(soft: u64) -> io::Result<()> {
    let (_, hard) = nofile()?;
    let r = libc::rlimit {
        rlim_cur: soft.min(hard),
        rlim_max: hard,
    };
    // SAFETY: r is valid for reads.
    super::cvt(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) })?;
    Ok(())
}
