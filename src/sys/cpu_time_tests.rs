//! CPU time as muxlab reads it: read by the process and thread clocks and by a cgroup of our own, against real
//! spinning processes.

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
    let (s0, t0) = crate::sys::machine::steal_and_total().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let (s1, t1) = crate::sys::machine::steal_and_total().unwrap();
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
