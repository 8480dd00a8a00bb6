//! `steer_rx`: loopback's receive processing moved to the client's CPUs for a run (RPS on `lo`).
//!
//! On loopback a send also delivers the bytes into the peer's socket, in the sender's softirq:
//! the server's CPU pays for the client's receive path (and the client's for the server's). A
//! NIC delivers on whichever core its interrupt lands on instead. Receive packet steering on
//! `lo`, set to the client's CPUs, moves both directions' receive processing there: the server
//! then pays for its own sends, receives and mechanism only, as it would behind a NIC whose
//! interrupts go to other cores. Each packet costs an inter-processor interrupt more, so
//! absolute costs rise; compare ratios.
//!
//! The setting is machine-wide (root only). The run marks itself in [`MARK`] (its pid and the old
//! masks), sets it, says so, and puts the old masks back when it ends, Ctrl-C, SIGHUP and errors
//! included ([`Steered`]'s drop). The mark is opened (never through a link) and locked
//! (`flock`) before it is read, and the lock is held for the whole run: a second run finds it
//! locked and refuses (each would restore the other's setting), with no gap between the check
//! and the claim. A run killed outright leaves its mark but not its lock; the next run restores
//! the masks it names (its first message also says how to restore them by hand), and only
//! those: a mark can name nothing but `lo`'s `rps_cpus` files, with hex masks.

use std::io::Write;
use std::path::PathBuf;

use crate::bench::record::SteerError;

/// Where `lo`'s receive queues are.
const QUEUES: &str = "/sys/class/net/lo/queues";

/// The kernel's CPU mask for `cpus`: hex, in 32-bit groups separated by commas, highest first.
pub fn rps_mask(cpus: &[usize]) -> String {
    let words = cpus.iter().map(|c| c / 32 + 1).max().unwrap_or(1);
    let mut mask = vec![0u32; words];
    for c in cpus {
        mask[c / 32] |= 1 << (c % 32);
    }
    let mut groups = mask.iter().rev().map(|w| format!("{w:08x}")).collect::<Vec<_>>();
    // The highest group without its leading zeros (the kernel reads either).
    groups[0] = format!("{:x}", mask[words - 1]);
    groups.join(",")
}

/// Loopback's receive queues while steered; their old masks are restored on drop.
pub struct Steered {
    /// The mark, open and locked for the run.
    mark: std::fs::File,
    saved: Vec<(PathBuf, String)>,
    /// The mark is written: from then on this run restores the masks and removes it.
    armed: bool,
    /// What was done, in words (printed at the start, kept in the environment).
    pub said: String,
}

impl Steered {
    /// Steers `lo`'s receive processing to `cpus` (a list such as "1" or "2-3").
    pub fn apply(cpus: &str) -> Result<Steered, SteerError> {
        let list = crate::units::parse_cpus(cpus).map_err(|source| SteerError::Cpus {
            cpus: cpus.to_string(),
            source,
        })?;
        let mask = rps_mask(&list);
        let mut files: Vec<PathBuf> = std::fs::read_dir(QUEUES)
            .map_err(|source| SteerError::Queues {
                dir: QUEUES.into(),
                source,
            })?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rx-")))
            .map(|p| p.join("rps_cpus"))
            .filter(|p| p.exists())
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(SteerError::NoRps { dir: QUEUES.into() });
        }
        let read = |f: &PathBuf| {
            std::fs::read_to_string(f)
                .map(|s| s.trim().to_string())
                .map_err(|source| SteerError::Read {
                    path: f.clone(),
                    source,
                })
        };
        // The masks to put back: a killed run's, from its mark, else the current ones.
        let (mark, left) = claim(&files)?;
        let (saved, stale) = match left {
            Some(left) => (left, true),
            None => (
                files
                    .iter()
                    .map(|f| Ok((f.clone(), read(f)?)))
                    .collect::<Result<_, SteerError>>()?,
                false,
            ),
        };
        let mut steered = Steered {
            mark,
            saved,
            armed: false,
            said: String::new(),
        };
        // Before touching anything: a killed run still finds what to put back.
        steered.mark()?;
        steered.armed = true;
        for f in &files {
            // On failure `steered` drops here, restoring what was changed and removing the mark.
            std::fs::write(f, &mask).map_err(|source| SteerError::Write {
                path: f.clone(),
                source,
            })?;
        }
        let (first, old) = &steered.saved[0];
        steered.said = format!(
            "loopback receive processing steered to CPU {cpus} ({} set to {mask}, was {old}{}; restored when the run ends, \
             or by hand: echo {old} > {})",
            first.display(),
            if stale { " before a run that was killed" } else { "" },
            first.display()
        );
        Ok(steered)
    }

    /// Writes the mark (in the locked file): this process, and the masks to put back.
    fn mark(&mut self) -> Result<(), SteerError> {
        use std::io::{Seek, Write};
        let mut text = format!("{}\n", std::process::id());
        for (f, old) in &self.saved {
            text.push_str(&format!("{}\t{old}\n", f.display()));
        }
        let failed = |source| SteerError::MarkWrite {
            mark: MARK.into(),
            source,
        };
        self.mark.set_len(0).map_err(failed)?;
        self.mark.rewind().map_err(failed)?;
        self.mark.write_all(text.as_bytes()).map_err(failed)?;
        self.mark.sync_data().map_err(failed)
    }
}

