//! Source addresses for a loopback target when one address's ports are crowded. The kernel's
//! search for a free local port gets slower as more of the range is taken toward the same
//! target (by open connections and by TIME_WAIT sockets of earlier runs): at 19,000 connections
//! after 40,000 short ones, each `connect()` spent about a millisecond in it. 127.0.0.0/8 has
//! plenty of addresses, and a port taken from one is free from another, so a run that would
//! crowd 127.0.0.1 spreads its connections over the least used of 127.0.0.1-127.0.0.254.
//! `--bind` always wins.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use crate::sys;
use crate::units::AddrRange;

/// Of an address's ephemeral ports, the share a run may take toward one target before it
/// spreads: the port search stays short while most of the range is free.
const SHARE: usize = 4;

/// `spec` for `conns` connections, spread over source addresses (said on stderr) when its
/// loopback target's ports are crowded; as it is where `--bind` gives them (the user's choice
/// wins) or the kernel's choice is fine.
pub(super) fn with_room(spec: &super::Spec, conns: usize) -> std::borrow::Cow<'_, super::Spec> {
    match unless_bound(spec, conns) {
        Some(range) => {
            eprintln!(
                "muxlab: {conns} connections would crowd 127.0.0.1's ports toward {}: sources {range} (set them with --bind)",
                spec.target().addr,
            );
            std::borrow::Cow::Owned(spec.with_sources(range))
        }
        None => std::borrow::Cow::Borrowed(spec),
    }
}

/// The sources a run of `spec` with `conns` connections should spread over: `None` where
/// `--bind` gives them or the kernel's choice is fine.
fn unless_bound(spec: &super::Spec, conns: usize) -> Option<AddrRange> {
    if !spec.sources().is_empty() {
        return None;
    }
    spread(spec.target().addr, conns)
}

/// The sources to spread `conns` connections to `target` over, or `None` where the kernel's
/// choice is fine (not loopback, or one address has room).
pub fn spread(target: SocketAddr, conns: usize) -> Option<AddrRange> {
    let SocketAddr::V4(v4) = target else { return None };
    if !v4.ip().is_loopback() {
        return None;
    }
    let room = sys::machine::ephemeral_ports()? / SHARE;
    let used = sys::machine::tcp_sockets_to(SocketAddrV4::new(*v4.ip(), v4.port()));
    pick(conns, room, |ip| used.get(&ip).copied().unwrap_or(0)).map(AddrRange)
}

/// Addresses, least used first, until their room covers `conns`; `None` if 127.0.0.1 alone
/// has room for them.
fn pick(conns: usize, room: usize, used: impl Fn(Ipv4Addr) -> usize) -> Option<Vec<Ipv4Addr>> {
    let first = Ipv4Addr::LOCALHOST;
    if used(first) + conns <= room {
        return None;
    }
    let mut candidates: Vec<(usize, Ipv4Addr)> = (1..=254u8)
        .map(|d| Ipv4Addr::new(127, 0, 0, d))
        .map(|ip| (used(ip), ip))
        .collect();
    candidates.sort();
    let mut chosen = Vec::new();
    let mut covered = 0;
    for (n, ip) in candidates {
        if covered >= conns {
            break;
        }
        covered += room.saturating_sub(n);
        chosen.push(ip);
    }
    chosen.sort();
    Some(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sources the user gave are kept, however many connections: `--bind` wins.
    #[test]
    fn bind_wins_over_spreading() {
        let w = crate::load::Workload {
            bind: Some("127.0.0.7".parse().unwrap()),
            ..Default::default()
        };
        let target = crate::load::Target::parse("http://127.0.0.1:1/").unwrap();
        // More than one address's share of ports (a quarter of the range), within its ports.
        let spec = crate::load::resolve(crate::load::LoadArgs::new(target, 20_000, w)).unwrap();
        assert_eq!(unless_bound(&spec, 20_000), None);
        assert_eq!(spec.sources(), &[Ipv4Addr::new(127, 0, 0, 7)]);
    }

    #[test]
    fn one_address_with_room_is_left_to_the_kernel_and_a_crowded_one_is_spread_least_used_first() {
        assert_eq!(pick(1000, 7000, |_| 0), None);
        // 127.0.0.1 holds 13,500 TIME_WAIT sockets: it has no room, three fresh ones cover 19,000.
        let used = |ip: Ipv4Addr| if ip == Ipv4Addr::LOCALHOST { 13_500 } else { 0 };
        let got = pick(19_000, 7000, used).unwrap();
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(!got.contains(&Ipv4Addr::LOCALHOST), "{got:?}");
        // Room left on a partly used address counts.
        let used = |ip: Ipv4Addr| if ip == Ipv4Addr::LOCALHOST { 6000 } else { 0 };
        let got = pick(2000, 7000, used).unwrap();
        assert_eq!(got.len(), 1, "a fresh address alone has room: {got:?}");
    }
}
