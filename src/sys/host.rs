//! Host facts: what a machine of our kind may or may not have, that no package install changes
//! (the hypervisor's cpuidle driver, a PMU, the kernel's features and debug files, the cgroup
//! controllers it mounts, the CPUs it gives this process). The list is closed: a test whose
//! subject depends on one of these reads it here and checks the branch this host has, never
//! skips; anything `.ci/run` can install (curl, nginx, chromium, Python packages, sshd) is
//! never a host fact, and a test that lacks it skips (a failure under `MUXLAB_REQUIRE_ALL`).

use std::path::Path;

/// One thing about the host that decides which branch of a behaviour can be seen here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    /// Idle CPUs have a polling state (a cpuidle driver whose state0 is `POLL`), so
    /// `/dev/cpu_dma_latency` can keep them out of halt ([`super::cpuidle`]).
    PollingIdle,
    /// A core PMU (`/sys/bus/event_source/devices/cpu`): hardware counters.
    Pmu,
    /// The scheduler's base slice in debugfs (`/sys/kernel/debug/sched/base_slice_ns`).
    SchedDebugfs,
    /// A cgroup v1 `cpuacct` hierarchy in which this user can make a group.
    CgroupCpuacct,
    /// io_uring with what the `uring` model's ring needs (buffer rings, Linux 5.19+).
    IoUring,
    /// io_uring's min-wait (Linux 6.12+): a wait for a batch.
    IoUringMinWait,
    /// At least two CPUs in this process's affinity (a server and a client apart).
    TwoCpus,
    /// Receive packet steering on loopback (`rps_cpus`, CONFIG_RPS), writable by this user.
    Rps,
}

/// Every host fact, in the order a run's summary lists them.
pub const HOST_FACTS: [Fact; 8] = [
    Fact::PollingIdle,
    Fact::Pmu,
    Fact::SchedDebugfs,
    Fact::CgroupCpuacct,
    Fact::IoUring,
    Fact::IoUringMinWait,
    Fact::TwoCpus,
    Fact::Rps,
];

/// What the host says of one fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub fact: Fact,
    /// The host has it.
    pub present: bool,
    /// What was read, in words (the driver's name, the error, the count).
    pub detail: String,
}

/// Where loopback's receive steering is set.
pub const RPS_CPUS: &str = "/sys/class/net/lo/queues/rx-0/rps_cpus";

impl Fact {
    pub fn name(self) -> &'static str {
        match self {
            Fact::PollingIdle => "polling idle state",
            Fact::Pmu => "PMU",
            Fact::SchedDebugfs => "the scheduler's base slice in debugfs",
            Fact::CgroupCpuacct => "cgroup v1 cpuacct",
            Fact::IoUring => "io_uring",
            Fact::IoUringMinWait => "io_uring min-wait (Linux 6.12+)",
            Fact::TwoCpus => "two CPUs",
            Fact::Rps => "loopback RPS",
        }
    }

    /// Reads the fact off this host now.
    pub fn read(self) -> Reading {
        let (present, detail) = match self {
            Fact::PollingIdle => {
                let driver = std::fs::read_to_string("/sys/devices/system/cpu/cpuidle/current_driver")
                    .map(|d| d.trim().to_string())
                    .unwrap_or_default();
                let polls = super::cpuidle::has_polling_state();
                (
                    polls,
                    format!("cpuidle driver '{}'", if driver.is_empty() { "none" } else { &driver }),
                )
            }
            Fact::Pmu => exists("/sys/bus/event_source/devices/cpu"),
            Fact::SchedDebugfs => exists("/sys/kernel/debug/sched/base_slice_ns"),
            Fact::CgroupCpuacct => match super::cgroup::CpuGroup::create() {
                Ok(_) => (true, "a group can be made".into()),
                Err(e) => (false, e.to_string()),
            },
            Fact::IoUring => match super::uring::Ring::new(8, 4, 64) {
                Ok(_) => (true, "a ring with buffer rings".into()),
                Err(e) => (false, e.to_string()),
            },
            Fact::IoUringMinWait => match super::uring::Ring::new(8, 4, 64) {
                Ok(r) if r.batches() => (true, "the ring waits for batches".into()),
                Ok(_) => (false, "the ring waits for one completion".into()),
                Err(e) => (false, format!("no ring: {e}")),
            },
            Fact::TwoCpus => {
                let n = super::affinity::get().map(|c| c.len()).unwrap_or(0);
                (n >= 2, format!("{n} CPU(s) in this process's affinity"))
            }
            Fact::Rps => match std::fs::OpenOptions::new().write(true).open(RPS_CPUS) {
                Ok(_) => (true, format!("{RPS_CPUS} is writable")),
                Err(e) => (false, format!("{RPS_CPUS}: {e}")),
            },
        };
        Reading {
            fact: self,
            present,
            detail,
        }
    }
}

fn exists(path: &str) -> (bool, String) {
    match Path::new(path).exists() {
        true => (true, format!("{path} exists")),
        false => (false, format!("no {path}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fact_reads_with_its_name_and_a_detail() {
        for f in HOST_FACTS {
            let r = f.read();
            assert_eq!(r.fact, f);
            assert!(!f.name().is_empty() && !r.detail.is_empty(), "{r:?}");
        }
        // Two readings of a fact that does not change agree.
        assert_eq!(Fact::TwoCpus.read(), Fact::TwoCpus.read());
    }
}
