//! Kernel settings by name (`net.core.somaxconn` is `/proc/sys/net/core/somaxconn`): read,
//! written, compared, and which of them each network namespace keeps its own of.

use std::io;
use std::path::PathBuf;

/// The settings a run may raise that each network namespace has its own copy of (checked on
/// this kernel by `a_private_network_namespace_keeps_its_own_settings`): written inside a
/// namespace a run made, they vanish with it.
pub const PER_NAMESPACE: &[&str] = &[
    "net.ipv4.ip_local_port_range",
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.tcp_max_tw_buckets",
];

/// The settings a run may raise that are the machine's (every namespace shares them): saved
/// before they change and put back after (`raised`).
pub const GLOBAL: &[&str] = &[
    "net.ipv4.tcp_mem",
    "fs.file-max",
    "kernel.pid_max",
    "vm.max_map_count",
    "net.netfilter.nf_conntrack_max",
];

/// The file of a setting; `None` for a name that is not one (only letters, digits, `_`, `-`
/// between dots).
pub fn path(name: &str) -> Option<PathBuf> {
    let ok = !name.is_empty()
        && name
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    ok.then(|| PathBuf::from("/proc/sys").join(name.replace('.', "/")))
}

fn bad_name(name: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("'{name}' is not a kernel setting's name"),
    )
}

/// A setting's value, its numbers separated by single spaces (`32768 60999`).
pub fn read(name: &str) -> io::Result<String> {
    let p = path(name).ok_or_else(|| bad_name(name))?;
    Ok(normal(&std::fs::read_to_string(p)?))
}

/// Writes a setting (root only).
pub fn write(name: &str, value: &str) -> io::Result<()> {
    let p = path(name).ok_or_else(|| bad_name(name))?;
    std::fs::write(p, format!("{}\n", normal(value)))
}

/// Whitespace as single spaces, trimmed.
pub fn normal(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The value that is at least `want` everywhere and never below `now`: number by number the
/// larger, except the port range's first number, where the lower is wider. `None` where `now`
/// already covers `want` (nothing to raise) or the two do not have the same numbers.
pub fn raised(name: &str, now: &str, want: &str) -> Option<String> {
    let nums = |v: &str| {
        v.split_whitespace()
            .map(|x| x.parse::<u64>().ok())
            .collect::<Option<Vec<u64>>>()
    };
    let (n, w) = (nums(now)?, nums(want)?);
    if n.len() != w.len() {
        return None;
    }
    let range = name == "net.ipv4.ip_local_port_range";
    let out: Vec<u64> = n
        .iter()
        .zip(&w)
        .enumerate()
        .map(|(i, (&a, &b))| if range && i == 0 { a.min(b) } else { a.max(b) })
        .collect();
    (out != n).then(|| out.iter().map(u64::to_string).collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raise_never_lowers_and_widens_the_port_range_both_ways() {
        assert_eq!(raised("vm.max_map_count", "65530", "70000").as_deref(), Some("70000"));
        assert_eq!(raised("vm.max_map_count", "65530", "100"), None);
        assert_eq!(
            raised("net.ipv4.tcp_mem", "287901 383868 575802", "1 500000 2"),
            Some("287901 500000 575802".into())
        );
        assert_eq!(
            raised("net.ipv4.ip_local_port_range", "32768 60999", "1024 65535").as_deref(),
            Some("1024 65535")
        );
        assert_eq!(
            raised("net.ipv4.ip_local_port_range", "1024 65535", "32768 60999"),
            None
        );
        assert_eq!(raised("x", "1 2", "3"), None);
        assert_eq!(raised("x", "abc", "3"), None);
    }

    #[test]
    fn only_names_of_settings_are_paths_under_proc_sys() {
        assert_eq!(
            path("net.core.somaxconn"),
            Some(PathBuf::from("/proc/sys/net/core/somaxconn"))
        );
        for bad in ["", "net..core", "../etc/passwd", "net/core", "a.b c", ".x"] {
            assert_eq!(path(bad), None, "{bad}");
        }
        assert_eq!(
            read("vm.max_map_count").unwrap(),
            normal(&std::fs::read_to_string("/proc/sys/vm/max_map_count").unwrap())
        );
    }
}
