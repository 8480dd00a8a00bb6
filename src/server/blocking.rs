//! Blocking accept and blocking connection service, shared by the blocking models
//! (iterative, fork, thread, prefork, prethread).
//!
//! Blocking calls carry SO_RCVTIMEO / SO_SNDTIMEO of one [`super::TICK`]: a blocked accept
//! or read returns every tick, so a worker notices shutdown and idle timeouts without signals
//! reaching the right thread. Each return counts as a loop iteration; one that brought bytes or
//! a connection counts as a useful event.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

use super::accept::{Accepted, Acceptor};
use super::{Counter, Counters, Ctx, READ_BUF, TICK};
use crate::proto::Session;
use crate::sys;

/// Makes blocking calls on `listener` return every tick.
pub fn prepare_listener(listener: &impl AsRawFd) -> io::Result<()> {
    sys::socket::set_timeouts(listener, TICK)
}

/// Blocks until a connection is admitted; `None` once the server is stopping.
pub fn accept(ctx: &Ctx, acceptor: &mut Acceptor, listener: &impl AsRawFd, c: Counters) -> Option<OwnedFd> {
    while !ctx.stopping() {
        let got = acceptor.accept_one(ctx, listener, c);
        c.add(Counter::Loops, 1);
        c.add(Counter::Events, 1);
        c.flush_syscalls();
        match got {
            Accepted::Conn(fd) => {
                c.add(Counter::Useful, 1);
                return Some(fd);
            }
            Accepted::Refused => c.add(Counter::Useful, 1),
            Accepted::Empty | Accepted::OutOfFds => {}
        }
    }
    None
}

/// The whole life of a blocking worker: accept a connection, serve it to its end, repeat,
/// until the server stops. Worker `i` counts into block `i`.
pub fn accept_and_serve(ctx: &Ctx, i: usize) -> Result<(), super::Error> {
    let c = ctx.stats.worker(i);
    let mut acceptor = Acceptor::new(false);
    ctx.worker_ready(i);
    while let Some(fd) = accept(ctx, &mut acceptor, &ctx.listener, c) {
        serve(ctx, c, fd);
    }
    Ok(())
}

/// Serves one connection to its end with blocking reads and writes, then closes it and
/// counts the close. Returns early (closing) when the server stops or the peer is idle too long.
pub fn serve(ctx: &Ctx, c: Counters, fd: OwnedFd) {
    let mut buf = vec![0u8; READ_BUF];
    let mut out = Vec::new();
    let mut session = Session::new(ctx.cfg.proto);
    let mut last = Instant::now();
    if sys::socket::set_timeouts(&fd, TICK).is_ok() {
        while !ctx.stopping() {
            let r = sys::fd::read(&fd, &mut buf);
            c.add(Counter::Loops, 1);
            c.add(Counter::Events, 1);
            match r {
                Ok(0) => break,
                Ok(n) => {
                    c.add(Counter::Useful, 1);
                    last = Instant::now();
                    let fed = super::on_input(ctx.cfg.work, c, &mut session, &buf[..n], &mut out);
                    if write_all(ctx, c, &fd, &out).is_err() || fed.close {
                        break;
                    }
                    out.clear();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {
                    if ctx.idle_expired(last, Instant::now()) {
                        break;
                    }
                }
                Err(_) => break,
            }
            c.flush_syscalls();
        }
    }
    drop(fd);
    c.flush_syscalls();
    ctx.release(c);
}

/// Writes all of `data`, retrying on send timeouts until the server stops.
fn write_all(ctx: &Ctx, c: Counters, fd: &OwnedFd, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match sys::fd::write(fd, data) {
            Ok(n) => {
                c.add(Counter::BytesOut, n as u64);
                data = &data[n..];
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {
                if ctx.stopping() {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
