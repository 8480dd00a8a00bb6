//! Why a cell cannot run here ([`SkipReason`]): a peer on another host, one that does not speak
//! the experiment's protocol, or a product that is not installed. The cell is a visible skip.

use super::scenario::peer::Peer;
use super::scenario::Protocol;

/// Why a cell cannot run here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// A peer where the server runs on another host: peers run on this machine only.
    RemoteServer { product: &'static str },
    /// A peer that does not speak the experiment's protocol.
    Speaks { peer: Peer, proto: Protocol },
    /// nginx, configured for http and h2, in an experiment of another protocol.
    NginxProto { proto: Protocol },
    /// A product's binary that is not installed, and the Debian package that installs it.
    NotInstalled {
        binary: &'static str,
        package: &'static str,
    },
    /// A model past its ceiling on this machine: it holds at most `most` connections, and
    /// `bound` stops it there.
    OverCeiling {
        model: &'static str,
        connections: usize,
        most: u64,
        bound: crate::server::bound::Bound,
    },
    /// A server whose `--max-conns` (given, or its design's default) is under the connections
    /// the experiment holds: it would close the rest as they come.
    MaxConns {
        model: &'static str,
        connections: usize,
        most: usize,
        given: bool,
    },
    /// A pool that serves one connection at a time per worker, asked to hold more connections
    /// than it has workers (the rest would wait in the backlog, never served).
    OneAtATime {
        model: &'static str,
        connections: usize,
        workers: usize,
    },
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::RemoteServer { product } => write!(f, "the {product} peer runs on this machine only"),
            SkipReason::Speaks { peer, proto } => {
                write!(f, "{} speaks {}, not {proto}", peer.product(), peer.protocols())
            }
            SkipReason::NginxProto { proto } => {
                write!(f, "the nginx peer is configured for http and h2, not {proto}")
            }
            SkipReason::NotInstalled { binary, package } => {
                write!(f, "{binary} is not installed (apt-get install {package})")
            }
            SkipReason::OverCeiling {
                model,
                connections,
                most,
                bound,
            } => write!(
                f,
                "{model} holds at most {} connections on this machine, not {}: {bound}",
                crate::units::thousands(*most),
                crate::units::thousands(*connections as u64)
            ),
            SkipReason::MaxConns {
                model,
                connections,
                most,
                given,
            } => write!(
                f,
                "{model} keeps at most {} connections open ({}), not {}: give a larger --max-conns to hold them",
                crate::units::thousands(*most as u64),
                if *given { "--max-conns" } else { "its --max-conns default" },
                crate::units::thousands(*connections as u64)
            ),
            SkipReason::OneAtATime {
                model,
                connections,
                workers,
            } => write!(
                f,
                "{model} serves one connection at a time per worker: {} held connections would need as many workers, not {workers} (the rest wait in the backlog, unserved)",
                crate::units::thousands(*connections as u64)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skip's words, as results.json keeps them after "skipped: ".
    #[test]
    fn a_skip_says_why_and_what_to_install() {
        let said = |s: SkipReason| s.to_string();
        assert_eq!(
            said(SkipReason::NotInstalled {
                binary: "nginx",
                package: "nginx-light"
            }),
            "nginx is not installed (apt-get install nginx-light)"
        );
        assert_eq!(
            said(SkipReason::RemoteServer { product: "go" }),
            "the go peer runs on this machine only"
        );
        assert_eq!(
            said(SkipReason::Speaks {
                peer: Peer::Memcached { threads: 1 },
                proto: Protocol::Http
            }),
            "memcached speaks memcache, not http"
        );
        assert_eq!(
            said(SkipReason::NginxProto { proto: Protocol::Resp }),
            "the nginx peer is configured for http and h2, not resp"
        );
    }
}
