//! poll(): one array of `pollfd` kept between calls; the kernel scans all of it on every call
//! and the loop walks all of it for `revents`. No FD_SETSIZE limit, still O(watched) per wake-up.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

use crate::server::drivers::poller::{Interest, Poller};
use crate::sys::poll::{entry, ppoll, PollFd, IN, OUT};

/// The poll backend.
#[derive(Default)]
pub struct Poll {
    /// The array handed to poll().
    fds: Vec<PollFd>,
    /// The token of each entry of `fds`.
    tokens: Vec<u64>,
    /// Index in `fds`, by descriptor number.
    index: Vec<Option<usize>>,
}

impl Poll {
    pub fn new() -> Poll {
        Poll::default()
    }

    fn slot(&self, fd: BorrowedFd<'_>) -> io::Result<usize> {
        self.index
            .get(fd.as_raw_fd() as usize)
            .copied()
            .flatten()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
}

fn events(interest: Interest) -> i16 {
    (if interest.read { IN } else { 0 }) | (if interest.write { OUT } else { 0 })
}

impl Poller for Poll {
    fn register(&mut self, fd: BorrowedFd<'_>, token: u64, interest: Interest) -> io::Result<()> {
        let raw = fd.as_raw_fd();
        if self.slot(fd).is_ok() {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        if self.index.len() <= raw as usize {
            self.index.resize(raw as usize + 1, None);
        }
        self.index[raw as usize] = Some(self.fds.len());
        self.fds.push(entry(raw, events(interest)));
        self.tokens.push(token);
        Ok(())
    }

    fn modify(&mut self, fd: BorrowedFd<'_>, token: u64, interest: Interest) -> io::Result<()> {
        let i = self.slot(fd)?;
        self.fds[i].events = events(interest);
        self.tokens[i] = token;
        Ok(())
    }

    fn deregister(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        let i = self.slot(fd)?;
        self.index[fd.as_raw_fd() as usize] = None;
        self.fds.swap_remove(i);
        self.tokens.swap_remove(i);
        if let Some(moved) = self.fds.get(i) {
            self.index[moved.fd as usize] = Some(i);
        }
        Ok(())
    }

    fn wait(&mut self, ready: &mut Vec<u64>, timeout: Duration) -> io::Result<usize> {
        ready.clear();
        if ppoll(&mut self.fds, timeout)? > 0 {
            for (p, token) in self.fds.iter().zip(&self.tokens) {
                if p.revents != 0 {
                    ready.push(*token);
                }
            }
        }
        Ok(self.fds.len())
    }
}
