//! The bench owns its processes: a server or load generator it started and did not stop in
//! order (an error returned early, a panic, the matrix left half-way) is ended when dropped,
//! its whole tree with it; and a process is signalled only while it is still the one the
//! bench started (its start time unchanged: a reused pid is never touched).

use std::process::Child;

use crate::sys;

/// A helper process the bench started (the load generator of a cell): should the bench leave
/// it behind (an error, a panic), its whole tree is killed.
pub(in crate::bench) struct Owned(pub(in crate::bench) Child);

impl std::ops::Deref for Owned {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Owned {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            kill_all(&snapshot(self.0.id() as i32));
            let _ = self.0.wait();
        }
    }
}

/// A process tree, each process with its start time: what [`kill_all`] may signal later.
pub(super) fn snapshot(root: i32) -> Vec<(i32, u64)> {
    let tree = sys::procfs::tree(root);
    tree.into_iter()
        .filter_map(|p| sys::procfs::start_time(p).map(|t| (p, t)))
        .collect()
}

/// A snapshot less its root.
pub(super) fn descendants(tree: &[(i32, u64)], root: i32) -> Vec<(i32, u64)> {
    tree.iter().copied().filter(|&(p, _)| p != root).collect()
}

/// SIGKILL to every process of a [`snapshot`] still running, and still the same process (its
/// start time unchanged: a pid reused since by another process is never signalled); returns
/// the pids it killed.
pub(super) fn kill_all(procs: &[(i32, u64)]) -> Vec<i32> {
    let same = |&&(p, t): &&(i32, u64)| sys::procfs::is_running(p) && sys::procfs::start_time(p) == Some(t);
    let running: Vec<i32> = procs.iter().filter(same).map(|&(p, _)| p).collect();
    for p in &running {
        let _ = sys::process::kill(*p, sys::signal::SIGKILL);
    }
    running
}
