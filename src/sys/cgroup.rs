//! A cgroup v1 `cpuacct` group made for one server and removed after it: the CPU time of every
//! process ever in it, forked children that have exited included, in nanoseconds. Where the
//! machine has no cgroup v1 cpuacct hierarchy, or this user may not make a group in it,
//! [`CpuGroup::create`] says so and the caller falls back to per-process CPU clocks.
//!
//! The group is made inside the caller's own cpuacct group and named `muxlab.PID.N`
//! (PID: the process that made it); nothing else in the hierarchy is touched.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// One group this process made.
#[derive(Debug)]
pub struct CpuGroup {
    dir: PathBuf,
    /// The group its processes came from (the maker's own), where any left in it go back.
    home: PathBuf,
}

/// Where the cpuacct hierarchy is mounted and the calling process's group in it.
fn own_group() -> io::Result<PathBuf> {
    let no = |why: &str| io::Error::new(io::ErrorKind::NotFound, why.to_string());
    let mounts = fs::read_to_string("/proc/self/mountinfo")?;
    // mountinfo: ID PARENT DEV ROOT MOUNTPOINT OPTIONS ... - FSTYPE SOURCE SUPEROPTIONS
    let mount = mounts
        .lines()
        .find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let mut r = right.split_whitespace();
            let (kind, _, options) = (r.next()?, r.next()?, r.next()?);
            (kind == "cgroup" && options.split(',').any(|o| o == "cpuacct"))
                .then(|| left.split_whitespace().nth(4).map(PathBuf::from))
                .flatten()
        })
        .ok_or_else(|| no("no cgroup v1 cpuacct hierarchy is mounted"))?;
    let own = fs::read_to_string("/proc/self/cgroup")?;
    let path = own
        .lines()
        .find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
            controllers.split(',').any(|c| c == "cpuacct").then(|| path.to_string())
        })
        .ok_or_else(|| no("this process is in no cpuacct group"))?;
    Ok(mount.join(path.trim_start_matches('/')))
}

impl CpuGroup {
    /// Makes a new, empty group.
    pub fn create() -> io::Result<CpuGroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let home = own_group()?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = home.join(format!("muxlab.{}.{n}", std::process::id()));
        fs::create_dir(&dir)?;
        Ok(CpuGroup { dir, home })
    }

    /// Moves process `pid` (all its threads) into the group; the children it forks afterwards
    /// start in it.
    pub fn add(&self, pid: i32) -> io::Result<()> {
        fs::write(self.dir.join("cgroup.procs"), pid.to_string())
    }

    /// CPU time of every process that has been in the group while it was there.
    pub fn usage(&self) -> io::Result<Duration> {
        let text = fs::read_to_string(self.dir.join("cpuacct.usage"))?;
        text.trim()
            .parse::<u64>()
            .map(Duration::from_nanos)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("cpuacct.usage: {e}")))
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for CpuGroup {
    /// Removes the group; processes still in it (there should be none) go back to the maker's.
    fn drop(&mut self) {
        if let Ok(procs) = fs::read_to_string(self.dir.join("cgroup.procs")) {
            for pid in procs.split_whitespace() {
                let _ = fs::write(self.home.join("cgroup.procs"), pid);
            }
        }
        let _ = fs::remove_dir(&self.dir);
    }
}

/// Removes empty groups named `muxlab.PID.N` whose maker no longer runs (a bench that was
/// killed before it could remove its own). Returns how many went.
pub fn remove_stale() -> usize {
    let Ok(home) = own_group() else { return 0 };
    let Ok(entries) = fs::read_dir(&home) else { return 0 };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(maker) = name
            .to_str()
            .and_then(|n| n.strip_prefix("muxlab."))
            .and_then(|r| r.split('.').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !super::procfs::is_running(maker) && fs::remove_dir(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}
