//! The poller: how an event loop waits for many descriptors at once. One small trait, one
//! backend per mechanism (`select`, `poll`, `epoll`), each with the same functions, the way
//! redis keeps `ae_select.c`, `ae_epoll.c`... beside one `ae.c`. The event loop (`evloop.rs`)
//! drives connections the same way over any of them; a model picks its backend.
//!
//! Contract: a descriptor is registered at most once, under a token of the caller's choosing;
//! `wait` reports the tokens of ready descriptors and how many descriptors it examined to find
//! them (all watched ones for select and poll, only the ready ones for epoll). Backends are
//! level-triggered unless [`Poller::edge`] says otherwise.

use std::io;
use std::os::fd::BorrowedFd;
use std::time::Duration;

pub(crate) mod epoll;
pub(crate) mod poll;
pub(crate) mod select;

pub use self::epoll::Epoll;
pub use self::poll::Poll;
pub use self::select::Select;

/// What a registration waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interest {
    pub read: bool,
    pub write: bool,
}

impl Interest {
    pub const READ: Interest = Interest {
        read: true,
        write: false,
    };
    pub const WRITE: Interest = Interest {
        read: false,
        write: true,
    };
    pub const BOTH: Interest = Interest {
        read: true,
        write: true,
    };
    /// Watched for nothing: only an error or a hang-up is reported (epoll and poll; select
    /// reports nothing for it).
    pub const NONE: Interest = Interest {
        read: false,
        write: false,
    };
}

/// One readiness mechanism.
pub trait Poller {
    /// Starts watching `fd` for `interest`; its events carry `token`.
    fn register(&mut self, fd: BorrowedFd<'_>, token: u64, interest: Interest) -> io::Result<()>;

    /// Changes what a registered `fd` is watched for.
    fn modify(&mut self, fd: BorrowedFd<'_>, token: u64, interest: Interest) -> io::Result<()>;

    /// Stops watching `fd`, which stays open.
    fn deregister(&mut self, fd: BorrowedFd<'_>) -> io::Result<()>;

    /// `fd` is about to be closed: forget it. (epoll needs nothing: close removes it.)
    fn closing(&mut self, fd: BorrowedFd<'_>) {
        let _ = self.deregister(fd);
    }

    /// Waits up to `timeout` for readiness; replaces `ready` with the ready tokens and returns
    /// how many descriptors were examined. EINTR: nothing ready.
    fn wait(&mut self, ready: &mut Vec<u64>, timeout: Duration) -> io::Result<usize>;

    /// Descriptors at or above this number cannot be watched (select's FD_SETSIZE).
    fn fd_limit(&self) -> Option<usize> {
        None
    }

    /// Edge-triggered: readiness is reported once per change, so a connection is registered
    /// for both directions once and must be read and accepted until EAGAIN.
    fn edge(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod server_poller {
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;

    use crate::server::config::Trigger;
    use std::time::Duration;

    use crate::server::poller::*;

    /// The contract every backend keeps: a token is reported once its descriptor is ready for
    /// what it is watched for, not before, and not after it is deregistered.
    fn contract(p: &mut impl Poller) {
        let (a, mut b) = UnixStream::pair().unwrap();
        let (c, _d) = UnixStream::pair().unwrap();
        let mut ready = Vec::new();
        p.register(a.as_fd(), 7, Interest::READ).unwrap();
        p.register(c.as_fd(), 9, Interest::READ).unwrap();
        p.wait(&mut ready, Duration::from_millis(10)).unwrap();
        assert!(ready.is_empty(), "nothing written yet: {ready:?}");
        b.write_all(b"x").unwrap();
        let examined = p.wait(&mut ready, Duration::from_millis(1000)).unwrap();
        assert_eq!(ready, vec![7]);
        assert!(examined >= 1);
        // A socket is writable at once.
        p.modify(c.as_fd(), 9, Interest::WRITE).unwrap();
        p.deregister(a.as_fd()).unwrap();
        p.wait(&mut ready, Duration::from_millis(1000)).unwrap();
        assert_eq!(ready, vec![9]);
        p.deregister(c.as_fd()).unwrap();
        p.wait(&mut ready, Duration::from_millis(10)).unwrap();
        assert!(ready.is_empty());
    }

    #[test]
    fn select_keeps_the_contract() {
        contract(&mut Select::new());
    }

    #[test]
    fn poll_keeps_the_contract() {
        contract(&mut Poll::new());
    }

    #[test]
    fn epoll_keeps_the_contract() {
        contract(&mut Epoll::new(Trigger::Level).unwrap());
    }

    #[test]
    fn select_refuses_what_it_cannot_watch() {
        let p = Select::new();
        assert_eq!(p.fd_limit(), Some(crate::sys::select::FD_SETSIZE));
        assert!(!p.edge());
        assert!(Epoll::new(Trigger::Edge).unwrap().edge());
    }
}
