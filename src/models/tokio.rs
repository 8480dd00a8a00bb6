//! # tokio — the tokio runtime, the reference a Rust user would pick
//!
//! **Mechanism.** A tokio runtime (current-thread for `--workers 1`, multi-threaded work
//! stealing otherwise) accepts in one task and spawns a task per connection; each task drives
//! the same protocol session with async reads and writes. Under the hood: mio's epoll, edge-
//! triggered, and a scheduler that moves tasks between worker threads.
//!
//! **Product.** tokio (axum, hyper, tonic, ...).
//!
//! **Trade-offs.** Easy to write and scales over cores by itself; each request pays the
//! runtime's bookkeeping (task wake-ups, the scheduler, reference counts). `--work cpu:` blocks
//! the runtime thread it runs on, as blocking code in an async task does. Its syscalls are made
//! by tokio, not counted by `sys` (`syscalls` stays 0).
//!
//! **Seed.** Not in the seeds: the baseline the hand-written loops are measured against.

use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;

use crate::proto::Session;
use crate::server::{
    accept::Acceptor, io_err, on_input, Config, Counter, Counters, Ctx, Error, Family, Model, Stats, Workers, READ_BUF,
    TICK,
};
use crate::sys;

pub const MODEL: Model = Model {
    name: "tokio",
    family: Family::Completion,
    mechanism: "tokio runtime (current-thread for 1 worker), a task per connection",
    product: "tokio, hyper, axum",
    seed: "-",
    workers: Workers::Threads,
    one_conn_per_worker: false,
    default_max_conns: None,
    reuseport: false,
    run,
};

/// What the connection tasks share ('static, as tokio tasks must be).
struct Shared {
    cfg: Config,
    stats: Stats,
    max_conns: usize,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stats.stop_flag().load(std::sync::atomic::Ordering::Relaxed) != 0
    }
}

fn run(ctx: &Ctx) -> Result<(), Error> {
    let mut builder = if ctx.workers == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(ctx.workers);
        b
    };
    let rt = builder
        .enable_all()
        .build()
        .map_err(io_err("starting the tokio runtime"))?;
    sys::fd::set_nonblocking(&ctx.listener, true).map_err(io_err("making the listener non-blocking"))?;
    let std_listener = std::net::TcpListener::from(ctx.listener.try_clone().map_err(io_err("dup of the listener"))?);
    let sh = Arc::new(Shared {
        cfg: ctx.cfg.clone(),
        stats: ctx.stats,
        max_conns: ctx.max_conns,
    });
    let workers = ctx.workers;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(std_listener).map_err(io_err("registering the listener"))?;
        let mut tasks = tokio::task::JoinSet::new();
        let mut spare = Acceptor::new(true);
        let mut next = 0;
        while !sh.stopping() {
            let c = sh.stats.worker(next);
            match timeout(TICK, listener.accept()).await {
                Ok(Ok((stream, _))) => {
                    c.add(Counter::Loops, 1);
                    if sh.stats.admit(c, sh.max_conns) {
                        next = (next + 1) % workers;
                        tasks.spawn(serve(sh.clone(), c, stream));
                    }
                }
                Ok(Err(e)) if matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE)) => {
                    // The same spare-descriptor shedding as every other model. tokio accepts
                    // before waiting for readiness, and at the limit accept() fails even with
                    // nothing pending: then wait a little instead of spinning.
                    if !spare.shed(&listener, c) {
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    }
                }
                Ok(Err(_)) | Err(_) => {}
            }
            while tasks.try_join_next().is_some() {}
        }
        // Every task notices the stop within a tick and closes its connection.
        while tasks.join_next().await.is_some() {}
        Ok(())
    })
}

/// One connection's task.
async fn serve(sh: Arc<Shared>, c: Counters, mut stream: tokio::net::TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut session = Session::new(sh.cfg.proto);
    let mut buf = vec![0u8; READ_BUF];
    let mut out = Vec::new();
    let mut last = Instant::now();
    while !sh.stopping() {
        let r = timeout(TICK, stream.read(&mut buf)).await;
        c.add(Counter::Loops, 1);
        c.add(Counter::Events, 1);
        let n = match r {
            Err(_) if sh.cfg.idle_timeout.is_some_and(|t| last.elapsed() >= t) => break,
            Err(_) => continue,
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => n,
        };
        c.add(Counter::Useful, 1);
        last = Instant::now();
        let fed = on_input(sh.cfg.work, c, &mut session, &buf[..n], &mut out);
        if stream.write_all(&out).await.is_err() {
            break;
        }
        c.add(Counter::BytesOut, out.len() as u64);
        out.clear();
        if fed.close {
            break;
        }
    }
    drop(stream);
    sh.stats.release(c);
}