/// Where a steering run marks itself: its pid and the masks to restore.
pub const MARK: &str = "/run/muxlab-steer-rx";

/// Files and the masks to write back into them.
type Masks = Vec<(PathBuf, String)>;

/// Opens and locks the mark, and reads what a killed run left in it: the masks to put back
/// (`Some`), of `files` only (`lo`'s receive queues: a mark naming anything else, or a value
/// that is not a mask, is not obeyed). A mark locked by a live run is an error: two runs would
/// each restore the other's setting.
fn claim(files: &[PathBuf]) -> Result<(std::fs::File, Option<Masks>), SteerError> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let failed = |source| SteerError::MarkOpen {
        mark: MARK.into(),
        source,
    };
    let mut mark = loop {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(MARK)
            .map_err(failed)?;
        if !crate::sys::fd::try_lock_exclusive(&f).map_err(failed)? {
            let pid = std::fs::read_to_string(MARK).unwrap_or_default();
            return Err(SteerError::Busy {
                mark: MARK.into(),
                pid: pid.lines().next().unwrap_or("?").trim().to_string(),
            });
        }
        // Locked; but a run that was ending may have removed the file meanwhile: the lock
        // counts only on the file the path still names.
        let same = std::fs::symlink_metadata(MARK)
            .ok()
            .zip(f.metadata().ok())
            .is_some_and(|(path, open)| path.ino() == open.ino() && path.dev() == open.dev());
        if same {
            break f;
        }
    };
    let mut text = String::new();
    mark.read_to_string(&mut text).map_err(failed)?;
    let mask = |v: &str| !v.is_empty() && v.len() <= 1024 && v.bytes().all(|b| b.is_ascii_hexdigit() || b == b',');
    let mut saved = Vec::new();
    for line in text.lines().skip(1) {
        match line.split_once('\t') {
            Some((f, old)) if files.iter().any(|k| k.as_os_str() == f) && mask(old) => {
                saved.push((PathBuf::from(f), old.to_string()))
            }
            _ => {
                let _ = writeln!(
                    std::io::stderr(),
                    "muxlab: {MARK}: ignoring '{line}' (not a mask of {QUEUES}/rx-*/rps_cpus)"
                );
            }
        }
    }
    Ok((mark, (!saved.is_empty()).then_some(saved)))
}

impl Drop for Steered {
    fn drop(&mut self) {
        if !self.armed {
            // Nothing was changed; a mark this run made, still empty, goes.
            if self.mark.metadata().is_ok_and(|m| m.len() == 0) {
                let _ = std::fs::remove_file(MARK);
            }
            return;
        }
        let mut restored = true;
        for (f, old) in &self.saved {
            if let Err(e) = std::fs::write(f, old) {
                let _ = writeln!(
                    std::io::stderr(),
                    "muxlab: could not restore {} to {old}: {e}",
                    f.display()
                );
                restored = false;
            }
        }
        // Kept when something could not be restored: the next run puts it back. Removed while
        // still locked (the lock goes with the file when `mark` closes).
        if restored {
            let _ = std::fs::remove_file(MARK);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::bench::record::scenario::{parse, ScenarioFault, Unsteerable};
    use crate::bench::steer::rps_mask;

    #[test]
    fn cpu_masks_are_hex_in_32_bit_groups() {
        assert_eq!(rps_mask(&[1]), "2");
        assert_eq!(rps_mask(&[0, 1]), "3");
        assert_eq!(rps_mask(&[2, 3]), "c");
        assert_eq!(rps_mask(&[33]), "2,00000000");
        assert_eq!(rps_mask(&[0, 32]), "1,00000001");
    }

    /// Steering is for this machine's loopback: a scenario with hosts is refused, naming the field.
    #[test]
    fn steer_rx_is_refused_for_servers_on_other_hosts() {
        let text =
            "name = \"x\"\ndescription = \"d\"\nsteer_rx = true\nserver_host = \"h1\"\n[[experiment]]\nname = \"e\"\n\
                    proto = \"http\"\nmodels = [\"epoll\"]\nconnections = [10]\nduration = \"1s\"\n";
        let e = parse(text, "t").unwrap_err();
        assert!(
            matches!(e.fault(), Some(ScenarioFault::Steer(Unsteerable::Hosts))),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("field 'steer_rx'") && e.contains("drop server_host"), "{e}");
        assert!(parse(&text.replace("server_host = \"h1\"\n", ""), "t").is_ok());
    }
}
