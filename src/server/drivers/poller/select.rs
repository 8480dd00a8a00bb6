//! select(): two bit sets rebuilt from the watch table on every call; the kernel and the loop
//! both scan every watched descriptor. Descriptors at or above FD_SETSIZE (1024) cannot be
//! watched: `register` refuses them and [`Poller::fd_limit`] tells the acceptor to refuse them
//! first.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

use crate::server::drivers::poller::{Interest, Poller};
use crate::sys::select::{select, FdSet, FD_SETSIZE};

/// The select backend.
#[derive(Default)]
pub struct Select {
    /// Token and interest, by descriptor number.
    watched: Vec<Option<(u64, Interest)>>,
    /// Descriptors watched.
    count: usize,
}

impl Select {
    pub fn new() -> Select {
        Select::default()
    }
}

impl Poller for Select {
    fn register(&mut self, fd: BorrowedFd<'_>, token: u64, interest: Interest) -> io::Result<()> {
        let i = fd.as_raw_fd() as usize;
        if i >= FD_SETSIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("descriptor {i} is past select's FD_SETSIZE ({FD_SETSIZE})"),
            ));
        }
        if self.watched.len() <= i {
            self.watched.resize(i + 1, None);
        }
        if self.watched[i].replace((token, interest)).is_none() {
            self.count += 1;
        }
        Ok(())
    }

    fn modify(&mut self, fd: BorrowedFd<'_>, token: u64, interest: Interest) -> io::Result<()> {
        match self.watched.get_mut(fd.as_raw_fd() as usize) {
            Some(Some(w)) => {
                *w = (token, interest);
                Ok(())
            }
            _ => Err(io::Error::from(io::ErrorKind::NotFound)),
        }
    }

    fn deregister(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        match self.watched.get_mut(fd.as_raw_fd() as usize).and_then(Option::take) {
            Some(_) => {
                self.count -= 1;
                Ok(())
            }
            None => Err(io::Error::from(io::ErrorKind::NotFound)),
        }
    }

    fn wait(&mut self, ready: &mut Vec<u64>, timeout: Duration) -> io::Result<usize> {
        let (mut rd, mut wr) = (FdSet::new(), FdSet::new());
        for (fd, w) in self.watched.iter().enumerate() {
            if let Some((_, interest)) = w {
                if interest.read {
                    rd.insert(fd as i32);
                }
                if interest.write {
                    wr.insert(fd as i32);
                }
            }
        }
        ready.clear();
        if select(&mut rd, &mut wr, timeout)? > 0 {
            for (fd, w) in self.watched.iter().enumerate() {
                if let Some((token, _)) = w {
                    if rd.contains(fd as i32) || wr.contains(fd as i32) {
                        ready.push(*token);
                    }
                }
            }
        }
        Ok(self.count)
    }

    fn fd_limit(&self) -> Option<usize> {
        Some(FD_SETSIZE)
    }
}
