//! Blocking accept and blocking connection service, shared by the blocking models
//! (iterative, fork, thread, prefork, prethread).
//!
//! Blocking calls carry SO_RCVTIMEO / SO_SNDTIMEO: a blocked accept returns every tick (100 ms),
//! a blocked read or write on a connection every [`CONN_TICK`] (1 s), so a worker notices
//! shutdown and its deadlines without signals reaching the right thread. A connection's tick is
//! longer because there may be 15,000 of them (seed 001): ten wake-ups a second each would cost
//! more than serving them. Each return counts as a loop iteration; one that brought bytes or a
//! connection counts as a useful event.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

use super::accept::{Accepted, Acceptor};
use super::config::{READ_BUF, TICK};
use super::ctx::Worker;
use super::deadline::{Deadlines, Expired};
use super::error::Error;
use super::stats::Counter;
use crate::sys;

/// How often a connection blocked in read or write wakes to check the stop flag and deadlines.
pub const CONN_TICK: std::time::Duration = std::time::Duration::from_secs(1);

/// Makes blocking calls on `listener` return every tick.
pub fn prepare_listener(listener: &impl AsRawFd) -> io::Result<()> {
    sys::socket::set_timeouts(listener, TICK)
}

/// Blocks until a connection is admitted; `None` once the server is stopping.
pub fn accept(w: Worker<'_>, acceptor: &mut Acceptor, listener: &impl AsRawFd) -> Option<OwnedFd> {
    while !w.stopping() {
        let got = acceptor.accept_one(w, listener);
        w.count(Counter::Loops, 1);
        w.count(Counter::Events, 1);
        w.flush_syscalls();
        match got {
            Accepted::Conn(fd) => {
                w.count(Counter::Useful, 1);
                return Some(fd);
            }
            Accepted::Refused => w.count(Counter::Useful, 1),
            Accepted::Empty | Accepted::OutOfFds => {}
        }
    }
    None
}

/// The whole life of a blocking worker: accept a connection, serve it to its end, repeat,
/// until the server stops.
pub fn accept_and_serve(w: Worker<'_>) -> Result<(), Error> {
    let mut acceptor = Acceptor::new(false);
    w.ready();
    while let Some(fd) = accept(w, &mut acceptor, &w.ctx.listener) {
        serve(w, fd);
    }
    Ok(())
}

/// Serves one connection to its end with blocking reads and writes, then closes it and
/// counts the close. Returns early (closing) when the server stops or a deadline passes: silence
/// or a stalled write for `--idle-timeout`, a request head longer than `--header-timeout` (408).
pub fn serve(w: Worker<'_>, fd: OwnedFd) {
    let mut buf = vec![0u8; READ_BUF];
    let mut out = Vec::new();
    let mut session = w.session();
    let mut deadlines = Deadlines::new(Instant::now());
    if sys::socket::set_timeouts(&fd, CONN_TICK).is_ok() {
        while !w.stopping() {
            let r = sys::fd::read(&fd, &mut buf);
            w.count(Counter::Loops, 1);
            w.count(Counter::Events, 1);
            match r {
                Ok(0) => break,
                Ok(n) => {
                    w.count(Counter::Useful, 1);
                    let fed = w.on_input(&mut session, &buf[..n], &mut out);
                    deadlines.input(&session, Instant::now());
                    if write_all(w, &fd, &out, &mut deadlines).is_err() || fed.close {
                        break;
                    }
                    out.clear();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {
                    if let Some(why) = deadlines.expired(&w.ctx.cfg, false, Instant::now()) {
                        if why == Expired::Header {
                            let _ = sys::fd::try_write(&fd, session.timeout_response());
                        }
                        w.count(why.counter(), 1);
                        break;
                    }
                }
                Err(_) => break,
            }
            w.flush_syscalls();
        }
    }
    drop(fd);
    w.flush_syscalls();
    w.release();
}

/// Writes all of `data`, retrying on send timeouts until the server stops, or until the client
/// has taken nothing for `--idle-timeout` (counted as `closed_send_timeout`): a client that
/// never reads must not hold a blocking worker for ever.
fn write_all(w: Worker<'_>, fd: &OwnedFd, mut data: &[u8], deadlines: &mut Deadlines) -> io::Result<()> {
    while !data.is_empty() {
        match sys::fd::write(fd, data) {
            Ok(n) => {
                w.count(Counter::BytesOut, n as u64);
                data = &data[n..];
                deadlines.output(Instant::now());
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {
                if w.stopping() {
                    return Err(e);
                }
                if deadlines.expired(&w.ctx.cfg, true, Instant::now()) == Some(Expired::Send) {
                    w.count(Counter::ClosedSendTimeout, 1);
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
