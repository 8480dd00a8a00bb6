//! Why a cell failed ([`CellError`]): its server (a model or a peer) did not start, died, did not
//! stop or stopped unclean; or the load generator could not be run or measured nothing.

use std::process::ExitStatus;
use std::time::Duration;

/// Why a cell failed. Recorded in the cell's status; the matrix goes on.
#[derive(Debug, thiserror::Error)]
pub enum CellError {
    /// The muxlab binary, which serves the models and runs the load, is not to be found.
    #[error("cannot find the muxlab binary: {source}")]
    NoBinary { source: std::io::Error },
    /// The server could not be started.
    #[error("starting the server: {source}")]
    ServerSpawn { source: std::io::Error },
    /// The server (on `host`, where not this machine) never said it listens: what it said.
    #[error(
        "server did not start{}: {said}",
        host.as_ref().map_or(String::new(), |h| format!(" on {h}"))
    )]
    NotStarted { host: Option<String>, said: String },
    /// The server ended before it was stopped; its processes left then were killed.
    #[error(
        "the server{} died during the cell ({status}){}",
        host.as_ref().map_or(String::new(), |h| format!(" on {h}")),
        if killed.is_empty() { String::new() } else { format!("; its processes {killed:?} were killed") }
    )]
    Died {
        host: Option<String>,
        status: ExitStatus,
        killed: Vec<i32>,
    },
    /// The server did not stop within `within` of being asked (here: of SIGTERM, then killed).
    #[error(
        "the server{} did not stop within {} s{}",
        host.as_ref().map_or(String::new(), |h| format!(" on {h}")),
        within.as_secs(),
        if host.is_none() { " of SIGTERM (killed)" } else { "" }
    )]
    DidNotStop { host: Option<String>, within: Duration },
    /// The server exited unclean when stopped.
    #[error("the server exited with {status}")]
    Exited { status: ExitStatus },
    /// Processes of the server's tree outlived it (killed).
    #[error("processes left behind (killed): {pids:?}")]
    LeftBehind { pids: Vec<i32> },
    /// The guard on the server's host named processes the server left behind: its errors.
    #[error(
        "on {host}: {}",
        errors.iter().find(|l| l.contains("left behind")).map_or("", |l| l.as_str())
    )]
    LeftBehindOn { host: String, errors: Vec<String> },
    /// The server stopped without its stats line (on `host`: with the errors said there).
    #[error(
        "no stats line{}",
        host.as_ref().map_or(String::new(), |h| format!(" from the server on {h}: {}", errors.join(" ")))
    )]
    NoStats { host: Option<String>, errors: Vec<String> },
    /// The load generator could not be started.
    #[error("starting the load generator: {source}")]
    LoadSpawn { source: std::io::Error },
    /// The load generator could not be waited for.
    #[error("waiting for the load generator: {source}")]
    LoadWait { source: std::io::Error },
    /// The load generator gave no document: how it ended (`None`: still running) and what it
    /// said on stderr.
    #[error(
        "the load generator failed ({}): {said}",
        status.map_or("still running".to_string(), |s| s.to_string())
    )]
    NoDocument { status: Option<ExitStatus>, said: String },
}
