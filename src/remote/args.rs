//! The flags that send work to other hosts ([`RemoteArgs`]), as `muxlab load` reads them.

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
