//! What /proc and /sys say of the machine rather than of a process: the kernel and CPU model,
//! the online CPUs and their times (tasks, softirq, steal), TCP memory and sockets, the
//! ephemeral port range, the scheduler's base slice.

use std::fs;

/// Kernel release and CPU model name.
pub fn machine() -> (String, String) {
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown".into());
    (kernel, cpu)
}

/// The kernel's memory a run of many connections grows: TCP's buffers and the slab.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelMem {
    /// [`tcp_mem_pages`].
    pub tcp_pages: Option<u64>,
    /// [`slab_kib`].
    pub slab_kib: Option<u64>,
}

impl KernelMem {
    pub fn now() -> KernelMem {
        KernelMem {
            tcp_pages: tcp_mem_pages(),
            slab_kib: slab_kib(),
        }
    }
}

/// The kernel's slab in KiB (`Slab:` of /proc/meminfo): its objects of every kind on the
/// machine — a socket's (both ends of a loopback connection), its file, inode and dentry, its
/// epoll entry, a task's structures — the reclaimable caches included.
pub fn slab_kib() -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("Slab:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The kernel's TCP memory in pages (`mem` of the `TCP:` line of /proc/net/sockstat): the
/// buffers of every TCP socket of the machine (of this network namespace).
pub fn tcp_mem_pages() -> Option<u64> {
    let text = fs::read_to_string("/proc/net/sockstat").ok()?;
    let line = text.lines().find(|l| l.starts_with("TCP:"))?;
    let mut words = line.split_whitespace();
    while let Some(w) = words.next() {
        if w == "mem" {
            return words.next()?.parse().ok();
        }
    }
    None
}

/// Steal and total time of every CPU of the machine so far (the `cpu` line of /proc/stat, in
/// clock ticks): steal is time a hypervisor ran something else while this machine had work.
pub fn steal_and_total() -> Option<(u64, u64)> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal (guest and guest_nice are in user/nice).
    let total: u64 = f.iter().take(8).sum();
    Some((*f.get(7)?, total))
}

/// TCP sockets of this network namespace (any state, TIME_WAIT included) whose remote end is
/// `remote`, counted by their local IPv4 address (/proc/net/tcp).
pub fn tcp_sockets_to(remote: std::net::SocketAddrV4) -> std::collections::HashMap<std::net::Ipv4Addr, usize> {
    let mut counts = std::collections::HashMap::new();
    let Ok(text) = fs::read_to_string("/proc/net/tcp") else {
        return counts;
    };
    // Addresses are in hex, in the kernel's (little-endian) byte order: 0100007F:1F90.
    let hex = |a: std::net::SocketAddrV4| format!("{:08X}:{:04X}", u32::from_le_bytes(a.ip().octets()), a.port());
    let want = hex(remote);
    for line in text.lines().skip(1) {
        let mut f = line.split_whitespace().skip(1);
        let (Some(local), Some(rem)) = (f.next(), f.next()) else {
            continue;
        };
        if rem != want {
            continue;
        }
        let Some(ip) = local
            .split_once(':')
            .and_then(|(h, _)| u32::from_str_radix(h, 16).ok())
            .map(|v| std::net::Ipv4Addr::from(v.to_le_bytes()))
        else {
            continue;
        };
        *counts.entry(ip).or_insert(0) += 1;
    }
    counts
}

/// The ephemeral port range (`net.ipv4.ip_local_port_range`), as the number of ports in it.
pub fn ephemeral_ports() -> Option<usize> {
    let text = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut w = text.split_whitespace().map(|x| x.parse::<usize>().ok());
    let (lo, hi) = (w.next()??, w.next()??);
    (hi >= lo).then(|| hi - lo + 1)
}

/// The scheduler's base slice in ns, where debugfs exposes it (`sched/base_slice_ns`).
pub fn base_slice_ns() -> Option<u64> {
    fs::read_to_string("/sys/kernel/debug/sched/base_slice_ns")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The online CPUs of the machine (`/sys/devices/system/cpu/online`: `0-1`, `0,2-5`).
pub fn online_cpus() -> Option<usize> {
    let text = fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    let mut n = 0;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => b.parse::<usize>().ok()? - a.parse::<usize>().ok()? + 1,
            None => 1,
        };
    }
    Some(n)
}

/// Time of some CPUs so far (their `cpuN` lines of /proc/stat, in clock ticks): tasks' time
/// (user, nice, system: not interrupts), softirq (the kernel's network work, much of it on
/// behalf of the server), steal, and the total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub busy: u64,
    pub softirq: u64,
    pub steal: u64,
    pub total: u64,
}

/// [`CpuTimes`] of `cpus`, summed (`None`: /proc/stat unreadable, or a CPU not in it).
pub fn cpu_times(cpus: &[usize]) -> Option<CpuTimes> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    let mut t = CpuTimes::default();
    for &cpu in cpus {
        let name = format!("cpu{cpu} ");
        let line = text.lines().find(|l| l.starts_with(&name))?;
        let f: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
        // user nice system idle iowait irq softirq steal
        let total: u64 = f.iter().take(8).sum();
        t.total += total;
        t.busy += f.first()? + f.get(1)? + f.get(2)?;
        t.softirq += f.get(6)?;
        t.steal += f.get(7)?;
    }
    Some(t)
}
