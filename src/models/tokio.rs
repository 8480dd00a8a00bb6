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
//! by tokio, not counted by `sys`: the stats line's `syscalls` is `null` (not measured).
//!
//! **Seed** (docs/seeds.md). Not in the seeds: the baseline the hand-written loops are measured against.

use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;

use crate::server::connection::{wire, Connection, Next};
use crate::server::drivers::accept::Acceptor;
use crate::server::{io_err, Counter, Ctx, Error, Family, Model, Worker, Workers, READ_BUF, TICK};
use crate::sys;

pub const MODEL: Model = Model {
    name: "tokio",
    family: Family::Completion,
    mechanism: "tokio runtime (current-thread for 1 worker), a task per connection",
    product: "tokio, hyper, axum",
    seed: "-",
    workers: Workers::Threads,
    run,
    counts_syscalls: false,
    data: crate::store::Toucher::EachWorker,
    ..Model::BASE
};

fn run(ctx: &'static Ctx) -> Result<(), Error> {
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
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(std_listener).map_err(io_err("registering the listener"))?;
        let mut tasks = tokio::task::JoinSet::new();
        let mut spare = Acceptor::new(true);
        let mut next = 0;
        let mut ticker = crate::server::drivers::conn::Ticker::default();
        while !ctx.stopping() {
            // Connections are counted round-robin in the workers' blocks.
            let w = ctx.worker(next);
            match timeout(TICK, listener.accept()).await {
                Ok(Ok((stream, _))) => {
                    w.count(Counter::Loops, 1);
                    if let Some(stream) = w.admit(stream) {
                        next = (next + 1) % ctx.workers;
                        tasks.spawn(serve(w, stream));
                    }
                }
                Ok(Err(e)) if matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE)) => {
                    // The same spare-descriptor shedding as every other model. tokio accepts
                    // before waiting for readiness, and at the limit accept() fails even with
                    // nothing pending: then wait a little instead of spinning.
                    if !spare.shed(&listener, w) {
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    }
                }
                Ok(Err(_)) | Err(_) => {}
            }
            while tasks.try_join_next().is_some() {}
            // The accept loop's tick: expired keys go on an idle server too (with one worker
            // this is the runtime's one thread, whose table it is), and pages connections gave
            // back return to the kernel once enough were (the connections' own calls come
            // as they shed, when too little may have been given back yet).
            if ticker.due(Instant::now()) {
                w.sweep_store();
                sys::mem::give_back();
            }
        }
        // Every task notices the stop within a tick and closes its connection.
        while tasks.join_next().await.is_some() {}
        Ok(())
    })
}

/// A task's read buffer between bursts: a read that fills it grows it to [`READ_BUF`], and a
/// connection idle for a tick shrinks it back.
const SMALL_READ: usize = 4 * 1024;

/// One connection's task: it steps the connection, its reads and writes async, its one
/// timer tokio's: each wait ends at the connection's earliest timeout (or a tick, to see the
/// stop flag), which it hands back.
async fn serve(w: Worker<'static>, mut stream: tokio::net::TcpStream) {
    let token = std::os::fd::AsRawFd::as_raw_fd(&stream) as u64;
    let mut conn = Connection::new(w, token, Instant::now());
    let mut buf = vec![0u8; SMALL_READ];
    let mut timer = None;
    while !w.stopping() {
        let now = Instant::now();
        // Its timer, looked at each step (a peer whose bytes always wait never lets a read
        // time out): what has come due is done, and a deadline passed closes it now; idle, it
        // gives back what it is not using.
        if timer.is_some_and(|at| at <= now) {
            conn.handle_timeout(w, timer.take(), now);
        }
        if wire::perform(w, &mut conn) && buf.len() > SMALL_READ {
            sys::mem::released(buf.len() - SMALL_READ);
            buf.truncate(SMALL_READ);
            buf.shrink_to_fit();
            sys::mem::give_back();
        }
        let next = conn.next(w, now, &mut wire::early(w, &stream));
        if matches!(next, Next::Read | Next::Pending) {
            conn.settle(w, now);
        }
        timer = conn.timer(w, now).or(timer);
        let wait = crate::timer::wait(timer, now, TICK);
        // A later response owed (an event stream): the wait ends at its next piece, which the
        // next step writes. Input behind it waits in TCP: while the session is paused there is
        // no read, only the timer.
        let r = match next {
            Next::Send => match timeout(wait, stream.write(conn.output())).await {
                Ok(Ok(n)) if n > 0 => {
                    conn.wrote(w, n, Instant::now());
                    continue;
                }
                Ok(_) => break,
                Err(_) => {
                    conn.blocked();
                    continue;
                }
            },
            Next::Close | Next::Sending => break,
            Next::Pending => {
                tokio::time::sleep(wait).await;
                None
            }
            Next::Read => timeout(wait, stream.read(&mut buf)).await.ok(),
        };
        w.count(Counter::Loops, 1);
        w.count(Counter::Events, 1);
        match r {
            None => {}
            Some(Ok(0)) | Some(Err(_)) => break,
            Some(Ok(n)) => {
                conn.input(w, &buf[..n], Instant::now(), None, &mut wire::early(w, &stream));
                if n == buf.len() && n < READ_BUF {
                    // A burst: read in large pieces until the connection is idle again.
                    buf.resize(READ_BUF, 0);
                }
            }
        }
    }
    wire::end(w, &mut conn, &stream);
    drop(stream);
    w.release();
}
