//! What stops a design at its ceiling of connections on this machine ([`Bound`]), in words that
//! name the setting: the bottom of the server's limits (the error type says it; `ceiling`
//! computes it).

/// Bytes of memory one held, idle socket costs: the kernel's and an event loop's own state
/// together, rounded up. Measured (issue 80's note): holding 300,000 connections from
/// `load` on this machine (600,000 sockets), the slab grew from 0.40 to 3.65 GB, 5.4 KiB a
/// socket; `epoll --procs 16` was resident in 0.17 GB (under 1 KiB a connection). tokio's
/// group took 1.75 GB (5.8 KiB a connection): a runtime's task and buffers are more.
pub const BYTES_PER_CONNECTION: u64 = 6 * 1024;

/// What stops a design at its ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Each of `processes` may open `per_process` descriptors for connections (the hard
    /// RLIMIT_NOFILE, `hard`, less what a process keeps for itself).
    Descriptors {
        processes: u64,
        per_process: u64,
        hard: u64,
    },
    /// A thread (or green thread) per connection takes `per_connection` mappings of
    /// `vm.max_map_count`.
    Mappings { max_map_count: u64, per_connection: u64 },
    /// A thread or process per connection, of `kernel.pid_max`.
    Pids { pid_max: u64 },
    /// Select's bit sets: descriptors under 1,024.
    FdSetSize,
    /// `per_connection` bytes each ([`BYTES_PER_CONNECTION`], and a task's for a design with a
    /// task per connection: `ceiling::task_bytes`), of the memory available now.
    Memory { available: u64, per_connection: u64 },
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::units::thousands;
        match *self {
            Bound::Descriptors {
                processes,
                per_process,
                hard,
            } => write!(
                f,
                "descriptors: {} process{} of {} each (the hard RLIMIT_NOFILE is {}, which only more processes get past)",
                thousands(processes),
                if processes == 1 { "" } else { "es" },
                thousands(per_process),
                thousands(hard)
            ),
            Bound::Mappings {
                max_map_count,
                per_connection,
            } => write!(
                f,
                "vm.max_map_count is {}, and each connection's thread takes {per_connection} mappings",
                thousands(max_map_count)
            ),
            Bound::Pids { pid_max } => write!(
                f,
                "kernel.pid_max is {}: a process or thread per connection, the machine's included",
                thousands(pid_max)
            ),
            Bound::FdSetSize => f.write_str("select's bit sets hold descriptors under 1,024 (FD_SETSIZE)"),
            Bound::Memory {
                available,
                per_connection,
            } => write!(
                f,
                "memory: {} MiB available now, about {} KiB per held connection",
                available / (1 << 20),
                per_connection / 1024
            ),
        }
    }
}
