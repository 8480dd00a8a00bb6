//! fork, wait, kill, exit: process control for the process-based models.

use std::io;

pub use super::clock::{process_cpu_time, thread_cpu_time};
use super::cvt;

/// Which side of a fork we are on.
pub enum Fork {
    Child,
    Parent(i32),
}

/// fork(), only from a process with one thread: with more, the child could inherit a lock
/// (the allocator's, stdout's) held by a thread that does not exist in it. Refused with an
/// error, and nothing forked, when the process has more threads (or they cannot be counted).
pub fn fork() -> io::Result<Fork> {
    match super::procfs::threads(pid()) {
        Some(1) => {}
        n => {
            return Err(io::Error::other(format!(
                "fork refused: the process runs {} threads, and a forked child could inherit a held lock",
                n.map_or("an unknown number of".to_string(), |n| n.to_string())
            )))
        }
    }
    // SAFETY: the process has one thread (checked above, and only this thread could start
    // another), so the child's copy of the heap and of every lock is consistent.
    let pid = cvt(unsafe { libc::fork() })?;
    Ok(if pid == 0 { Fork::Child } else { Fork::Parent(pid) })
}

/// Ends this process at once, without running destructors or flushing stdio (a forked child).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and touches no Rust state.
    unsafe { libc::_exit(code) }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// Reaps one child: any child when `pid` is -1. `Ok(None)` when `nohang` and none has ended,
/// or when there are no children left.
pub fn wait(pid: i32, nohang: bool) -> io::Result<Option<(i32, Exit)>> {
    let mut status: libc::c_int = 0;
    let flags = if nohang { libc::WNOHANG } else { 0 };
    // SAFETY: status is valid for writes.
    match cvt(unsafe { libc::waitpid(pid, &mut status, flags) }) {
        Ok(0) => Ok(None),
        Ok(p) => {
            let exit = if libc::WIFSIGNALED(status) {
                Exit::Signal(libc::WTERMSIG(status))
            } else {
                Exit::Code(libc::WEXITSTATUS(status))
            };
            Ok(Some((p, exit)))
        }
        Err(e) if e.raw_os_error() == Some(libc::ECHILD) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Sends `sig` to `pid`.
pub fn kill(pid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: plain integers.
    cvt(unsafe { libc::kill(pid, sig) })?;
    Ok(())
}

/// Asks the kernel to send `sig` to this process when its parent dies, so a killed master
/// leaves no orphan workers.
pub fn die_with_parent(sig: i32) {
    // SAFETY: PR_SET_PDEATHSIG takes an integer signal number.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong) };
}

/// Lets the calling thread's sleeps end when asked (a timer slack of 1 ns instead of the
/// default 50 µs the kernel may add to coalesce wake-ups): `sleep:1ms` then costs 1 ms.
pub fn exact_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer (ns) and affects the calling thread only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

/// Starts `cmd`'s process with [`exact_sleeps`]' timer slack: a child inherits it at fork and
/// keeps it across exec, and each thread it starts inherits its starter's, so a product bench
/// runs sleeps as exactly as the models' workers do.
pub fn with_exact_sleeps(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and makes one
    // async-signal-safe system call (prctl), touching no memory of the parent's.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
            Ok(())
        })
    }
}

pub fn pid() -> i32 {
    std::process::id() as i32
}

/// The calling thread's id (its `/proc/self/task/TID`).
pub fn tid() -> i32 {
    // SAFETY: gettid takes no argument and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// This process's real user id.
pub fn uid() -> u32 {
    // SAFETY: getuid takes no arguments and cannot fail.
    unsafe { libc::getuid() }
}

/// Whether this process runs as root (its effective user is 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid takes no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod sys_process {
    use crate::sys::process::*;

    /// A process started so sleeps exactly, and the program it execs, have the 1 ns slack (the
    /// child reads its own: another's needs privileges).
    #[test]
    fn a_process_started_with_exact_sleeps_keeps_the_slack_across_exec() {
        let mut cmd = std::process::Command::new("cat");
        cmd.arg("/proc/self/timerslack_ns");
        let out = with_exact_sleeps(&mut cmd).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    }

    #[test]
    fn fork_is_refused_while_other_threads_run() {
        // The test harness runs this on a thread of its own: the process has several.
        let t = std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(500)));
        assert!(crate::sys::procfs::threads(pid()).unwrap() > 1);
        let e = fork().err().expect("fork refused");
        assert!(e.to_string().contains("fork refused"), "{e}");
        t.join().unwrap();
    }
}

/// This thread at the highest CPU priority it may have (nice −20) until the guard drops, then
/// back at the one it had. A thread that samples a server sharing its CPUs with thousands of
/// runnable threads waits behind every one of them at an equal priority (seconds, at 5,000
/// threads), and its samples come late; at −20 it runs when it wakes. `None` where this user
/// may not raise a priority (not root), leaving it as it was.
pub struct Urgent(libc::c_int);

impl Urgent {
    pub fn raise() -> Option<Urgent> {
        // SAFETY: gettid takes no argument.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
        // getpriority returns -1 for nice -1 too: errno tells them apart.
        // SAFETY: errno is this thread's; the calls take plain integers.
        let was = unsafe {
            *libc::__errno_location() = 0;
            libc::getpriority(libc::PRIO_PROCESS, tid)
        };
        // SAFETY: errno is this thread's own.
        if was == -1 && unsafe { *libc::__errno_location() } != 0 {
            return None;
        }
        // SAFETY: plain integers; PRIO_PROCESS with a thread id sets that thread only (Linux).
        let set = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, -20) };
        (set == 0).then_some(Urgent(was))
    }
}

impl Drop for Urgent {
    fn drop(&mut self) {
        // SAFETY: as in `raise`; lowering a priority is always allowed.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, self.0);
        }
    }
}

#[cfg(test)]
mod urgent {
    use super::Urgent;

    /// This thread's nice value, from /proc/thread-self/stat (field 19).
    fn nice() -> i64 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        let rest = stat.rsplit_once(')').unwrap().1;
        rest.split_whitespace().nth(16).unwrap().parse().unwrap()
    }

    /// Root raises a sampling thread to nice −20 for the guard's life and puts it back after;
    /// another user cannot, and nothing changes.
    #[test]
    fn a_raised_thread_runs_at_minus_twenty_until_the_guard_drops() {
        std::thread::spawn(|| {
            let before = nice();
            match Urgent::raise() {
                Some(g) => {
                    assert_eq!(nice(), -20);
                    drop(g);
                    assert_eq!(nice(), before);
                }
                None => {
                    // SAFETY: geteuid takes no argument.
                    assert_ne!(unsafe { libc::geteuid() }, 0, "root may raise a priority");
                    assert_eq!(nice(), before);
                }
            }
        })
        .join()
        .unwrap();
    }
}
