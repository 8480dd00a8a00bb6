//! What `muxlab serve` was asked to do.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

use crate::proto::Proto;
use crate::units::{format_duration, parse_duration};

/// Everything a model needs to know; built by the CLI, validated by [`super::serve`].
#[derive(Debug, Clone)]
pub struct Config {
    pub proto: Proto,
    pub addr: SocketAddr,
    /// Worker threads or processes (models with workers).
    pub workers: usize,
    pub backlog: i32,
    /// Most connections open at once; `None`: the model's default.
    pub max_conns: Option<usize>,
    /// Close a connection silent for this long; `None`: never.
    pub idle_timeout: Option<Duration>,
    /// Extra work done per request.
    pub work: Work,
    /// epoll trigger mode (`epoll` model).
    pub trigger: Trigger,
    /// Accept guard (`procs-accept` model).
    pub accept: AcceptGuard,
    /// Lower RLIMIT_NOFILE to this (to reproduce EMFILE).
    pub nofile: Option<u64>,
    /// Pin the server to these CPUs.
    pub cpus: Option<Vec<usize>>,
    /// Fault injection: abort once this many requests were served (tests of the bench harness).
    pub crash_after_requests: Option<u64>,
}

impl Config {
    /// Defaults for `proto` on `addr`, as the CLI would build them.
    pub fn new(proto: Proto, addr: SocketAddr) -> Self {
        Config {
            proto,
            addr,
            workers: 1,
            backlog: 1024,
            max_conns: None,
            idle_timeout: Some(Duration::from_secs(60)),
            work: Work::None,
            trigger: Trigger::Level,
            accept: AcceptGuard::Exclusive,
            nofile: None,
            cpus: None,
            crash_after_requests: None,
        }
    }
}

/// Work done per request on whichever thread handles it (`--work`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Work {
    #[default]
    None,
    /// Use this much CPU time (spinning on the thread's CPU clock).
    Cpu(Duration),
    /// Block the thread this long.
    Sleep(Duration),
}

impl Work {
    /// Does the work for `requests` requests.
    #[inline]
    pub fn apply(&self, requests: u64) {
        if requests == 0 {
            return;
        }
        match *self {
            Work::None => {}
            Work::Cpu(d) => {
                // CPU time, not wall time: a thread preempted while spinning must not be
                // credited with time another thread used.
                let until = crate::sys::process::thread_cpu_time() + d * requests as u32;
                while crate::sys::process::thread_cpu_time() < until {
                    std::hint::spin_loop();
                }
            }
            Work::Sleep(d) => std::thread::sleep(d * requests as u32),
        }
    }
}

impl FromStr for Work {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            None if s == "none" => Ok(Work::None),
            Some(("cpu", d)) => Ok(Work::Cpu(parse_duration(d)?)),
            Some(("sleep", d)) => Ok(Work::Sleep(parse_duration(d)?)),
            _ => Err(format!("'{s}' is not a work spec: write cpu:200us, sleep:1ms or none")),
        }
    }
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Work::None => f.write_str("none"),
            Work::Cpu(d) => write!(f, "cpu:{}", format_duration(*d)),
            Work::Sleep(d) => write!(f, "sleep:{}", format_duration(*d)),
        }
    }
}

/// epoll's notification mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Trigger {
    /// Level-triggered: reported while ready; read once per event.
    Level,
    /// Edge-triggered: reported on change; accept and read until EAGAIN.
    Edge,
}

/// How worker processes sharing one listener avoid (or suffer) the thundering herd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AcceptGuard {
    /// No guard: every worker is woken for each connection.
    All,
    /// EPOLLEXCLUSIVE: the kernel wakes one waiter.
    Exclusive,
    /// An accept mutex in shared memory (nginx's accept_mutex).
    Mutex,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_specs() {
        assert_eq!(
            "cpu:200us".parse::<Work>().unwrap(),
            Work::Cpu(Duration::from_micros(200))
        );
        assert_eq!(
            "sleep:1ms".parse::<Work>().unwrap(),
            Work::Sleep(Duration::from_millis(1))
        );
        assert_eq!("none".parse::<Work>().unwrap(), Work::None);
        assert!("gpu:1s".parse::<Work>().is_err());
        assert_eq!(Work::Cpu(Duration::from_micros(200)).to_string(), "cpu:200us");
    }
}
