//! What the controlling muxlab says on the far side's stdin (heartbeats, `stop`, questions),
//! read without waiting past a deadline, so that silence (a lost network) is noticed too.
//! The guard and the sampler listen this way.

use std::time::Duration;

use crate::sys;

/// What a wait found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// Bytes arrived (in [`Listener::pending`]).
    Something,
    /// Nothing within the wait.
    Nothing,
    /// stdin is closed: the session ended.
    Closed,
}

/// stdin, read in pieces.
#[derive(Debug, Default)]
pub struct Listener {
    /// What arrived and was not taken yet.
    pub pending: Vec<u8>,
    closed: bool,
}

impl Listener {
    /// Waits up to `wait` for stdin to say something.
    pub fn wait(&mut self, wait: Duration) -> Heard {
        if self.closed {
            std::thread::sleep(wait);
            return Heard::Closed;
        }
        let stdin = std::io::stdin();
        let mut fds = [sys::poll::entry(std::os::fd::AsRawFd::as_raw_fd(&stdin), sys::poll::IN)];
        if sys::poll::poll(&mut fds, wait.as_millis() as i32).unwrap_or(0) == 0 {
            return Heard::Nothing;
        }
        let mut buf = [0u8; 4096];
        match sys::fd::read(&stdin, &mut buf) {
            Ok(0) | Err(_) => {
                self.closed = true;
                Heard::Closed
            }
            Ok(n) => {
                self.pending.extend_from_slice(&buf[..n]);
                Heard::Something
            }
        }
    }

    /// Takes the next whole line out of what arrived.
    pub fn line(&mut self) -> Option<String> {
        let end = self.pending.iter().position(|&b| b == b'\n')?;
        let line: Vec<u8> = self.pending.drain(..=end).collect();
        Some(String::from_utf8_lossy(&line).trim().to_string())
    }
}
