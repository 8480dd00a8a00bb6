//! CPU-time clocks: what the calling thread has run, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`),
//! rather than the 10 ms ticks of /proc or the process-wide totals of getrusage.

use std::time::Duration;

/// CPU time (user + system) the calling thread has used so far.
pub fn thread_cpu() -> Duration {
    // SAFETY: timespec is plain data; zeroed is valid.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: ts is valid for writes; the clock id is a constant this kernel knows (2.6.12+).
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
