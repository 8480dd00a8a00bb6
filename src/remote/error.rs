//! What can go wrong on another host, and in a run spread over hosts: [`Error`], and
//! [`PrepError`] for a host that cannot be made ready.

use std::path::PathBuf;

use super::reason::reason;
use super::HostFailure;

/// Why a command over ssh, or a run over `--hosts`, failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// ssh itself cannot be run on this machine.
    #[error("cannot run ssh: {0} (install openssh-client)")]
    NoSsh(#[source] std::io::Error),
    /// Waiting for the ssh to `host` failed.
    #[error("waiting for ssh: {source}")]
    Wait { host: String, source: std::io::Error },
    /// The session to `host`, or the command there, failed: its exit status (`None`: killed by
    /// a signal) and what it said on stderr; the message is its last line, or the status.
    #[error("{}", reason(stderr, *code))]
    Exited {
        host: String,
        code: Option<i32>,
        stderr: String,
    },
    /// A `--hosts` entry that is not a host name (`flag`: the flag that named it).
    #[error("{flag}: '{given}' is not a host name")]
    NotAHost { flag: &'static str, given: String },
    /// `--hosts` with `--shard`.
    #[error("--hosts splits the run itself: drop --shard")]
    HostsWithShard,
    /// More hosts than connections.
    #[error("-c {connections} cannot be split over {hosts} hosts: every host needs a connection")]
    HostsOverConnections { connections: usize, hosts: usize },
    /// `--ssh-config FILE` that is not a file.
    #[error("--ssh-config {}: no such file", path.display())]
    NoSshConfig { path: PathBuf },
    /// Hosts that could not be made ready, each with why (those the user can fix first).
    #[error("{}", unprepared(failed))]
    Unprepared { failed: Vec<PrepError> },
    /// A host's share could not be started.
    #[error("host {host}: {source}")]
    Start { host: String, source: Box<Error> },
    /// Hosts that did not report, each with why, of `hosts` in all.
    #[error("{} of {hosts} hosts failed: {}", failed.len(), hosts_failed(failed))]
    HostsFailed {
        failed: Vec<(String, HostFailure)>,
        hosts: usize,
    },
    /// The hosts reported, but requests failed (or none completed).
    #[error("{errors} errors, {requests} requests completed")]
    Requests { errors: u64, requests: u64 },
}

/// `host a: ...; host b: cannot run muxlab there: ...`: the hosts of another version (or none)
/// first, then those that could not be reached.
fn unprepared(failed: &[PrepError]) -> String {
    let version = failed
        .iter()
        .filter(|e| e.is_usage())
        .map(|e| format!("host {}: {e}", e.host));
    let down = failed
        .iter()
        .filter(|e| !e.is_usage())
        .map(|e| format!("host {}: cannot run muxlab there: {e}", e.host));
    version.chain(down).collect::<Vec<_>>().join("; ")
}

/// `a: lost: ...; b: ended ...`.
fn hosts_failed(failed: &[(String, HostFailure)]) -> String {
    let each: Vec<String> = failed.iter().map(|(h, f)| format!("{h}: {f}")).collect();
    each.join("; ")
}

impl Error {
    /// Errors the user caused (exit code 2): the flags, or a host of another muxlab version (or
    /// none), rather than a host or the network.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::NotAHost { .. } | Error::HostsWithShard | Error::HostsOverConnections { .. } => true,
            Error::NoSshConfig { .. } => true,
            Error::Unprepared { failed } => failed.iter().any(PrepError::is_usage),
            Error::NoSsh(_) | Error::Wait { .. } | Error::Exited { .. } | Error::Start { .. } => false,
            Error::HostsFailed { .. } | Error::Requests { .. } => false,
        }
    }
}

/// Why `host` could not be prepared. Its words say what went wrong there, not where: callers
/// name the host in their own (`host H: ...`).
#[derive(Debug, thiserror::Error)]
#[error("{fault}")]
pub struct PrepError {
    pub host: String,
    pub fault: PrepFault,
}

/// What went wrong preparing a host.
#[derive(Debug)]
pub enum PrepFault {
    /// This program's own path cannot be found (to `--push` it).
    NoProgram(std::io::Error),
    /// This program cannot be read (to `--push` it).
    Unreadable { path: PathBuf, source: std::io::Error },
    /// The host cannot be reached, or the command there failed.
    Ssh(Error),
    /// No muxlab there at `bin` (the shell did not find it).
    NotThere { bin: String, source: Error },
    /// `--push`'s `mktemp -d` there printed no directory (what it printed).
    NoPushDir { said: String },
    /// The muxlab at `bin` there is another version (or not muxlab); `ours`: this one's.
    OtherVersion { bin: String, theirs: Theirs, ours: String },
    /// The thread preparing it panicked.
    Panicked,
}

