//! CPU affinity: which CPUs this process (and the threads it creates later) may run on.

use std::io;

/// The CPUs this thread may run on.
pub fn get() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain bits; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is valid for writes and its size is passed.
    super::cvt(unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) })?;
    // SAFETY: CPU_ISSET reads within the set for i < CPU_SETSIZE.
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .collect())
}

/// Restricts this thread (and children created afterwards) to `cpus`.
pub fn set(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: as in get().
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {c} is out of range"),
            ));
        }
        // SAFETY: c < CPU_SETSIZE, checked above.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: set is valid and its size is passed.
    super::cvt(unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) })?;
    Ok(())
}

/// This thread kept on some CPUs until the guard drops, then back on the ones it had.
pub struct Pinned(Vec<usize>);

impl Pinned {
    /// Moves this thread onto `cpus` for the guard's life.
    pub fn to(cpus: &[usize]) -> io::Result<Pinned> {
        let was = get()?;
        set(cpus)?;
        Ok(Pinned(was))
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = set(&self.0);
    }
}
