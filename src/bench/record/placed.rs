//! Where a cell's target ran ([`Placed`]): the server's CPUs and the client's. Two targets are
//! compared only where they ran placed alike (a design on two CPUs against one on one says as
//! much about the CPUs as about the designs).

use serde::{Deserialize, Serialize};

/// Where a target ran: the CPUs of its server and of its client, as lists (`0`, `0-1`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Placed {
    pub server_cpus: String,
    pub client_cpus: String,
}

impl Placed {
    /// In words: "server on CPU 0, client on CPU 1".
    pub fn said(&self) -> String {
        format!(
            "server on {}, client on {}",
            cpus(&self.server_cpus),
            cpus(&self.client_cpus)
        )
    }

    /// The server's part in words: "server on CPUs 0-1".
    pub fn server_said(&self) -> String {
        format!("server on {}", cpus(&self.server_cpus))
    }
}

/// "CPU 0", "CPUs 0-1".
fn cpus(list: &str) -> String {
    let one = crate::units::parse_cpus(list).is_ok_and(|c| c.len() == 1);
    match one {
        true => format!("CPU {list}"),
        false => format!("CPUs {list}"),
    }
}
