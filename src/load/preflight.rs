//! What a run's count of connections needs of this machine, checked before anything opens:
//! ports (through one source address, a server's port is reached from the ephemeral range
//! only), files (`fs.file-max`, the machine's), memory, and TCP memory for the connections that
//! send. A count the settings cannot hold is refused, naming the setting; nothing is changed.
//! Descriptors per process are not a limit here: a run that needs more than one process may
//! open is split over processes (`processes`).

use std::net::SocketAddr;

use crate::server::bound::BYTES_PER_CONNECTION;
use crate::sys::settings::Settings;
use crate::units::thousands;

/// Addresses a loopback run may spread over when `--bind` does not give them (`sources`).
pub const LOOPBACK_SOURCES: u64 = 254;

/// Pages of TCP memory one sending connection holds, both its ends together, counted against
/// `tcp_mem`'s pressure mark: `c100k` measured 3.2–4.0 KiB of TCP memory per connection for
/// both ends with every connection sending 128 bytes a second (about a page); a held one holds
/// none (300,000 held with 3,000 sending used 5,422 pages).
const PAGES_PER_SENDER: u64 = 1;

/// A setting a run's count of connections needs more of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// `connections` through `sources` source addresses of `ports` ephemeral ports each.
    Ports { connections: u64, sources: u64, ports: u64 },
    /// `connections` descriptors (both ends of a loopback run: twice as many) of the `free`
    /// left under `fs.file-max`.
    Files { descriptors: u64, free: u64, file_max: u64 },
    /// `connections` of [`BYTES_PER_CONNECTION`] each (both ends on a loopback run), of the
    /// memory available.
    Memory { sockets: u64, available: u64 },
    /// `senders` of [`PAGES_PER_SENDER`] pages each (both ends), past `tcp_mem`'s pressure mark.
    TcpMem { senders: u64, pressure: u64 },
}

impl std::fmt::Display for Need {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Need::Ports {
                connections,
                sources,
                ports,
            } => write!(
                f,
                "{} connections to one server address need {} source addresses: net.ipv4.ip_local_port_range gives {} ports to each, and this run has {} (--bind gives them; on loopback, without it, up to {LOOPBACK_SOURCES} are chosen)",
                thousands(connections),
                connections.div_ceil(ports.max(1)),
                thousands(ports),
                sources
            ),
            Need::Files {
                descriptors,
                free,
                file_max,
            } => write!(
                f,
                "{} descriptors are more than the {} left under fs.file-max ({}): raise fs.file-max",
                thousands(descriptors),
                thousands(free),
                thousands(file_max)
            ),
            Need::Memory { sockets, available } => write!(
                f,
                "{} sockets at about {} KiB each need {} MiB, and {} MiB are available",
                thousands(sockets),
                BYTES_PER_CONNECTION / 1024,
                sockets * BYTES_PER_CONNECTION / (1 << 20),
                available / (1 << 20)
            ),
            Need::TcpMem { senders, pressure } => write!(
                f,
                "{} sending connections at about {PAGES_PER_SENDER} page of TCP memory each pass net.ipv4.tcp_mem's pressure mark ({} pages): lower --active or raise net.ipv4.tcp_mem",
                thousands(senders),
                thousands(pressure)
            ),
        }
    }
}

/// Checks `connections` (of which `senders` send) to `target` through `sources` source
/// addresses (0: none given) against `s`. A loopback target's sockets are both ends' on this
/// machine.
pub fn check(target: SocketAddr, connections: u64, senders: u64, sources: u64, s: &Settings) -> Result<(), Need> {
    let loopback = target.ip().is_loopback();
    let sources = match (sources, loopback && target.is_ipv4()) {
        (0, true) => LOOPBACK_SOURCES,
        (0, false) => 1,
        (n, _) => n,
    };
    if let Some(ports) = s.ports.filter(|&p| connections > sources * p) {
        return Err(Need::Ports {
            connections,
            sources,
            ports,
        });
    }
    let ends = if loopback { 2 } else { 1 };
    if let (Some(file_max), Some(open)) = (s.file_max, s.files_open) {
        let free = file_max.saturating_sub(open);
        if connections * ends > free {
            return Err(Need::Files {
                descriptors: connections * ends,
                free,
                file_max,
            });
        }
    }
    if let Some(available) = s
        .mem_available
        .filter(|&a| connections * ends * BYTES_PER_CONNECTION > a)
    {
        return Err(Need::Memory {
            sockets: connections * ends,
            available,
        });
    }
    if let Some([_, pressure, _]) = s.tcp_mem.filter(|m| senders * PAGES_PER_SENDER > m[1]) {
        return Err(Need::TcpMem { senders, pressure });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine's settings as read for issue 80.
    fn here() -> Settings {
        Settings::issue_80()
    }

    #[test]
    fn a_count_the_settings_hold_passes_and_one_they_cannot_names_the_setting() {
        let lo: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let far: SocketAddr = "10.0.0.1:80".parse().unwrap();
        assert_eq!(check(lo, 300_000, 3_000, 0, &here()), Ok(()));
        // One source address to a remote server: its ports are the ceiling.
        let e = check(far, 30_000, 300, 0, &here()).unwrap_err();
        assert_eq!(
            e,
            Need::Ports {
                connections: 30_000,
                sources: 1,
                ports: 28_232
            }
        );
        assert!(
            e.to_string().contains("net.ipv4.ip_local_port_range") && e.to_string().contains("need 2 source addresses"),
            "{e}"
        );
        // Ten addresses given for 300,001 connections: 282,320 ports.
        assert!(matches!(
            check(lo, 300_001, 1, 10, &here()),
            Err(Need::Ports { sources: 10, .. })
        ));
        // A million connections on loopback: two million sockets, 11.4 GiB at 6 KiB: held.
        assert_eq!(check(lo, 1_000_000, 10_000, 0, &here()), Ok(()));
        // Two million: four million descriptors, past fs.file-max.
        let e = check(lo, 2_000_000, 1, 0, &here()).unwrap_err();
        assert!(
            matches!(
                e,
                Need::Files {
                    descriptors: 4_000_000,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("fs.file-max"), "{e}");
        // Memory: 1.5 million remote sockets of 6 KiB with 4 GiB available.
        let small = Settings {
            mem_available: Some(4 << 30),
            ..here()
        };
        let e = check(far, 1_500_000, 1, 60, &small).unwrap_err();
        assert!(matches!(e, Need::Memory { sockets: 1_500_000, .. }), "{e}");
        // c100k, every connection sending: 100,000 pages, under pressure; a million sending:
        // past it.
        assert_eq!(check(lo, 100_000, 100_000, 10, &here()), Ok(()));
        let e = check(lo, 1_000_000, 1_000_000, 0, &here()).unwrap_err();
        assert_eq!(
            e,
            Need::TcpMem {
                senders: 1_000_000,
                pressure: 383_868
            }
        );
        assert!(e.to_string().contains("net.ipv4.tcp_mem"), "{e}");
    }
}
