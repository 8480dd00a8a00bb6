//! What a cell targets ([`Target`]: a model, the same entry served by a baseline binary, a
//! peer, a server somebody else runs, or a paired experiment's A/A twin) and where a cell
//! stands in the run ([`At`]).

use std::net::SocketAddr;

use super::record::Cell;

/// How a baseline target's label ends.
pub const BASELINE: &str = "@baseline";

/// What a cell targets.
#[derive(Debug, Clone)]
pub enum Target {
    /// A muxlab model entry: name and serve flags.
    Model(String),
    /// The same entry served by another muxlab binary (`bench --baseline PATH`): before/after.
    Baseline(String, std::path::PathBuf),
    /// A production server started by the runner.
    Peer(String),
    /// A server somebody else runs (`--target host:port`).
    External(SocketAddr),
    /// A paired experiment's first model a second time, measured in the same rounds: the A/A
    /// figure (the smallest difference this machine resolves) comes from it.
    Twin(String),
}

impl Target {
    /// As its cells name it (a twin's cells name its model and say they are the twin).
    pub(crate) fn name(&self) -> String {
        match self {
            Target::Model(m) | Target::Twin(m) => m.clone(),
            Target::Baseline(m, _) => format!("{m} {BASELINE}"),
            Target::Peer(p) => p.clone(),
            Target::External(a) => format!("target {a}"),
        }
    }

    /// The muxlab model entry this target serves (a model, its A/A twin, or the baseline
    /// binary's same entry); `None` for a peer or a server somebody else runs.
    pub fn model_entry(&self) -> Option<&str> {
        match self {
            Target::Model(m) | Target::Twin(m) | Target::Baseline(m, _) => Some(m),
            Target::Peer(_) | Target::External(_) => None,
        }
    }

    /// As tables and progress lines show it.
    pub fn label(&self) -> String {
        self.cell("", At::default()).label()
    }

    /// A cell of experiment `x` against this target at `at`, not run yet.
    pub fn cell(&self, x: &str, at: At) -> Cell {
        let mut c = Cell::new(x, &self.name(), at.conns, at.repeat);
        c.twin = matches!(self, Target::Twin(_));
        c
    }
}

/// Where a cell stands in the run: its number (`rotate_sources` picks its source address by
/// it), its connection count and its repeat.
#[derive(Debug, Clone, Copy, Default)]
pub struct At {
    pub number: usize,
    pub conns: usize,
    pub repeat: usize,
}
