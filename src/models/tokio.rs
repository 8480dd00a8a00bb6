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

use crate::server::deadline::{self, Deadlines};
use crate::server::idle::Shed;
use crate::server::{accept::Acceptor, io_err, Counter, Ctx, Error, Family, Model, Worker, Workers, READ_BUF, TICK};
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
        }
        // Every task notices the stop within a tick and closes its connection.
        while tasks.join_next().await.is_some() {}
        Ok(())
    })
}

/// A task's read buffer between bursts: a read that fills it grows it to [`READ_BUF`], and a
/// connection idle for a tick shrinks it back.
const SMALL_READ: usize = 4 * 1024;

/// One connection's task: read, answer, write, under the same deadlines as every model.
async fn serve(w: Worker<'static>, mut stream: tokio::net::TcpStream) {
    let mut session = w.session();
    let (mut buf, mut out) = (vec![0u8; SMALL_READ], Vec::new());
    let mut deadlines = Deadlines::new(Instant::now());
    let mut shed = Shed::default();
    while !w.stopping() {
        // A later response owed (an event stream): the read times out at its next piece
        // (tokio's timer), which is then written. Input behind it waits in TCP: while the
        // session is paused there is no read, only the timer.
        let due = session.due();
        let wait = due.map_or(TICK, |d| d.saturating_duration_since(Instant::now()).min(TICK));
        let r = match session.paused() {
            true => {
                tokio::time::sleep(wait).await;
                Err(())
            }
            false => timeout(wait, stream.read(&mut buf)).await.map_err(|_| ()),
        };
        w.count(Counter::Loops, 1);
        w.count(Counter::Events, 1);
        let n = match r {
            Err(_) if due.is_some_and(|d| d <= Instant::now()) => {
                if !advance(w, &mut session, &mut out, &mut stream, &mut deadlines).await {
                    break;
                }
                continue;
            }
            Err(_) => match deadlines.expired(&w.ctx.cfg, &session, false, Instant::now()) {
                Some(why) => {
                    why.last_word(w, &session, |b| {
                        let _ = stream.try_write(b);
                    });
                    break;
                }
                None => {
                    // A tick in silence: the connection gives back what it is not using.
                    if shed.idle(&mut session, &mut out, deadlines.last(), Instant::now()) && buf.len() > SMALL_READ {
                        sys::mem::released(buf.len() - SMALL_READ);
                        buf.truncate(SMALL_READ);
                        buf.shrink_to_fit();
                    }
                    sys::mem::give_back();
                    continue;
                }
            },
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => n,
        };
        let fed = feed(w, &mut session, &buf[..n], &mut out, &stream);
        if n == buf.len() && n < READ_BUF {
            // A burst: read in large pieces until the connection is idle again.
            buf.resize(READ_BUF, 0);
        }
        w.count(Counter::Useful, 1);
        shed.active();
        deadlines.input(&session, fed.requests > 0, fed.quiet(), Instant::now());
        if !write_out(w, &mut stream, &mut out).await || fed.close {
            break;
        }
        // What the session held back at --max-output, now that its replies went.
        if !drain_held(w, &mut session, &mut out, &mut stream, &mut deadlines).await {
            break;
        }
        // Input that keeps coming never lets a read time out: what is due goes here too.
        if session.due().is_some_and(|d| d <= Instant::now())
            && !advance(w, &mut session, &mut out, &mut stream, &mut deadlines).await
        {
            break;
        }
        // Input that keeps coming never lets a read time out (a head dribbled byte by byte,
        // frames that ask nothing): check here too.
        if let Some(why) = deadlines.expired(&w.ctx.cfg, &session, false, Instant::now()) {
            why.last_word(w, &session, |b| {
                let _ = stream.try_write(b);
            });
            break;
        }
    }
    deadline::part(&mut session, w.stopping(), |b| {
        let _ = stream.try_write(b);
    });
    drop(stream);
    w.release();
}

/// Writes what the session's later responses have due now, then what a response that ended
/// held behind it; `false` when the connection is done.
async fn advance(
    w: Worker<'static>,
    session: &mut crate::proto::Session,
    out: &mut Vec<u8>,
    stream: &mut tokio::net::TcpStream,
    deadlines: &mut Deadlines,
) -> bool {
    let fed = w.on_due(session, Instant::now(), out, w.max_output(), &mut send_now(stream, w));
    w.count(Counter::Useful, 1);
    deadlines.output(Instant::now());
    if !write_out(w, stream, out).await || fed.close {
        return false;
    }
    !session.holding() || drain_held(w, session, out, stream, deadlines).await
}

/// Goes on with what the session held back at `--max-output`, writing as it goes; `false` when
/// the connection is done.
async fn drain_held(
    w: Worker<'static>,
    session: &mut crate::proto::Session,
    out: &mut Vec<u8>,
    stream: &mut tokio::net::TcpStream,
    deadlines: &mut Deadlines,
) -> bool {
    while session.holding() {
        let fed = feed(w, session, &[], out, stream);
        deadlines.input(session, fed.requests > 0, fed.quiet(), Instant::now());
        if !write_out(w, stream, out).await || fed.close {
            return false;
        }
    }
    true
}

/// Feeds `bytes` (none: what the session held back) to the session; before each request's work
/// the replies so far go, as far as the socket takes them now.
fn feed(
    w: Worker<'static>,
    session: &mut crate::proto::Session,
    bytes: &[u8],
    out: &mut Vec<u8>,
    stream: &tokio::net::TcpStream,
) -> crate::proto::Fed {
    w.on_input(session, bytes, out, w.max_output(), &mut send_now(stream, w))
}

/// What the per-request hook does with the replies before a request's work: what the socket
/// takes now goes.
fn send_now<'a>(stream: &'a tokio::net::TcpStream, w: Worker<'static>) -> impl FnMut(&mut Vec<u8>) + 'a {
    move |out: &mut Vec<u8>| {
        while !out.is_empty() {
            match stream.try_write(out) {
                Ok(n) => {
                    out.drain(..n);
                    w.count(Counter::BytesOut, n as u64);
                }
                Err(_) => break,
            }
        }
    }
}

/// Writes all of `out` and empties it; `false` when the connection is done: the write failed,
/// or the client took nothing for `--idle-timeout` (counted as a send timeout).
async fn write_out(w: Worker<'static>, stream: &mut tokio::net::TcpStream, out: &mut Vec<u8>) -> bool {
    let limit = w.ctx.cfg.idle().unwrap_or(std::time::Duration::MAX);
    match timeout(limit, stream.write_all(out)).await {
        Ok(Ok(())) => {}
        Ok(Err(_)) => return false,
        Err(_) => {
            w.count(Counter::ClosedSendTimeout, 1);
            return false;
        }
    }
    w.count(Counter::BytesOut, out.len() as u64);
    out.clear();
    true
}
