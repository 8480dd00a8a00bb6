//! Keeping idle CPUs out of their idle states while a measurement runs (PM QoS).
//!
//! A task that wakes another on an idle CPU sends it an interrupt; a halted virtual CPU wakes
//! only through the hypervisor, and the waker pays for that exit in its own CPU time. On
//! loopback every response wakes the client, so a server pays for the client's idle CPU: on the
//! dev machine (a nested VM) a write that wakes a thread on a halted CPU cost its writer 13.5 µs
//! against 1.1 µs when the reader was busy (`cargo run --release --example wake_cost`). An idle
//! CPU that polls instead of halting needs no interrupt (the wake-up is a flag it sees): 1.5 µs.
//! Writing 0 to `/dev/cpu_dma_latency` asks the kernel for that for as long as the file stays
//! open (cyclictest does the same), and the request ends with the file, however the process
//! ends. It takes effect only where the CPUs have a polling idle state (a cpuidle driver with a
//! `POLL` state): [`PollingIdle::hold`] checks that first.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};

/// The PM QoS request of this process: idle CPUs poll while it is held.
#[derive(Debug)]
pub struct PollingIdle {
    /// Open for the request's life: closing it ends the request.
    _file: File,
}

impl PollingIdle {
    /// Asks for a wake-up latency of 0 (idle CPUs poll), held until the value is dropped.
    /// Fails where the CPUs have no polling idle state, or the file is missing or not writable
    /// (not root).
    pub fn hold() -> io::Result<PollingIdle> {
        if !has_polling_state() {
            let driver = std::fs::read_to_string("/sys/devices/system/cpu/cpuidle/current_driver").unwrap_or_default();
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "no polling idle state (cpuidle driver '{}'): idle CPUs halt whatever is asked",
                    driver.trim()
                ),
            ));
        }
        let mut file = OpenOptions::new().write(true).open("/dev/cpu_dma_latency")?;
        file.write_all(&0i32.to_ne_bytes())?;
        Ok(PollingIdle { _file: file })
    }
}

/// Whether the CPUs have a polling idle state: a cpuidle driver whose first state is `POLL`
/// (a host fact: [`super::host::Fact::PollingIdle`]).
pub fn has_polling_state() -> bool {
    let driver = std::fs::read_to_string("/sys/devices/system/cpu/cpuidle/current_driver").unwrap_or_default();
    let state0 = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpuidle/state0/name").unwrap_or_default();
    !(driver.trim().is_empty() || driver.trim() == "none" || state0.trim() != "POLL")
}
