//! /proc sampling: CPU time, threads and resident memory of a process and its children.

use std::fs;
use std::io;
use std::time::Duration;

/// One reading of a process (or, summed, of a tree): its CPU clock, /proc/PID/stat and status.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcSample {
    /// CPU time of the live processes, each with its threads live and exited, in nanoseconds
    /// (their CPU-time clocks).
    pub cpu: Duration,
    pub threads: u64,
    /// Resident set size in bytes.
    pub rss: u64,
    /// Proportional set size in bytes (/proc/PID/smaps_rollup: a page shared by N processes
    /// counts 1/N in each), read by [`sample_tree_all_threads`] only.
    pub pss: Option<u64>,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// CPU time of children already reaped (cutime + cstime, clock ticks): forked workers that
    /// exited.
    pub reaped_children: Duration,
    /// A fingerprint of the set of live thread ids, read by [`sample_tree_all_threads`] only:
    /// two equal fingerprints mean the same threads lived at both readings, so their context
    /// switches cover everything between.
    pub thread_set: Option<u64>,
    /// User and system CPU time of the live processes, in clock ticks (their threads' summed).
    pub user_ticks: u64,
    pub system_ticks: u64,
    /// The scheduler's view of every live thread (`/proc/PID/task/TID/schedstat`), summed: time
    /// on a CPU, time runnable but waiting for one (ns), and slices run; read by
    /// [`sample_tree_all_threads`] only (`None`: not read, or the kernel keeps no schedstats).
    pub sched: Option<Sched>,
}

/// What the scheduler says of a set of threads (schedstat), summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sched {
    pub run_ns: u64,
    pub wait_ns: u64,
    pub slices: u64,
}

impl ProcSample {
    /// All CPU time: the live processes' and that of reaped children.
    pub fn cpu(&self) -> Duration {
        self.cpu + self.reaped_children
    }
}

fn ticks() -> f64 {
    // SAFETY: sysconf takes a plain integer.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The numeric fields of /proc/PID/stat after the command name (which is in parentheses and
/// may hold spaces): index 0 is field 3 (state).
fn stat_fields(pid: i32) -> io::Result<Vec<u64>> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    Ok(rest.split_whitespace().map(|s| s.parse::<u64>().unwrap_or(0)).collect())
}

/// When process `pid` started, in clock ticks since boot (field 22 of /proc/PID/stat): with the
/// pid, it names one process, never a later one that got the same number.
pub fn start_time(pid: i32) -> Option<u64> {
    stat_fields(pid).ok()?.get(19).copied()
}

/// Threads of process `pid` (field 20 of /proc/PID/stat).
pub fn threads(pid: i32) -> Option<usize> {
    stat_fields(pid).ok()?.get(17).map(|&n| n as usize)
}

/// Reads one process.
pub fn sample(pid: i32) -> io::Result<ProcSample> {
    let f = stat_fields(pid)?;
    let num = |i: usize| f.get(i).copied().unwrap_or(0);
    // rest[0] is field 3 (state): utime is field 14, stime 15, threads 20, rss 24.
    let hz = ticks();
    let mut s = ProcSample {
        cpu: super::clock::process_cpu_time(pid)?,
        threads: num(17),
        rss: num(21) * 4096,
        reaped_children: Duration::from_secs_f64((num(13) + num(14)) as f64 / hz),
        user_ticks: num(11),
        system_ticks: num(12),
        ..Default::default()
    };
    if let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) {
        for line in status.lines() {
            let v = |l: &str| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|x| x.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            if line.starts_with("voluntary_ctxt_switches") {
                s.voluntary_switches = v(line);
            } else if line.starts_with("nonvoluntary_ctxt_switches") {
                s.involuntary_switches = v(line);
            }
        }
    }
    Ok(s)
}

/// The direct children of `pid`: those its main thread forked (muxlab's servers fork only from
/// their main thread; reading every thread's list would cost a file per thread, 15,000 of them
/// in a thread-per-connection server).
pub fn children(pid: i32) -> Vec<i32> {
    fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|s| s.split_whitespace().filter_map(|x| x.parse::<i32>().ok()).collect())
        .unwrap_or_default()
}

/// Context switches (voluntary, involuntary) of every live thread of `pid`, and their thread
/// ids (pushed to `tids`); /proc/PID/status alone counts only the main thread's. Their
/// schedstats are added to `sched` (left `None` where a thread has none).
pub fn thread_switches(pid: i32, tids: &mut Vec<i32>, sched: &mut Option<Sched>) -> (u64, u64) {
    let mut total = (0, 0);
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return total;
    };
    for t in tasks.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(status) = fs::read_to_string(t.path().join("status")) else {
            continue;
        };
        let read = fs::read_to_string(t.path().join("schedstat")).ok().and_then(|text| {
            let f: Vec<u64> = text.split_whitespace().filter_map(|x| x.parse().ok()).collect();
            (f.len() >= 3).then(|| (f[0], f[1], f[2]))
        });
        *sched = match (*sched, read) {
            (Some(s), Some((run, wait, slices))) => Some(Sched {
                run_ns: s.run_ns + run,
                wait_ns: s.wait_ns + wait,
                slices: s.slices + slices,
            }),
            _ => None,
        };
        for line in status.lines() {
            let v = || {
                line.split_whitespace()
                    .nth(1)
                    .and_then(|x| x.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            if line.starts_with("voluntary_ctxt_switches") {
                total.0 += v();
            } else if line.starts_with("nonvoluntary_ctxt_switches") {
                total.1 += v();
            }
        }
        tids.push(tid);
    }
    total
}

