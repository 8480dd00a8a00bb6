//! Why a peer, a production server beside the models, did not start ([`PeerError`]): its entry
//! refused, its files or port not to be had, its binary or build failing, or a product that
//! never listened.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitStatus;

use super::scenario::peer::BadPeer;

/// Why a peer did not start. Its entry refused is the user's to fix (exit 2); the rest fail
/// the cell.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// A `peers` entry refused.
    #[error(transparent)]
    Entry(#[from] BadPeer),
    /// The servers' address, which the peer must listen on, is not an IP address.
    #[error("server_addr '{given}' is not an address")]
    NotAnAddress {
        given: String,
        source: std::net::AddrParseError,
    },
    /// No free port to be had.
    #[error("{source}")]
    FreePort { source: std::io::Error },
    /// A directory or file of the peer's own (its directory, its stderr, a build) that could
    /// not be made, written or moved.
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: std::io::Error },
    /// nginx's directory could not be made.
    #[error("{source}")]
    NginxDir { dir: PathBuf, source: std::io::Error },
    /// nginx's configuration could not be written.
    #[error("{source}")]
    NginxConf { path: PathBuf, source: std::io::Error },
    /// The product could not be started.
    #[error("starting {product}: {source}")]
    Spawn {
        product: &'static str,
        source: std::io::Error,
    },
    /// The product ran but never listened.
    #[error("{product} did not listen on {addr} within 10 s")]
    NoListen { product: &'static str, addr: SocketAddr },
    /// The product exited at start on every port tried; what it said on stderr the last time.
    #[error(
        "{product} exited at start {tries} times (each on a free port){}",
        if said.is_empty() { " and said nothing".to_string() } else { format!("; it said: {said}") }
    )]
    ExitedAtStart {
        product: &'static str,
        tries: u32,
        said: String,
    },
    /// nginx ran but was not up within its time (its error log says why).
    #[error("nginx did not start; see {}/error.log", dir.display())]
    NginxNotUp { dir: PathBuf },
    /// nginx could not bind free ports, however many times it was tried.
    #[error("nginx could not bind free ports in {tries} tries; see {}/error.log", dir.display())]
    NginxNoPorts { dir: PathBuf, tries: u32 },
    /// The directory the products would be built in is not this user's own.
    #[error(
        "{} is not a private directory of this user's (set HOME or XDG_CACHE_HOME): the products are not built there",
        dir.display()
    )]
    NotPrivate { dir: PathBuf },
    /// A toolchain (`go`) that could not be run for a step (`version`, `build`).
    #[error("{} {step}: {source}", program.display())]
    Toolchain {
        program: PathBuf,
        step: &'static str,
        source: std::io::Error,
    },
    /// Go's server did not build: the compiler's exit and what it said.
    #[error("building Go's server failed ({status}): {said}")]
    GoBuild { status: ExitStatus, said: String },
}

impl PeerError {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        matches!(self, PeerError::Entry(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_that_did_not_start_says_what_it_said() {
        let said = |e: PeerError| e.to_string();
        assert_eq!(
            said(PeerError::ExitedAtStart {
                product: "memcached",
                tries: 5,
                said: String::new()
            }),
            "memcached exited at start 5 times (each on a free port) and said nothing"
        );
        assert_eq!(
            said(PeerError::NginxNoPorts {
                dir: "/tmp/n".into(),
                tries: 5
            }),
            "nginx could not bind free ports in 5 tries; see /tmp/n/error.log"
        );
        assert_eq!(
            said(PeerError::NoListen {
                product: "go",
                addr: "127.0.0.1:9".parse().unwrap()
            }),
            "go did not listen on 127.0.0.1:9 within 10 s"
        );
        let refused = PeerError::Entry(crate::bench::record::scenario::peer::Peer::parse("redis").unwrap_err());
        assert!(refused.is_usage() && refused.to_string().starts_with("unknown peer 'redis'"));
        let spawn = PeerError::Spawn {
            product: "nginx",
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert!(!spawn.is_usage() && spawn.to_string().starts_with("starting nginx: "));
    }
}
