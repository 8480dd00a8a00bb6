//! CPU-time clocks: the calling thread's and a whole process's, with nanosecond resolution
//! (ticks are 10 ms here). Not counted as model syscalls: they measure work, they are not part
//! of a model's mechanism.

use std::io;

use super::cvt;

/// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID). Not counted as a model
/// syscall: it measures work, it is not part of a model's mechanism.
pub fn thread_cpu_time() -> std::time::Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is valid for writes.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time process `pid` has used, all its threads, live and exited, with nanosecond
/// resolution (its CPU-time clock, `clock_getcpuclockid`). Reaped children are not in it.
pub fn process_cpu_time(pid: i32) -> io::Result<std::time::Duration> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: clock is valid for writes; pid is a plain integer (an unknown one is an error).
    let rc = unsafe { libc::clock_getcpuclockid(pid, &mut clock) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is valid for writes; clock is a process CPU clock the kernel just named.
    cvt(unsafe { libc::clock_gettime(clock, &mut ts) })?;
    Ok(std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}
