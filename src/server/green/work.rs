//! A request's work on a green thread: `cpu:` in slices (the threads in line go first between
//! them) and `sleep:` as a blocking call its carrier hands its processor off for.

use std::time::Duration;

use super::sched;
use super::thread::{Resume, Suspend};
use crate::server::work;
use crate::sys;

/// Does a drawn request's work: on a green thread, `cpu` in slices (the threads in line go
/// first between them, and it resumes on the same carrier) and `wait` as a blocking call its
/// carrier hands its processor off for; elsewhere as any thread does. Returns what was drawn.
pub(crate) fn perform(cpu: Duration, wait: Duration) -> Duration {
    let Some(slice) = sched::slice() else {
        return work::perform(cpu, wait);
    };
    let mut left = cpu;
    while !left.is_zero() {
        let part = slice.min(left);
        work::spin(part);
        left -= part;
        if !left.is_zero() {
            let _ = sys::green::suspend::<Resume, Suspend>(Suspend::Slice);
        }
    }
    if !wait.is_zero() {
        sched::blocking(|| std::thread::sleep(wait));
    }
    cpu + wait
}
