//! [`PrefillFailed`]: why `--prefill` could not write the keyspace.

use std::net::SocketAddr;
use std::time::Duration;

use super::command::Dialect;

/// Why `--prefill` could not write the keyspace (each says where: the target's address).
#[derive(Debug, thiserror::Error)]
pub enum PrefillFailed {
    #[error("--prefill: cannot connect to {addr}: {source}")]
    Connect { addr: SocketAddr, source: std::io::Error },
    #[error("--prefill: stopped by a signal after {written} keys")]
    Stopped { written: u64 },
    #[error("--prefill: {addr} made no progress for --timeout ({timeout:?}) after {written} keys")]
    Stalled {
        addr: SocketAddr,
        timeout: Duration,
        written: u64,
    },
    #[error("--prefill: writing to {addr}: {source}")]
    Write { addr: SocketAddr, source: std::io::Error },
    #[error("--prefill: reading from {addr}: {source}")]
    Read { addr: SocketAddr, source: std::io::Error },
    #[error("--prefill: {addr} closed the connection")]
    Closed { addr: SocketAddr },
    #[error("--prefill: {addr} answered with bytes that are not {}", dialect_name(*dialect))]
    NotReplies { addr: SocketAddr, dialect: Dialect },
    /// A SET refused: with the server's error line, or `None` for a reply that is not a SET's.
    #[error(
        "--prefill: the server refused a SET after {written} keys: {} (lower --keys or --value-size, or give the server more memory)",
        said.as_deref().unwrap_or("a reply that is not a SET's")
    )]
    Refused { written: u64, said: Option<String> },
    #[error("a prefill thread panicked")]
    Panicked,
}

fn dialect_name(d: Dialect) -> &'static str {
    match d {
        Dialect::Resp => "RESP replies",
        Dialect::Memcache => "memcached replies",
    }
}
