//! Starting, supervising and stopping worker threads and worker processes.
//!
//! A worker is a function of its [`Worker`] handle: it runs until the stop flag is set. A worker
//! that fails sets the flag, so the others stop too; the caller returns once every worker has
//! ended.

use std::io;
use std::sync::atomic::Ordering;
use std::thread;

use super::ctx::{Ctx, Worker};
use super::error::{io_err, Error};
use super::stats::Counter;
use crate::sys;
use crate::sys::process::{Exit, Fork};

/// The body of a worker: runs until the server stops.
pub type WorkerFn = fn(Worker<'static>) -> Result<(), Error>;

/// Runs `work` on `ctx.workers` threads and joins them all.
pub fn threads(ctx: &Ctx, work: impl Fn(Worker<'_>) -> Result<(), Error> + Sync) -> Result<(), Error> {
    threads_and(ctx, work, || {
        while !ctx.stopping() {
            thread::sleep(super::TICK);
        }
        Ok(())
    })
}

/// Runs `work` on `ctx.workers` threads and `main` (an acceptor, say) on the calling thread;
/// when `main` returns or anything fails, every thread is stopped and joined.
pub fn threads_and(
    ctx: &Ctx,
    work: impl Fn(Worker<'_>) -> Result<(), Error> + Sync,
    main: impl FnOnce() -> Result<(), Error>,
) -> Result<(), Error> {
    let work = &work;
    thread::scope(|s| {
        let mut handles = Vec::new();
        for i in 0..ctx.workers {
            let spawned = thread::Builder::new()
                .name(format!("worker-{i}"))
                .spawn_scoped(s, move || {
                    let r = work(ctx.worker(i));
                    ctx.gate.leave(i);
                    if r.is_err() {
                        ctx.request_stop();
                    }
                    r
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    ctx.worker(i).count(Counter::SpawnFailed, 1);
                    ctx.request_stop();
                    return Err(io_err(format!("starting worker thread {i}"))(e));
                }
            }
        }
        // The main thread (an acceptor, say) starts once every worker has set up.
        ctx.gate.arrive_and_wait(ctx.workers, &|| ctx.stopping());
        let mut result = main();
        ctx.request_stop();
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(io_err("a worker thread")(io::Error::other("panicked"))));
            if result.is_ok() {
                result = r;
            }
        }
        result
    })
}

/// Forks a process: the child runs `child` and exits with its result (0 or 1), never returning;
/// the parent gets the child's pid. The child ends with its parent (PR_SET_PDEATHSIG) and has
/// the default signal dispositions, so the shared stop flag is what ends it.
pub fn fork_child(what: &str, child: impl FnOnce() -> Result<(), Error>) -> Result<i32, Error> {
    match sys::process::fork().map_err(io_err(format!("forking {what}")))? {
        Fork::Parent(pid) => Ok(pid),
        Fork::Child => {
            let _ = sys::signal::worker_defaults();
            sys::process::die_with_parent(sys::signal::SIGTERM);
            let code = match child() {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("muxlab: {what}: {e}");
                    1
                }
            };
            sys::process::exit_now(code)
        }
    }
}

/// Forks worker process `i` running `work`.
fn spawn_process(ctx: &'static Ctx, i: usize, work: WorkerFn) -> Result<i32, Error> {
    fork_child(&format!("worker process {i}"), || {
        let w = ctx.worker(i);
        let r = work(w);
        w.flush_syscalls();
        r
    })
    .inspect_err(|_| ctx.worker(i).count(Counter::SpawnFailed, 1))
}

/// Forks `ctx.workers` worker processes and supervises them until the server stops: a worker
/// that dies is replaced when `restart` (counted in `restarts`), otherwise the server stops.
/// Returns after every worker has been reaped.
pub fn processes(ctx: &'static Ctx, work: WorkerFn, restart: bool) -> Result<(), Error> {
    let what = |i| format!("worker {i}");
    supervise(ctx, ctx.workers, |i| spawn_process(ctx, i, work), restart, &what, || {}).map(|_| ())
}

/// A supervised process that ended while the server ran, and stopped it: its index, pid and
/// how it ended.
pub type Ended = (usize, i32, Exit);

/// Starts `count` processes with `spawn(i)` (which forks and returns the pid) and supervises
/// them until the server stops, calling `tick` every [`super::TICK`] meanwhile: one that ends
/// is replaced when `restart` (counted in `restarts`), otherwise the server stops and it is
/// returned. `what(i)` names process `i` in what is said on stderr. Returns after every
/// process has been reaped.
pub fn supervise(
    ctx: &Ctx,
    count: usize,
    spawn: impl Fn(usize) -> Result<i32, Error>,
    restart: bool,
    what: &dyn Fn(usize) -> String,
    mut tick: impl FnMut(),
) -> Result<Option<Ended>, Error> {
    let mut pids: Vec<Option<i32>> = vec![None; count];
    let mut result = Ok(None);
    for (i, slot) in pids.iter_mut().enumerate() {
        match spawn(i) {
            Ok(pid) => *slot = Some(pid),
            Err(e) => {
                ctx.request_stop();
                result = Err(e);
                break;
            }
        }
    }
    while !ctx.stopping() {
        // Looks every tick: a stop is seen within one (the master has one thread).
        let (pid, exit) = match sys::process::wait(-1, true) {
            Ok(Some(ended)) => ended,
            Ok(None) if pids.iter().any(Option::is_some) => {
                tick();
                thread::sleep(super::TICK);
                continue;
            }
            Ok(None) => break,
            Err(_) => continue,
        };
        let Some(i) = pids.iter().position(|p| *p == Some(pid)) else {
            // Not a worker: the metrics endpoint's process, gone.
            ctx.not_the_designs(pid);
            continue;
        };
        pids[i] = None;
        // A worker that died holding the accept mutex must not block the others (nginx does
        // the same: ngx_shmtx_force_unlock).
        let _ = ctx
            .stats
            .accept_mutex()
            .compare_exchange(pid as u64, 0, Ordering::SeqCst, Ordering::SeqCst);
        if ctx.stopping() {
            break;
        }
        let how = match exit {
            Exit::Code(c) => format!("exited with code {c}"),
            Exit::Signal(s) => format!("was killed by signal {s}"),
        };
        if restart {
            eprintln!("muxlab: {} (pid {pid}) {how}; starting a replacement", what(i));
            ctx.worker(i).count(Counter::Restarts, 1);
            match spawn(i) {
                Ok(p) => pids[i] = Some(p),
                Err(e) => {
                    ctx.request_stop();
                    result = Err(e);
                }
            }
        } else {
            eprintln!("muxlab: {} (pid {pid}) {how}; stopping the server", what(i));
            ctx.request_stop();
            if matches!(result, Ok(None)) {
                result = Ok(Some((i, pid, exit)));
            }
        }
    }
    tick();
    // Stopping: every worker sees the shared flag within a tick and exits (so does the metrics
    // endpoint's process).
    loop {
        match sys::process::wait(-1, false) {
            Ok(Some((pid, _))) => {
                ctx.not_the_designs(pid);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            _ => break,
        }
    }
    result
}
