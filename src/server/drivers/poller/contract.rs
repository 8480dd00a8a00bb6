//! The contract every backend keeps: what a registration waits for ([`Interest`]) and the
//! small trait an event loop drives ([`Poller`]). A descriptor is registered at most once,
//! under a token of the caller's choosing; `wait` reports the tokens of ready descriptors and
//! how many descriptors it examined to find them.

use std::io;
use std::os::fd::BorrowedFd;
use std::time::Duration;

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
