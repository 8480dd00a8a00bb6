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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// The words a cell's status keeps in results.json, as they were when they were text.
    #[test]
    fn a_cells_failure_says_where_and_what() {
        let exit1 = ExitStatus::from_raw(256);
        let host = || Some("h1".to_string());
        let said = |e: CellError| e.to_string();
        assert_eq!(
            said(CellError::NotStarted {
                host: None,
                said: "bad flag".into()
            }),
            "server did not start: bad flag"
        );
        assert_eq!(
            said(CellError::NotStarted {
                host: host(),
                said: "x".into()
            }),
            "server did not start on h1: x"
        );
        assert_eq!(
            said(CellError::Died {
                host: None,
                status: exit1,
                killed: vec![7, 8]
            }),
            "the server died during the cell (exit status: 1); its processes [7, 8] were killed"
        );
        assert_eq!(
            said(CellError::Died {
                host: host(),
                status: exit1,
                killed: Vec::new()
            }),
            "the server on h1 died during the cell (exit status: 1)"
        );
        assert_eq!(
            said(CellError::DidNotStop {
                host: None,
                within: Duration::from_secs(20)
            }),
            "the server did not stop within 20 s of SIGTERM (killed)"
        );
        assert_eq!(
            said(CellError::DidNotStop {
                host: host(),
                within: Duration::from_secs(25)
            }),
            "the server on h1 did not stop within 25 s"
        );
        assert_eq!(
            said(CellError::LeftBehindOn {
                host: "h1".into(),
                errors: vec!["other".into(), "guard: 2 processes left behind".into()]
            }),
            "on h1: guard: 2 processes left behind"
        );
        assert_eq!(
            said(CellError::NoStats {
                host: None,
                errors: Vec::new()
            }),
            "no stats line"
        );
        assert_eq!(
            said(CellError::NoStats {
                host: host(),
                errors: vec!["a".into(), "b".into()]
            }),
            "no stats line from the server on h1: a b"
        );
        assert_eq!(
            said(CellError::NoDocument {
                status: None,
                said: "oops".into()
            }),
            "the load generator failed (still running): oops"
        );
        assert_eq!(
            said(CellError::NoDocument {
                status: Some(exit1),
                said: String::new()
            }),
            "the load generator failed (exit status: 1): "
        );
    }
}
