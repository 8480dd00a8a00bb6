//! What can go wrong in `muxlab load`.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

pub use crate::sys::error::{io_err, IoError};

use super::gates::UnknownClass;
use super::keyed::{KeyedRule, PrefillFailed};
use super::workload::BadMixFile;
use super::{BadDocument, Rule, Unmergeable};
use crate::units::{format_duration, BadValue, CpuList};

/// A load run's error. Every message says what happened and, where the user can act, what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// One value (a flag, or the scenario key of the same name) breaks a rule (exit code 2).
    #[error("{rule}")]
    Invalid { key: &'static str, rule: Rule },
    /// A keyed target's flag (or scenario key) breaks one of its rules (exit code 2).
    #[error("{rule}")]
    Keyed { key: &'static str, rule: KeyedRule },
    /// `--mix-file` cannot be read, or a line of it is wrong (exit code 2).
    #[error(transparent)]
    MixFile(#[from] BadMixFile),
    /// A value typed on the command line does not parse (exit code 2).
    #[error(transparent)]
    Value(#[from] BadValue),
    /// A document (a load result, a shard's or a host's) is not what this version reads.
    #[error(transparent)]
    Document(#[from] BadDocument),
    /// A file `muxlab merge` was given cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable { path: PathBuf, source: std::io::Error },
    /// The documents given to `muxlab merge` do not add up.
    #[error(transparent)]
    Merge(#[from] Unmergeable),
    /// A file an output flag (`--hgrm`, `--timeseries`) names cannot be written.
    #[error("cannot write {flag} {}: {source}", path.display())]
    Unwritable {
        flag: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A `--fail-if` gate names a class the run has not.
    #[error(transparent)]
    UnknownClass(#[from] UnknownClass),
    /// `--fail-if` or `--timeseries` with `--slo`.
    #[error("--fail-if and --timeseries are of one run, --slo searches for a capacity over many: drop one")]
    SloWithOneRunOutputs,
    /// `--metrics` with `--slo`: each probe is a run of its own.
    #[error("--metrics with --slo: the search runs a load per probe, each its own run; scrape the server's --metrics instead")]
    MetricsWithSlo,
    /// `--metrics` with `--hosts`: each host would serve its own, there.
    #[error("--metrics with --hosts: each host would serve its own figures on its own loopback; run `muxlab load --metrics` on each host, or --shard, instead")]
    MetricsWithHosts,
    /// `--slo` with `--hosts`.
    #[error("--slo with --hosts: the probes cannot be coordinated across hosts yet; run the search from one host")]
    SloWithHosts,
    /// A capacity search asked of a run without `--slo`.
    #[error("no --slo to search for")]
    NoSlo,
    /// `--slo-time` ended before one probe did.
    #[error("--slo-time {}: too short for one probe", format_duration(*slo_time))]
    SloTimeTooShort { slo_time: Duration },
    /// `--cacert FILE` holds no PEM certificates.
    #[error("--cacert {}: not PEM certificates ({source})", path.display())]
    CacertNotPem {
        path: PathBuf,
        source: rustls::pki_types::pem::Error,
    },
    /// `--cacert FILE` holds no certificate.
    #[error("--cacert {}: no certificate in it", path.display())]
    CacertEmpty { path: PathBuf },
    /// A certificate of `--cacert FILE` cannot be trusted.
    #[error("--cacert {}: {source}", path.display())]
    CacertRefused { path: PathBuf, source: rustls::Error },
    /// `https://` on a machine that trusts no certificate authority.
    #[error(
        "https: this machine trusts no certificate authority (install ca-certificates), or give --cacert FILE, or --insecure"
    )]
    NoTrustedRoots,
    /// `--h2` with a server that picks another protocol over TLS (`picked`: its ALPN answer).
    #[error(
        "{url}: the server picked {} over TLS, not h2 (ALPN): it does not serve HTTP/2 there; drop --h2 to load it over HTTP/1.1",
        picked.as_deref().unwrap_or("no protocol")
    )]
    NotH2 { url: String, picked: Option<String> },
    /// `--cpus` names CPUs this process may not run on.
    #[error("cannot pin the client to CPUs {cpus:?}: {source}")]
    Pin { cpus: CpuList, source: std::io::Error },
    /// rustls refuses to build a client configuration.
    #[error("TLS: {0}")]
    Tls(rustls::Error),
    /// rustls refuses to build the server certificate check.
    #[error("TLS: {0}")]
    Verifier(rustls::client::VerifierBuilderError),
    /// A system call the run needs failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// `--prefill` could not write the keyspace.
    #[error(transparent)]
    Prefill(#[from] PrefillFailed),
    /// An engine thread panicked.
    #[error("an engine thread panicked")]
    EnginePanicked,
    /// `--metrics` could not be bound.
    #[error(
        "--metrics {addr}: cannot serve metrics there: {source} (pick another address, or port 0 for any free one)"
    )]
    MetricsAddr {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    /// Shard processes that ended without a document: each its number and how it ended.
    #[error("{}", silent_shards(silent))]
    ShardsSilent { silent: Vec<(usize, ExitStatus)> },
    /// A split run whose processes all failed to start a shard.
    #[error("no shard ran")]
    NoShardRan,
}

/// `shard 0 reported nothing (exit status: 1); shard 3 ...`.
fn silent_shards(silent: &[(usize, ExitStatus)]) -> String {
    let each: Vec<String> = silent
        .iter()
        .map(|(i, status)| format!("shard {i} reported nothing ({status})"))
        .collect();
    each.join("; ")
}

impl Error {
    /// Errors the user caused (exit code 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Invalid { .. } | Error::Keyed { .. } | Error::MixFile(_) | Error::Value(_) => true,
            Error::Document(_) | Error::Unreadable { .. } | Error::Merge(_) | Error::Unwritable { .. } => true,
            Error::UnknownClass(_) | Error::SloWithOneRunOutputs | Error::SloWithHosts => true,
            Error::MetricsWithSlo | Error::MetricsWithHosts => true,
            Error::NoSlo | Error::SloTimeTooShort { .. } => true,
            Error::CacertNotPem { .. } | Error::CacertEmpty { .. } | Error::CacertRefused { .. } => true,
            Error::NoTrustedRoots | Error::NotH2 { .. } | Error::Pin { .. } | Error::MetricsAddr { .. } => true,
            Error::Tls(_) | Error::Verifier(_) | Error::Io(_) | Error::Prefill(_) => false,
            Error::EnginePanicked | Error::ShardsSilent { .. } | Error::NoShardRan => false,
        }
    }

    /// A broken rule about `key` (its flag, or the scenario key of the same name).
    pub fn invalid(key: &'static str, rule: Rule) -> Error {
        Error::Invalid { key, rule }
    }

    /// The key a broken rule is about, if it is one.
    pub fn key(&self) -> Option<&'static str> {
        match self {
            Error::Invalid { key, .. } | Error::Keyed { key, .. } => Some(key),
            Error::MixFile(_) => Some("mix_file"),
            _ => None,
        }
    }
}
