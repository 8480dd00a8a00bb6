//! The machine a run measured on, and where client and server may run ([`Environment`]).

use serde::{Deserialize, Serialize};

use crate::sys;

/// The machine, and where client and server may run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub kernel: String,
    pub cpu_model: String,
    pub cores: usize,
    pub client_cpus: Option<String>,
    /// The process listening on the target port, when the target is on this machine.
    pub server_pid: Option<i32>,
    pub server_cpus: Option<String>,
}

impl Environment {
    /// This machine, with the server's process when it listens on `target` here.
    pub fn here(target: std::net::SocketAddr) -> Environment {
        let (kernel, cpu_model) = sys::machine::machine();
        let server_pid = sys::procfs::listening_pid(target.port()).filter(|_| target.ip().is_loopback());
        Environment {
            kernel,
            cpu_model,
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            client_cpus: sys::procfs::cpus_allowed(sys::process::pid()),
            server_pid,
            server_cpus: server_pid.and_then(sys::procfs::cpus_allowed),
        }
    }
}
