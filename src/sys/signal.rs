//! Signals: SIGTERM / SIGINT / SIGHUP set a stop flag in shared memory; SIGPIPE is ignored.
//!
//! The handler only stores to an atomic, which is async-signal-safe. Handlers are installed
//! without SA_RESTART, so a blocking call in the receiving thread returns EINTR.

use std::io;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

static STOP_FLAG: AtomicPtr<AtomicU64> = AtomicPtr::new(ptr::null_mut());

extern "C" fn on_stop(_sig: libc::c_int) {
    let p = STOP_FLAG.load(Ordering::Relaxed);
    if !p.is_null() {
        // SAFETY: p points into a leaked, never-unmapped shared mapping (see install_stop_handler).
        unsafe { (*p).store(1, Ordering::SeqCst) };
    }
}

fn set_handler(sig: libc::c_int, handler: libc::sighandler_t) -> io::Result<()> {
    // SAFETY: sigaction is plain data; zeroed is a valid empty mask and no flags.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = handler;
    // SAFETY: sa is valid; the old action is not requested.
    super::cvt(unsafe { libc::sigaction(sig, &sa, ptr::null_mut()) })?;
    Ok(())
}

/// Whether `sig` is ignored now (as `nohup` leaves SIGHUP).
fn ignored(sig: libc::c_int) -> io::Result<bool> {
    // SAFETY: sigaction is plain data; zeroed is valid to be written.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only reads the current one into `old`.
    super::cvt(unsafe { libc::sigaction(sig, ptr::null(), &mut old) })?;
    Ok(old.sa_sigaction == libc::SIG_IGN)
}

/// SIGTERM, SIGINT and SIGHUP (the terminal or ssh session went away, unless under nohup) store 1 into `flag`,
/// which must live for the rest of the process: each is a request to stop in order, cleaning up.
pub fn install_stop_handler(flag: &'static AtomicU64) -> io::Result<()> {
    STOP_FLAG.store(flag as *const AtomicU64 as *mut AtomicU64, Ordering::SeqCst);
    let h = on_stop as extern "C" fn(libc::c_int) as libc::sighandler_t;
    set_handler(libc::SIGTERM, h)?;
    set_handler(libc::SIGINT, h)?;
    // Under nohup (SIGHUP ignored when we started) a hang-up is meant to pass unnoticed.
    if !ignored(libc::SIGHUP)? {
        set_handler(libc::SIGHUP, h)?;
    }
    set_handler(libc::SIGPIPE, libc::SIG_IGN)
}

/// In a forked worker: SIGTERM kills just this worker (default action), SIGINT and SIGHUP from
/// the terminal are left to the master, which stops everyone through the shared flag.
pub fn worker_defaults() -> io::Result<()> {
    set_handler(libc::SIGTERM, libc::SIG_DFL)?;
    set_handler(libc::SIGHUP, libc::SIG_IGN)?;
    set_handler(libc::SIGINT, libc::SIG_IGN)
}

pub use libc::{SIGHUP, SIGINT, SIGKILL, SIGQUIT, SIGTERM};
