//! Handing connections from an acceptor thread to a worker's loop: a locked queue per worker
//! and an eventfd that wakes the worker's epoll.

use std::os::fd::OwnedFd;
use std::sync::Mutex;

use crate::server::drivers::accept::{Accepted, Acceptor};
use crate::server::drivers::evloop::{EventLoop, LISTENER, WAKE};
use crate::server::drivers::poller::Epoll;
use crate::server::threads_and;
use crate::server::Counter;
use crate::server::{io_err, Error};
use crate::server::{Ctx, Worker};
use crate::sync::lock;
use crate::sys::eventfd::EventFd;

/// One worker's inbox of new connections.
pub struct Mailbox {
    queue: Mutex<Vec<OwnedFd>>,
    wake: EventFd,
}

impl Mailbox {
    pub fn new() -> Result<Mailbox, Error> {
        Ok(Mailbox {
            queue: Mutex::new(Vec::new()),
            wake: EventFd::new().map_err(io_err("eventfd"))?,
        })
    }

    /// Posts a connection. `wake_always`: one eventfd write per connection (memcached's pipe
    /// byte per item, and muduo's `queueInLoop`, which wakes on every call from another thread);
    /// otherwise only when the queue was empty (one wake-up until the loop runs, as netty's).
    pub fn post(&self, fd: OwnedFd, wake_always: bool) {
        let was_empty = {
            let mut q = lock(&self.queue);
            let empty = q.is_empty();
            q.push(fd);
            empty
        };
        if wake_always || was_empty {
            let _ = self.wake.notify();
        }
    }

    /// Takes every queued connection (after a wake-up).
    pub fn take(&self) -> Vec<OwnedFd> {
        let _ = self.wake.drain();
        std::mem::take(&mut *lock(&self.queue))
    }
}

/// The life of a worker fed by a mailbox: its own loop, its own connections, for good.
pub fn mailbox_worker(w: Worker<'_>, mailbox: &Mailbox) -> Result<(), Error> {
    let mut ev = EventLoop::new(w, Epoll::level()?);
    ev.watch(&mailbox.wake, WAKE)?;
    ev.take_hops()?;
    w.ready();
    ev.run(|ev, _wake| {
        for fd in mailbox.take() {
            ev.add(fd);
        }
    })
}

/// Runs `ctx.workers` threads, each a loop fed by its own mailbox, and `acceptor` on the calling
/// thread with the mailboxes; returns when all have stopped (dispatch and multi-reactor).
pub fn with_mailbox_workers(ctx: &Ctx, acceptor: impl FnOnce(&[Mailbox]) -> Result<(), Error>) -> Result<(), Error> {
    with_mailbox_workers_and(ctx, ctx.workers, |_| Ok(()), acceptor)
}

/// As [`with_mailbox_workers`] with the first `fed` workers fed by mailboxes and the others
/// running `other` (io-threads' executor).
pub fn with_mailbox_workers_and(
    ctx: &Ctx,
    fed: usize,
    other: impl Fn(Worker<'_>) -> Result<(), Error> + Sync,
    acceptor: impl FnOnce(&[Mailbox]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mailboxes: Vec<Mailbox> = (0..fed).map(|_| Mailbox::new()).collect::<Result<_, _>>()?;
    let mailboxes = &mailboxes;
    threads_and(
        ctx,
        |w| match mailboxes.get(w.index) {
            Some(m) => mailbox_worker(w, m),
            None => other(w),
        },
        || acceptor(mailboxes),
    )
}

/// An acceptor loop that hands each connection to the next mailbox in turn, waking its
/// worker only when its queue was empty (multi-reactor, io-threads).
pub fn accept_in_turn(ctx: &Ctx, mailboxes: &[Mailbox]) -> Result<(), Error> {
    let mut base = EventLoop::new(ctx.worker(0), Epoll::level()?);
    base.watch(&ctx.listener, LISTENER)?;
    let mut acceptor = Acceptor::new(true);
    let mut next = 0;
    base.run(|_, _listener| loop {
        let target = ctx.worker(next);
        match acceptor.accept_one(target, &ctx.listener) {
            Accepted::Conn(fd) => {
                target.count(Counter::Useful, 1);
                mailboxes[next].post(fd, false);
                next = (next + 1) % mailboxes.len();
            }
            Accepted::Refused => {}
            Accepted::Empty | Accepted::OutOfFds => break,
        }
    })
}
