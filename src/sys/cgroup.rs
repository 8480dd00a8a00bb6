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

#[cfg(test)]
mod sys_cpu_time {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use crate::sys::cgroup::{self, CpuGroup};
    use crate::sys::host::Fact;
    use crate::sys::process::{pid, process_cpu_time, thread_cpu_time};
    use crate::testing::{host_fact, skip};

    /// A shell that waits for a line on stdin, then spins `loops` times and exits.
    fn spinner(loops: u32) -> std::process::Child {
        Command::new("sh")
            .args([
                "-c",
                &format!("read go; i=0; while [ $i -lt {loops} ]; do i=$((i+1)); done"),
            ])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_process_clock_counts_every_thread_with_sub_tick_resolution_and_an_unknown_pid_is_an_error() {
        let before = process_cpu_time(pid()).unwrap();
        // Another thread's CPU shows in the process's clock, exited or not.
        let spent = std::thread::spawn(|| {
            let t0 = thread_cpu_time();
            while thread_cpu_time() - t0 < Duration::from_millis(30) {}
            thread_cpu_time() - t0
        })
        .join()
        .unwrap();
        let after = process_cpu_time(pid()).unwrap();
        assert!(after - before >= spent, "{:?} < {spent:?}", after - before);
        // Two readings apart by far less than a clock tick (10 ms) differ.
        let a = process_cpu_time(pid()).unwrap();
        let t0 = thread_cpu_time();
        while thread_cpu_time() - t0 < Duration::from_micros(200) {}
        let b = process_cpu_time(pid()).unwrap();
        assert!(b > a && b - a < Duration::from_millis(10), "{a:?} {b:?}");
        assert!(process_cpu_time(i32::MAX - 1).is_err());
    }

    #[test]
    fn steal_and_total_come_from_proc_stat_and_grow() {
        let (s0, t0) = crate::sys::procfs::steal_and_total().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let (s1, t1) = crate::sys::procfs::steal_and_total().unwrap();
        assert!(t1 > t0 && s1 >= s0 && s1 - s0 <= t1 - t0, "{s0} {t0} {s1} {t1}");
    }

    #[test]
    fn a_cpu_group_counts_a_child_that_has_exited_and_is_removed_when_dropped() {
        if !host_fact(Fact::CgroupCpuacct).present {
            // The branch without: a clear error, which the bench turns into per-process clocks.
            let e = CpuGroup::create().unwrap_err();
            assert!(!e.to_string().is_empty());
            return;
        }
        let group = CpuGroup::create().unwrap();
        let dir = group.path().to_path_buf();
        let mut child = spinner(300_000);
        group.add(child.id() as i32).unwrap();
        let start = Instant::now();
        let before = group.usage().unwrap();
        writeln!(child.stdin.take().unwrap(), "go").unwrap();
        assert!(child.wait().unwrap().success());
        let wall = start.elapsed();
        let used = group.usage().unwrap() - before;
        // The child spun on one CPU for (nearly) all of that time; it has exited and been
        // reaped, and the group still has its time.
        assert!(
            used >= Duration::from_millis(50) && used <= wall + Duration::from_millis(5),
            "{used:?} in {wall:?}"
        );
        drop(group);
        assert!(!dir.exists(), "{} is left", dir.display());
    }

    /// The kernel's current wake-up latency request, from /dev/cpu_dma_latency.
    fn dma_latency() -> i32 {
        let mut b = [0u8; 4];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/cpu_dma_latency").unwrap(), &mut b).unwrap();
        i32::from_ne_bytes(b)
    }

    /// Where the CPUs have a polling idle state, the hold is taken and released; where they
    /// have none (a cpuidle driver 'none'), the typed error says so and nothing is asked.
    #[test]
    fn polling_idle_is_held_while_the_value_lives_and_released_with_it() {
        if !host_fact(Fact::PollingIdle).present {
            let e = crate::sys::cpuidle::PollingIdle::hold().unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::Unsupported, "{e}");
            assert!(e.to_string().contains("no polling idle state"), "{e}");
            return;
        }
        if let Err(e) = std::fs::OpenOptions::new().write(true).open("/dev/cpu_dma_latency") {
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                return skip("holding /dev/cpu_dma_latency needs root");
            }
        }
        let before = dma_latency();
        if before == 0 {
            return skip("another process holds /dev/cpu_dma_latency at 0: this test cannot see its own request");
        }
        let held = crate::sys::cpuidle::PollingIdle::hold().unwrap();
        assert_eq!(dma_latency(), 0, "idle CPUs are asked to poll");
        drop(held);
        assert_eq!(dma_latency(), before, "the request ends with the value");
    }

    #[test]
    fn groups_left_by_a_bench_that_died_are_removed_and_live_ones_are_not() {
        if !host_fact(Fact::CgroupCpuacct).present {
            // The branch without: nothing to remove, and nothing fails.
            assert_eq!(cgroup::remove_stale(), 0);
            return;
        }
        let live = CpuGroup::create().unwrap();
        // A group named after a process that no longer runs.
        let mut gone = Command::new("true").spawn().unwrap();
        let dead = gone.id();
        gone.wait().unwrap();
        let stale = live.path().with_file_name(format!("muxlab.{dead}.0"));
        std::fs::create_dir(&stale).unwrap();
        assert!(cgroup::remove_stale() >= 1);
        assert!(!stale.exists());
        assert!(live.path().exists(), "a live bench's group was removed");
    }
}
