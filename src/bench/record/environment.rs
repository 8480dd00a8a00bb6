//! Where a run's cells ran ([`Environment`]): the machine (or machines), the CPUs, the binary,
//! what was held for the run.

use serde::{Deserialize, Serialize};

use super::costs::UnitCosts;
use crate::remote::ssh::Machine;

/// Where a run's cells ran: the machine (or machines), the CPUs, what was held for the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub cpu_model: String,
    /// What a syscall and a context switch cost on the server's CPU (measured where the server
    /// runs on this machine).
    #[serde(default)]
    pub unit_costs: Option<UnitCosts>,
    #[serde(default)]
    pub cores: usize,
    #[serde(default)]
    pub server_cpus: String,
    /// The CPUs of the targets serving on several threads (`threaded_cpus`; `None`: every
    /// target on `server_cpus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threaded_cpus: Option<String>,
    #[serde(default)]
    pub client_cpus: String,
    #[serde(default)]
    pub client_threads: usize,
    #[serde(default)]
    pub server_addr: String,
    #[serde(default)]
    pub hosts: Option<HostsEnvironment>,
    #[serde(default)]
    pub muxlab_version: String,
    /// The commit the binary was built from, short, with `-dirty` where its tree had changes
    /// not committed (`unknown`: built outside a checkout).
    #[serde(default)]
    pub git_revision: String,
    /// The same in full, and whether the tree was dirty (`None`: results from before builds
    /// recorded it, or a build outside a checkout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_dirty: Option<bool>,
    /// What `--steer-rx` changed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steer_rx: Option<String>,
    /// Whether idle CPUs polled or halted for the run (results before 2026-11-25: halted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_idle: Option<String>,
    /// The scheduler's slice the predictions share the CPUs in (µs), and where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_slice_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_slice_from: Option<String>,
    /// The loopback round trip between the server's and the client's CPUs, measured at the
    /// run's start (`None`: not measured: another host, or one CPU for both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip: Option<super::costs::RoundTrip>,
}

/// The hosts of a run across hosts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostsEnvironment {
    pub server: Option<String>,
    #[serde(default)]
    pub clients: Vec<String>,
    #[serde(default)]
    pub machines: Vec<Machine>,
}

impl Environment {
    /// The unit costs the run measured, or the documented ones.
    pub fn unit_costs(&self) -> UnitCosts {
        self.unit_costs.unwrap_or(UnitCosts::DOCUMENTED)
    }

    /// How many CPUs the targets serving on several threads had (`None`: as every target).
    pub fn threaded_cpu_count(&self) -> Option<usize> {
        let cpus = crate::units::parse_cpus(self.threaded_cpus.as_deref()?).ok()?;
        (!cpus.is_empty()).then_some(cpus.len())
    }

    /// How many CPUs the server had (`None` where the results do not say).
    pub fn server_cpu_count(&self) -> Option<usize> {
        crate::units::parse_cpus(&self.server_cpus)
            .ok()
            .map(|c| c.len())
            .filter(|n| *n > 0)
    }
}
