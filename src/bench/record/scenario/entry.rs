//! A model entry `muxlab serve` would refuse ([`BadEntry`]): the entry as written and what its
//! command line, read as serve reads it, said.

/// A model entry (`"poll --trigger edge"`) refused: the entry, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.said())]
pub struct BadEntry {
    pub entry: String,
    pub fault: EntryFault,
}

/// Why a model entry is refused.
#[derive(Debug)]
pub enum EntryFault {
    /// Its first word is no model of muxlab's.
    NoModel,
    /// `--model` names no model (a flag of the entry gave another).
    UnknownModel { model: String },
    /// serve's command line refuses its flags (clap's words).
    Flags(clap::Error),
    /// serve refuses the flags for the model (serve's check's words).
    Refused(crate::server::Error),
    /// Its own `--idle-timeout` closes connections the experiment holds (`active`) before
    /// the hold ends.
    IdleUnderHold {
        idle: std::time::Duration,
        hold: std::time::Duration,
    },
}

/// The first line of what clap or a flag check said, its usage and help hints dropped.
fn first_line(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    line.trim().trim_start_matches("error: ").to_string()
}

impl BadEntry {
    /// What the entry's refusal says, without the entry.
    fn said(&self) -> String {
        match &self.fault {
            EntryFault::NoModel => format!("unknown model in '{}'", self.entry),
            EntryFault::UnknownModel { model } => format!("unknown model '{model}'"),
            EntryFault::Flags(e) => first_line(e),
            EntryFault::Refused(e) => first_line(e),
            EntryFault::IdleUnderHold { idle, hold } => format!(
                "--idle-timeout {} closes held connections before the experiment's hold of {} ends (timeout, warm-up and duration): give at least that, or leave it out and bench raises it",
                crate::units::format_duration(*idle),
                crate::units::format_duration(*hold)
            ),
        }
    }
}