/// Proportional set size of process `pid`'s own data in bytes: its anonymous and shared
/// memory (`Pss_Anon` + `Pss_Shmem` of smaps_rollup; a page shared by N processes counts 1/N in
/// each). File-backed pages (the binary, libraries) are left out: their share moves with
/// whatever else maps the same files (the load generator is the same binary), not with what
/// the process holds.
pub fn pss(pid: i32) -> io::Result<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    match (field("Pss_Anon:"), field("Pss_Shmem:")) {
        (Some(anon), Some(shmem)) => Ok((anon + shmem) * 1024),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("/proc/{pid}/smaps_rollup has no Pss_Anon / Pss_Shmem lines (Linux 5.x or later has them)"),
        )),
    }
}

/// A fingerprint of a set of thread ids (FNV-1a over the sorted ids).
fn fingerprint(tids: &mut [i32]) -> u64 {
    tids.sort_unstable();
    tids.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, t| {
        t.to_le_bytes()
            .iter()
            .fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
    })
}

/// [`sample_tree`] with the context switches and ids of every thread and the tree's PSS (a file
/// per thread: for the start and the end of a measured window, not for frequent sampling).
/// A process of the tree whose smaps_rollup cannot be read (it exited meanwhile) leaves the
/// PSS unknown.
pub fn sample_tree_all_threads(pid: i32) -> io::Result<ProcSample> {
    let mut total = sample_tree(pid)?;
    let (mut vol, mut invol) = (0, 0);
    let mut tids = Vec::new();
    let mut pss_sum = Some(0);
    let mut sched = Some(Sched::default());
    for p in tree(pid) {
        let (v, i) = thread_switches(p, &mut tids, &mut sched);
        vol += v;
        invol += i;
        pss_sum = pss_sum.and_then(|sum| pss(p).ok().map(|x| sum + x));
    }
    total.voluntary_switches = vol;
    total.involuntary_switches = invol;
    total.pss = pss_sum;
    total.thread_set = Some(fingerprint(&mut tids));
    total.sched = sched;
    Ok(total)
}

/// `pid` and all its descendants.
pub fn tree(pid: i32) -> Vec<i32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let kids = children(all[i]);
        all.extend(kids);
        i += 1;
    }
    all
}

/// The sum over a process tree (CPU times and RSS add up; threads too).
pub fn sample_tree(pid: i32) -> io::Result<ProcSample> {
    let mut total = sample(pid)?;
    for p in tree(pid).into_iter().skip(1) {
        if let Ok(s) = sample(p) {
            total.cpu += s.cpu;
            total.reaped_children += s.reaped_children;
            total.threads += s.threads;
            total.rss += s.rss;
            total.voluntary_switches += s.voluntary_switches;
            total.involuntary_switches += s.involuntary_switches;
            total.user_ticks += s.user_ticks;
            total.system_ticks += s.system_ticks;
        }
    }
    Ok(total)
}

/// CPU time (user, system) of the calling process, all threads, from getrusage.
pub fn self_cpu() -> (Duration, Duration) {
    // SAFETY: rusage is plain data; zeroed is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is valid for writes.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let d = |tv: libc::timeval| Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
    (d(ru.ru_utime), d(ru.ru_stime))
}

/// The process listening on TCP `port` (IPv4 or IPv6), found through /proc/net/tcp and the
/// descriptors of every process; `None` if not found or not visible to this user.
pub fn listening_pid(port: u16) -> Option<i32> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, inode is field 9.
            let local_port = f
                .get(1)
                .and_then(|a| a.rsplit_once(':'))
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if local_port == Some(port) && f.get(3) == Some(&"0A") {
                if let Some(inode) = f.get(9) {
                    inodes.push(format!("socket:[{inode}]"));
                }
            }
        }
    }
    if inodes.is_empty() {
        return None;
    }
    let mut pids: Vec<i32> = fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    for pid in pids {
        let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(link) = fs::read_link(fd.path()) {
                if inodes.iter().any(|i| link.as_os_str() == i.as_str()) {
                    return Some(pid);
                }
            }
        }
    }
    None
}

/// `Cpus_allowed_list` of a process, e.g. "0" or "0-1".
pub fn cpus_allowed(pid: i32) -> Option<String> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:").map(|v| v.trim().to_string()))
}

/// Whether `pid` exists and is not a zombie.
/// Whether thread `tid` of this process is asleep (state `S`: blocked in a wait, such as a
/// futex; a thread waiting for a CPU is `R`).
pub fn thread_asleep(tid: i32) -> bool {
    fs::read_to_string(format!("/proc/self/task/{tid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('S')))
}

pub fn is_running(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')))
}

/// Clock ticks per second (for /proc's tick counts).
pub fn ticks_per_second() -> f64 {
    ticks()
}
