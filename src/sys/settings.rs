//! The machine's settings that bound how many connections it holds, read and never written:
//! the descriptor limits, the ephemeral ports, TCP memory, threads and mappings, memory.
//! [`Settings::read`] takes them all at once; a figure /proc does not give is `None`.

use std::fs;

/// The settings that bound a count of connections, as read now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Settings {
    /// RLIMIT_NOFILE's hard limit: the descriptors one process may open.
    pub nofile_hard: Option<u64>,
    /// `fs.file-max`, and the files open on the machine now (`fs.file-nr`'s first figure).
    pub file_max: Option<u64>,
    pub files_open: Option<u64>,
    /// Ports of `net.ipv4.ip_local_port_range`: one source address's connections to one
    /// server address and port.
    pub ports: Option<u64>,
    /// `net.ipv4.tcp_mem`, in pages: below the first no limit, past the second pressure,
    /// past the third allocations fail.
    pub tcp_mem: Option<[u64; 3]>,
    /// `kernel.pid_max`: processes and threads, the machine's.
    pub pid_max: Option<u64>,
    /// `vm.max_map_count`: mappings of one process.
    pub max_map_count: Option<u64>,
    /// `MemAvailable` of /proc/meminfo, in bytes.
    pub mem_available: Option<u64>,
    /// `net.core.somaxconn`: the longest listen backlog the kernel grants.
    pub somaxconn: Option<u64>,
}

fn number(path: &str) -> Option<u64> {
    fs::read_to_string(path).ok()?.split_whitespace().next()?.parse().ok()
}

impl Settings {
    /// These settings less those bench raises for a run (`vm.max_map_count`,
    /// `kernel.pid_max`): what bounds a design whatever is raised.
    pub fn unraisable(&self) -> Settings {
        Settings {
            max_map_count: None,
            pid_max: None,
            ..*self
        }
    }

    /// Reads every setting now.
    pub fn read() -> Settings {
        let tcp_mem = fs::read_to_string("/proc/sys/net/ipv4/tcp_mem").ok().and_then(|t| {
            let v: Vec<u64> = t.split_whitespace().filter_map(|x| x.parse().ok()).collect();
            (v.len() == 3).then(|| [v[0], v[1], v[2]])
        });
        let mem_available = fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .map(|kib| kib * 1024)
        });
        Settings {
            nofile_hard: super::rlimit::nofile().ok().map(|(_, hard)| hard),
            file_max: number("/proc/sys/fs/file-max"),
            files_open: number("/proc/sys/fs/file-nr"),
            ports: super::machine::ephemeral_ports().map(|p| p as u64),
            tcp_mem,
            pid_max: number("/proc/sys/kernel/pid_max"),
            max_map_count: number("/proc/sys/vm/max_map_count"),
            mem_available,
            somaxconn: number("/proc/sys/net/core/somaxconn"),
        }
    }
}

#[cfg(test)]
impl Settings {
    /// This machine's settings as read for issue 80 (what the tests of the checks reason from).
    pub(crate) fn issue_80() -> Settings {
        Settings {
            nofile_hard: Some(20_000),
            file_max: Some(2_466_177),
            files_open: Some(304),
            ports: Some(28_232),
            tcp_mem: Some([287_901, 383_868, 575_802]),
            pid_max: Some(32_768),
            max_map_count: Some(65_530),
            mem_available: Some(22 << 30),
            somaxconn: Some(4096),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This kernel gives every figure, and they are the ones the files say.
    #[test]
    fn every_setting_is_read_from_this_machine() {
        let s = Settings::read();
        assert_eq!(s.max_map_count, number("/proc/sys/vm/max_map_count"));
        assert!(
            s.max_map_count.is_some() && s.pid_max.is_some() && s.file_max.is_some(),
            "{s:?}"
        );
        let [low, pressure, high] = s.tcp_mem.expect("tcp_mem");
        assert!(low <= pressure && pressure <= high, "{s:?}");
        assert!(s.ports.unwrap() > 0 && s.mem_available.unwrap() > 0, "{s:?}");
        assert_eq!(s.nofile_hard, super::super::rlimit::nofile().ok().map(|(_, h)| h));
    }
}
