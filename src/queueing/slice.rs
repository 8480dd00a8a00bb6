//! The slice the kernel shares a CPU in ([`Sharing::Slices`](super::Sharing::Slices)): this
//! machine's, where the kernel exposes it, else its default for the online CPUs.

use std::time::Duration;

/// The kernel's base slice, and where it came from: `/sys/kernel/debug/sched/base_slice_ns`
/// where the kernel exposes it, else its default computed as the kernel does (0.75 ms ×
/// (1 + log2 of the online CPUs, at most 8)).
pub fn base_slice() -> (Duration, String) {
    match crate::sys::machine::base_slice_ns() {
        Some(ns) => (
            Duration::from_nanos(ns),
            "the kernel's base_slice_ns (debugfs)".to_string(),
        ),
        None => {
            let cpus = crate::sys::machine::online_cpus().unwrap_or(1);
            (
                default_slice(cpus),
                format!(
                    "0.75 ms × (1 + log2 {} CPUs), the kernel's default (not exposed here)",
                    cpus.min(8)
                ),
            )
        }
    }
}

/// The kernel's default base slice on a machine with `cpus` online CPUs: 0.75 ms scaled by
/// `1 + ilog2(min(cpus, 8))` (`sysctl_sched_base_slice`, `SCHED_TUNABLESCALING_LOG`).
pub fn default_slice(cpus: usize) -> Duration {
    let factor = 1 + cpus.clamp(1, 8).ilog2();
    Duration::from_micros(750) * factor
}
