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