/// What `--version` printed on a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Theirs {
    /// A muxlab's version line.
    Muxlab(String),
    /// Something else.
    NotMuxlab(String),
}

impl PrepError {
    /// The host runs another muxlab version, or none (the user can fix it: exit 2), rather
    /// than one that could not be reached or a command that failed (exit 1).
    pub fn is_usage(&self) -> bool {
        matches!(self.fault, PrepFault::NotThere { .. } | PrepFault::OtherVersion { .. })
    }
}

impl std::fmt::Display for PrepFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrepFault::NoProgram(e) => write!(f, "cannot find this program: {e}"),
            PrepFault::Unreadable { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            PrepFault::Ssh(e) => write!(f, "{e}"),
            PrepFault::NotThere { bin, source } => write!(
                f,
                "cannot run '{bin}' there ({source}): put muxlab on its PATH, give --remote-bin, or use --push"
            ),
            PrepFault::NoPushDir { said } => write!(f, "mktemp -d there did not name a directory: {said:?}"),
            PrepFault::OtherVersion { bin, theirs, ours } => write!(
                f,
                "'{bin}' there is {}, this is {ours}: install the same version or use --push",
                match theirs {
                    Theirs::Muxlab(v) => v.clone(),
                    Theirs::NotMuxlab(v) => format!("not muxlab (its --version says '{v}')"),
                }
            ),
            PrepFault::Panicked => f.write_str("panicked"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(host: &str, code: Option<i32>, stderr: &str) -> Error {
        Error::Exited {
            host: host.into(),
            code,
            stderr: stderr.into(),
        }
    }

    #[test]
    fn a_failed_session_says_its_last_words_or_its_status() {
        let said = exited(
            "a",
            Some(1),
            "Warning: Permanently added 'a'\nsh: muxlab: not found\n\n",
        );
        assert_eq!(said.to_string(), "sh: muxlab: not found");
        assert_eq!(
            exited("a", Some(255), "").to_string(),
            "ssh could not connect (exit 255)"
        );
        assert_eq!(exited("a", Some(3), "").to_string(), "exited with status 3");
        assert_eq!(exited("a", None, " \n").to_string(), "killed by a signal");
        assert!(!said.is_usage());
    }

    #[test]
    fn hosts_not_ready_are_named_those_the_user_can_fix_first_and_make_it_usage() {
        let down = PrepError {
            host: "b".into(),
            fault: PrepFault::Ssh(exited("b", Some(255), "")),
        };
        let other = PrepError {
            host: "c".into(),
            fault: PrepFault::OtherVersion {
                bin: "muxlab".into(),
                theirs: Theirs::NotMuxlab("".into()),
                ours: "muxlab 1".into(),
            },
        };
        let e = Error::Unprepared {
            failed: vec![down, other],
        };
        assert!(matches!(&e, Error::Unprepared { failed } if failed.len() == 2));
        assert!(e.is_usage(), "a host of another version is the user's to fix");
        assert_eq!(
            e.to_string(),
            "host c: 'muxlab' there is not muxlab (its --version says ''), this is muxlab 1: install the same version or use --push; \
             host b: cannot run muxlab there: ssh could not connect (exit 255)"
        );
        let Error::Unprepared { mut failed } = e else {
            unreachable!()
        };
        failed.pop();
        assert!(!Error::Unprepared { failed }.is_usage(), "hosts that are down are not");
    }

    #[test]
    fn hosts_that_did_not_report_are_counted_and_named_with_why() {
        let e = Error::HostsFailed {
            failed: vec![
                (
                    "h2".into(),
                    HostFailure::Lost {
                        silent: std::time::Duration::from_secs(7),
                    },
                ),
                (
                    "h3".into(),
                    HostFailure::Ended {
                        code: Some(1),
                        stderr: "boom".into(),
                    },
                ),
            ],
            hosts: 3,
        };
        assert_eq!(
            e.to_string(),
            "2 of 3 hosts failed: h2: lost: nothing heard from it for 7s (network down or host gone?); \
             h3: ended before reporting: boom"
        );
        assert!(!e.is_usage());
    }
}
