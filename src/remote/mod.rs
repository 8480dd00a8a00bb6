//! `remote`: running muxlab on other hosts. OpenSSH is the transport (the user's own ssh
//! config and keys, `BatchMode`), a lossless merge of the hosts' documents the only
//! coordination; there is no daemon and no protocol of our own.
//!
//! - [`ssh`]: one ssh command line, quoting, `--push` and the version check.
//! - [`guard`]: what runs first on the far side: it starts the real command and stops it when
//!   the controlling muxlab goes quiet (a closed session or a lost network), so nothing is
//!   left behind on a host.
//! - [`fanout`]: `muxlab load --hosts`: splits the run, starts every host at one instant,
//!   streams progress, merges, names a failed host and its reason.
//! - [`sample`]: `muxlab sample PID`, which bench runs on a server's host to sample its tree.

mod args;
mod error;
pub(crate) mod fanout;
pub(crate) mod guard;
mod host_failure;
mod reason;
pub(crate) mod sample;
pub(crate) mod ssh;
mod stdin;

pub use args::RemoteArgs;
pub use error::{Error, PrepError, PrepFault, Theirs};
pub use host_failure::HostFailure;
