//! Accepting connections, shared by every model: `--max-conns`, EMFILE without spinning,
//! and counting lost accept races.
//!
//! On EMFILE the listener stays readable, so a naive event loop spins at 100 % CPU. Like
//! libev and nginx, each acceptor keeps a spare descriptor: on EMFILE it closes the spare,
//! accepts the pending connection into the freed slot, closes it (counted as rejected) and
//! reopens the spare. If even that fails it sleeps one millisecond-scale pause, never spins.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Duration;

use crate::server::Counter;
use crate::server::Worker;
use crate::server::{io_err, Error};
use crate::sys;

/// What one accept attempt gave.
pub enum Accepted {
    /// A connection, admitted under `--max-conns`.
    Conn(OwnedFd),
    /// A connection arrived but was refused (limit, EMFILE); the listener may have more.
    Refused,
    /// Nothing pending (EAGAIN, a blocking timeout, EINTR, an aborted connection).
    Empty,
    /// Out of descriptors and nothing could be drained: stop accepting for now. Not a lost race.
    OutOfFds,
}

/// One worker's accept state.
pub struct Acceptor {
    /// Given up on EMFILE to drain one pending connection.
    spare: Option<OwnedFd>,
    /// Hand out non-blocking connections.
    nonblocking: bool,
    /// Refuse descriptors at or above this number (select's FD_SETSIZE).
    fd_ceiling: Option<usize>,
}

impl Acceptor {
    pub fn new(nonblocking: bool) -> Self {
        Acceptor {
            spare: sys::fd::open_spare().ok(),
            nonblocking,
            fd_ceiling: None,
        }
    }

    /// Refuses (closes and counts) connections whose descriptor is `ceiling` or more.
    pub fn refuse_fds_from(mut self, ceiling: usize) -> Self {
        self.fd_ceiling = Some(ceiling);
        self
    }

    /// Accepts one connection from `listener`.
    pub fn accept_one(&mut self, w: Worker<'_>, listener: &impl AsFd) -> Accepted {
        match sys::socket::accept(listener, self.nonblocking) {
            Ok(fd) if self.fd_ceiling.is_some_and(|max| fd.as_raw_fd() as usize >= max) => {
                w.count(Counter::RejectedFdSetSize, 1);
                drop(fd);
                Accepted::Refused
            }
            Ok(fd) => match w.admit(fd) {
                Some(fd) => Accepted::Conn(fd),
                None => Accepted::Refused,
            },
            Err(e) => match e.raw_os_error() {
                Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOBUFS) | Some(libc::ENOMEM) => {
                    if self.shed(listener, w) {
                        Accepted::Refused
                    } else {
                        Accepted::OutOfFds
                    }
                }
                Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ECONNABORTED) | Some(libc::EPROTO) => {
                    Accepted::Empty
                }
                // EINVAL: the listener was shut down; anything else: back off a little.
                _ => {
                    if e.kind() != io::ErrorKind::InvalidInput {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Accepted::Empty
                }
            },
        }
    }

    /// Out of descriptors: drain one pending connection through the spare slot (counted as
    /// `rejected_emfile`), or pause briefly when no spare is left. Returns whether a connection
    /// was drained: at the limit Linux fails accept() with EMFILE even when nothing is pending.
    pub fn shed(&mut self, listener: &impl AsFd, w: Worker<'_>) -> bool {
        let mut drained = false;
        if self.spare.take().is_some() {
            // The spare is closed: its slot takes the pending connection, which we close.
            drained = sys::socket::accept(listener, true).is_ok();
            self.spare = sys::fd::open_spare().ok();
        }
        if drained {
            w.count(Counter::RejectedEmfile, 1);
        }
        if self.spare.is_none() {
            // Another thread took the slot: pause instead of spinning, try again later.
            std::thread::sleep(Duration::from_millis(10));
            self.spare = sys::fd::open_spare().ok();
        }
        drained
    }

    /// After a readiness event on a non-blocking listener: accepts up to `max` connections
    /// (1: one per event; `usize::MAX`: until EAGAIN), handing each to `on_conn`. Counts a lost
    /// race when the first attempt finds nothing, and returns whether anything arrived.
    pub fn accept_ready(
        &mut self,
        w: Worker<'_>,
        listener: &impl AsFd,
        max: usize,
        mut on_conn: impl FnMut(OwnedFd),
    ) -> bool {
        let mut any = false;
        let mut n = 0;
        loop {
            match self.accept_one(w, listener) {
                Accepted::Conn(fd) => on_conn(fd),
                Accepted::Refused => {}
                Accepted::Empty => {
                    if !any {
                        w.count(Counter::AcceptLost, 1);
                    }
                    return any;
                }
                Accepted::OutOfFds => return any,
            }
            any = true;
            n += 1;
            if n >= max {
                return true;
            }
        }
    }
}

/// The listener of a worker in a SO_REUSEPORT group: worker 0 uses the server's listener (bound
/// with SO_REUSEPORT), the others bind their own on the same address, so the kernel spreads new
/// connections over them. `None` for worker 0.
pub fn own_listener(w: Worker<'_>) -> Result<Option<OwnedFd>, Error> {
    if w.index == 0 {
        return Ok(None);
    }
    let fd = sys::socket::listen(w.ctx.addr, w.ctx.cfg.backlog(), true)
        .map_err(io_err(format!("worker {}: listen", w.index)))?;
    defer_accept(&w.ctx.cfg, &fd)?;
    sys::fd::set_nonblocking(&fd, true).map_err(io_err("making a listener non-blocking"))?;
    Ok(Some(fd))
}

/// `--defer-accept` on a listener (TCP_DEFER_ACCEPT, one second).
pub fn defer_accept(cfg: &crate::server::Config, fd: &OwnedFd) -> Result<(), Error> {
    if cfg.defer_accept {
        sys::socket::set_defer_accept(fd, 1).map_err(io_err("setting TCP_DEFER_ACCEPT"))?;
    }
    Ok(())
}
