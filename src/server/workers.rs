//! Starting, supervising and stopping worker threads and worker processes.
//!
//! A worker is `fn(&Ctx, index)`: it runs until the stop flag is set. A worker that fails sets
//! the flag, so the others stop too; the caller returns once every worker has ended.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex};
use std::thread;

use super::{io_err, Counter, Ctx, Error};
use crate::sys;
use crate::sys::process::{Exit, Fork};

/// Where the threads of a threaded model meet before any of them accepts: a worker that sets up
/// its epoll instance or ring after another started accepting could find every descriptor taken
/// (EMFILE) and fail. Process models need none: each process has its own descriptor table.
pub struct Gate {
    /// Per party (workers, then the main thread): arrived yet?
    arrived: Mutex<Vec<bool>>,
    all_in: Condvar,
}

impl Gate {
    /// A gate for `parties` threads; 0 makes every call a no-op.
    pub fn new(parties: usize) -> Gate {
        Gate {
            arrived: Mutex::new(vec![false; parties]),
            all_in: Condvar::new(),
        }
    }

    /// Party `i` is ready; waits until every party is (or the server stops).
    pub fn arrive_and_wait(&self, i: usize, stop: &dyn Fn() -> bool) {
        let mut a = self.arrived.lock().unwrap_or_else(|e| e.into_inner());
        if i >= a.len() {
            return;
        }
        a[i] = true;
        self.all_in.notify_all();
        while !a.iter().all(|x| *x) && !stop() {
            a = self
                .all_in
                .wait_timeout(a, super::TICK)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// Party `i` will not come (it ended): nobody waits for it.
    fn leave(&self, i: usize) {
        let mut a = self.arrived.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(x) = a.get_mut(i) {
            *x = true;
        }
        self.all_in.notify_all();
    }
}

/// The body of a worker: runs until the server stops.
pub type WorkerFn = fn(&Ctx, usize) -> Result<(), Error>;

/// Runs `work` on `ctx.workers` threads and joins them all.
pub fn threads(ctx: &Ctx, work: impl Fn(&Ctx, usize) -> Result<(), Error> + Sync) -> Result<(), Error> {
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
    work: impl Fn(&Ctx, usize) -> Result<(), Error> + Sync,
    main: impl FnOnce() -> Result<(), Error>,
) -> Result<(), Error> {
    let work = &work;
    thread::scope(|s| {
        let mut handles = Vec::new();
        for i in 0..ctx.workers {
            let spawned = thread::Builder::new()
                .name(format!("worker-{i}"))
                .spawn_scoped(s, move || {
                    let r = work(ctx, i);
                    ctx.gate.leave(i);
                    if r.is_err() {
                        ctx.request_stop();
                    }
                    r
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
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
            let r = h.join().unwrap_or_else(|_| {
                Err(Error::Io {
                    what: "a worker thread".into(),
                    source: io::Error::other("panicked"),
                })
            });
            if result.is_ok() {
                result = r;
            }
        }
        result
    })
}

/// Forks a worker process running `work(ctx, i)`; it exits when the work returns.
pub fn spawn_process(ctx: &Ctx, i: usize, work: WorkerFn) -> Result<i32, Error> {
    match sys::process::fork().map_err(io_err(format!("forking worker process {i}")))? {
        Fork::Parent(pid) => Ok(pid),
        Fork::Child => {
            let _ = sys::signal::worker_defaults();
            sys::process::die_with_parent(sys::signal::SIGTERM);
            let code = match work(ctx, i) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("muxlab: worker {i}: {e}");
                    1
                }
            };
            ctx.stats.worker(i).flush_syscalls();
            sys::process::exit_now(code)
        }
    }
}

/// Forks `ctx.workers` worker processes and supervises them until the server stops: a worker
/// that dies is replaced when `restart` (counted in `restarts`), otherwise the server stops.
/// Returns after every worker has been reaped.
pub fn processes(ctx: &Ctx, work: WorkerFn, restart: bool) -> Result<(), Error> {
    let mut pids: Vec<Option<i32>> = vec![None; ctx.workers];
    let mut result = Ok(());
    for (i, slot) in pids.iter_mut().enumerate() {
        match spawn_process(ctx, i, work) {
            Ok(pid) => *slot = Some(pid),
            Err(e) => {
                ctx.request_stop();
                result = Err(e);
                break;
            }
        }
    }
    while !ctx.stopping() {
        // Blocks until a worker ends; SIGTERM interrupts it (the master has one thread).
        let (pid, exit) = match sys::process::wait(-1, false) {
            Ok(Some(ended)) => ended,
            Ok(None) => break,
            Err(_) => continue,
        };
        let Some(i) = pids.iter().position(|p| *p == Some(pid)) else {
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
            eprintln!("muxlab: worker {i} (pid {pid}) {how}; starting a replacement");
            ctx.stats.worker(i).add(Counter::Restarts, 1);
            match spawn_process(ctx, i, work) {
                Ok(p) => pids[i] = Some(p),
                Err(e) => {
                    ctx.request_stop();
                    result = Err(e);
                }
            }
        } else {
            eprintln!("muxlab: worker {i} (pid {pid}) {how}; stopping the server");
            ctx.request_stop();
        }
    }
    // Stopping: every worker sees the shared flag within a tick and exits.
    loop {
        match sys::process::wait(-1, false) {
            Ok(Some(_)) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            _ => break,
        }
    }
    result
}
