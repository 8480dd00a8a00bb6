//! Why `steer_rx` cannot steer loopback ([`SteerError`]): the client's CPUs, `lo`'s receive
//! queues, or the mark a steering run holds. Every one is exit 2 (it needs root, or another
//! run is steering).

use std::path::PathBuf;

/// Why loopback's receive processing could not be steered.
#[derive(Debug, thiserror::Error)]
pub enum SteerError {
    /// The client's CPUs, where it would steer to, are not a CPU list.
    #[error("steer_rx: client CPUs {cpus}: {source}")]
    Cpus {
        cpus: String,
        source: crate::units::BadValue,
    },
    /// `lo`'s receive queues cannot be listed.
    #[error("steer_rx: cannot read {} ({source})", dir.display())]
    Queues { dir: PathBuf, source: std::io::Error },
    /// The kernel has no receive packet steering.
    #[error("steer_rx: this kernel has no receive packet steering ({}/rx-*/rps_cpus)", dir.display())]
    NoRps { dir: PathBuf },
    /// A queue's mask cannot be read.
    #[error("steer_rx: reading {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// A queue's mask cannot be written.
    #[error("steer_rx: writing {} failed ({source}); it is machine-wide and needs root", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// The mark cannot be opened, locked or read.
    #[error("steer_rx: opening {}: {source} (needs root)", mark.display())]
    MarkOpen { mark: PathBuf, source: std::io::Error },
    /// The mark cannot be written.
    #[error("steer_rx: writing {}: {source} (needs root)", mark.display())]
    MarkWrite { mark: PathBuf, source: std::io::Error },
    /// Another run holds the mark: its pid as the mark gives it.
    #[error(
        "steer_rx: another muxlab bench (pid {pid}, marked in {}) is steering loopback; wait for it to end",
        mark.display()
    )]
    Busy { mark: PathBuf, pid: String },
}
