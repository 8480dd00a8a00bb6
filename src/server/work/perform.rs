//! Doing a drawn request's work on the calling thread: spinning its CPU time, then sleeping its
//! wait.

use std::time::Duration;

/// Does a drawn request's work on the calling thread: spins `cpu`, then sleeps `wait`; returns
/// what was drawn. (A green thread's is `green::perform`'s.)
pub(crate) fn perform(cpu: Duration, wait: Duration) -> Duration {
    spin(cpu);
    if !wait.is_zero() {
        std::thread::sleep(wait);
    }
    cpu + wait
}

/// Uses `d` of this thread's CPU time (a thread preempted meanwhile is not credited with time
/// another thread used).
pub(crate) fn spin(d: Duration) {
    if d.is_zero() {
        return;
    }
    let until = crate::sys::process::thread_cpu_time() + d;
    while crate::sys::process::thread_cpu_time() < until {
        std::hint::spin_loop();
    }
}
