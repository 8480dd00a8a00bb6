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

mod error;
pub(crate) mod fanout;
pub(crate) mod guard;
pub(crate) mod sample;
pub(crate) mod ssh;
mod stdin;

pub use error::Error;

use std::path::PathBuf;

/// The flags that send work to other hosts (`muxlab load`; `bench` takes `--ssh-config` and
/// `--push` too).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RemoteArgs {
    /// Run the load from these hosts over ssh (HOST or USER@HOST, as ssh takes them), split
    /// exactly (connections, -n, --rate), started at one instant, merged losslessly.
    #[arg(long, value_delimiter = ',', value_name = "HOST[,HOST...]")]
    pub hosts: Vec<String>,
    /// ssh configuration file for the hosts (passed to ssh as -F FILE).
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// The muxlab binary on the hosts.
    #[arg(long, value_name = "PATH", default_value = "muxlab")]
    pub remote_bin: String,
    /// Copy this muxlab binary to a temporary path on each host for the run (removed after).
    #[arg(long)]
    pub push: bool,
}
